package outbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// A worker's heartbeats coalesce while it is offline: three overwrites of
// one key leave one message, the newest.
func ExampleMemory_overwrite() {
	ctx := context.Background()
	clk := clock.NewFake(time.Unix(0, 0))
	st, _ := outbox.NewMemory(outbox.Options{Clock: clk})
	for seq := uint64(1); seq <= 3; seq++ {
		r, _ := st.Enqueue(ctx, outbox.Message{
			Receiver: "leader", Kind: "heartbeat", Key: "hb/w-1", Seq: seq,
			Conflict: outbox.Overwrite, Payload: fmt.Appendf(nil, "seq=%d", seq),
		})
		fmt.Println(r[0].Outcome)
	}
	msgs, _ := st.Dequeue(ctx, 0, 10)
	fmt.Println(len(msgs), string(msgs[0].Payload))
	// Output:
	// appended
	// replaced
	// replaced
	// 1 seq=3
}

// A nacked message waits out its backoff; the receiver's next message waits
// behind it, another receiver's does not.
func ExampleMemory_Nack() {
	ctx := context.Background()
	clk := clock.NewFake(time.Unix(0, 0))
	st, _ := outbox.NewMemory(outbox.Options{Clock: clk})
	st.Enqueue(ctx,
		outbox.Message{Receiver: "w-1", Kind: "config", Payload: []byte("v1")},
		outbox.Message{Receiver: "w-1", Kind: "config", Payload: []byte("v2")},
		outbox.Message{Receiver: "w-2", Kind: "config", Payload: []byte("v1")},
	)
	msgs, _ := st.Dequeue(ctx, 0, 10)
	fmt.Println("due:", len(msgs))
	st.Nack(ctx, msgs[0].ID, time.Second, "mailbox full")
	st.Ack(ctx, msgs[1].ID)
	msgs, _ = st.Dequeue(ctx, 0, 10)
	fmt.Println("due during backoff:", len(msgs))
	clk.Advance(time.Second)
	msgs, _ = st.Dequeue(ctx, 0, 10)
	fmt.Println("due after backoff:", msgs[0].Receiver, string(msgs[0].Payload), "attempts", msgs[0].Attempts)
	// Output:
	// due: 2
	// due during backoff: 0
	// due after backoff: w-1 v1 attempts 1
}

// A relay's turn: settle what its deliveries answered and lease what is
// due next, in one call. A settlement for a message no longer leased gets
// its own ErrNotLeased; the rest go through.
func ExampleMemory_SettleAndDequeue() {
	ctx := context.Background()
	st, _ := outbox.NewMemory(outbox.Options{Clock: clock.NewFake(time.Unix(0, 0))})
	st.Enqueue(ctx,
		outbox.Message{Receiver: "w-1", Kind: "job", Payload: []byte("w-1 first")},
		outbox.Message{Receiver: "w-1", Kind: "job", Payload: []byte("w-1 second")},
		outbox.Message{Receiver: "w-2", Kind: "job", Payload: []byte("w-2 only")},
	)
	out, _ := st.Dequeue(ctx, 0, 10)
	res, next, _ := st.SettleAndDequeue(ctx, 0, 10,
		outbox.Settlement{ID: out[0].ID, Op: outbox.SettleAck},
		outbox.Settlement{ID: out[1].ID, Op: outbox.SettleNack, Delay: time.Minute, Cause: "busy"},
		outbox.Settlement{ID: out[0].ID, Op: outbox.SettleAck}, // twice
	)
	fmt.Println("ack:", res[0].Err)
	fmt.Println("nack:", res[1].Err, res[1].Nack)
	fmt.Println("ack again:", res[2].Err)
	for _, m := range next {
		fmt.Println("next:", string(m.Payload))
	}
	// Output:
	// ack: <nil>
	// nack: <nil> requeued
	// ack again: outbox: message not leased: id 1
	// next: w-1 second
}
