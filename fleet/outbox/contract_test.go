package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract, as a suite every implementation runs (bolt_test.go,
// memory_test.go). Each subtest opens a fresh store on its own fake clock.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// opener opens a fresh, empty store with o. It registers its own cleanup.
type opener func(t *testing.T, o outbox.Options) outbox.Store

var ctx = context.Background()

// env is one subtest's store and clock.
type env struct {
	t   *testing.T
	s   outbox.Store
	clk *clock.Fake
}

func newEnv(t *testing.T, open opener, o outbox.Options) *env {
	t.Helper()
	clk := clock.NewFake(t0)
	o.Clock = clk
	return &env{t: t, s: open(t, o), clk: clk}
}

func msg(receiver, payload string) outbox.Message {
	return outbox.Message{Receiver: receiver, Kind: "cmd", Payload: []byte(payload)}
}

func over(receiver, key string, seq uint64, payload string) outbox.Message {
	return outbox.Message{Receiver: receiver, Kind: "status", Payload: []byte(payload),
		Key: key, Seq: seq, Conflict: outbox.Overwrite}
}

func (e *env) enq(msgs ...outbox.Message) []outbox.Receipt {
	e.t.Helper()
	rs, err := e.s.Enqueue(ctx, msgs...)
	if err != nil {
		e.t.Fatalf("Enqueue: %v", err)
	}
	if len(rs) != len(msgs) {
		e.t.Fatalf("Enqueue: %d receipts for %d messages", len(rs), len(msgs))
	}
	return rs
}

func (e *env) deq(partition, max int) []outbox.Message {
	e.t.Helper()
	ms, err := e.s.Dequeue(ctx, partition, max)
	if err != nil {
		e.t.Fatalf("Dequeue(%d, %d): %v", partition, max, err)
	}
	return ms
}

// payloads of ms, in order.
func payloads(ms []outbox.Message) []string {
	var ps []string
	for _, m := range ms {
		ps = append(ps, string(m.Payload))
	}
	return ps
}

// want checks that the next Dequeue of partition 0 returns exactly these
// payloads, in this order.
func (e *env) want(max int, ps ...string) []outbox.Message {
	e.t.Helper()
	ms := e.deq(0, max)
	if got := payloads(ms); !slices.Equal(got, ps) {
		e.t.Fatalf("Dequeue = %q, want %q", got, ps)
	}
	return ms
}

// balanced checks the identity documented on Stats, for a store opened
// empty: every message enqueued or replayed is queued or was counted
// leaving exactly once.
func (e *env) balanced() outbox.Stats {
	e.t.Helper()
	st := e.s.Stats()
	in := st.Enqueued + st.Replayed
	out := st.Acked + st.Overwritten + st.Stale + st.Expired + st.DeadLettered + uint64(st.Depth)
	if in != out {
		e.t.Fatalf("Stats do not balance: enqueued %d + replayed %d = %d, but acked %d + overwritten %d + stale %d + expired %d + dead-lettered %d + depth %d = %d",
			st.Enqueued, st.Replayed, in, st.Acked, st.Overwritten, st.Stale, st.Expired, st.DeadLettered, st.Depth, out)
	}
	if dl := st.DeadLettered - st.Replayed - st.Purged; uint64(st.DeadLetters) != dl {
		e.t.Fatalf("dead letters %d, but dead-lettered %d - replayed %d - purged %d = %d", st.DeadLetters, st.DeadLettered, st.Replayed, st.Purged, dl)
	}
	return st
}

func (e *env) ack(ms ...outbox.Message) {
	e.t.Helper()
	for _, m := range ms {
		if err := e.s.Ack(ctx, m.ID); err != nil {
			e.t.Fatalf("Ack(%d %q): %v", m.ID, m.Payload, err)
		}
	}
}

func runContract(t *testing.T, open opener) {
	runOverwriteQueuedContract(t, open)
	runOverwriteContract(t, open)
	runParkContract(t, open)
	runSettleContract(t, open)
	runDeadContract(t, open)
	runLimitsContract(t, open)
	runConcurrencyContract(t, open)

	t.Run("per-receiver order, one in flight", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"))
		e.enq(msg("a", "a3"))
		m := e.want(10, "a1")
		e.want(10) // a1 in flight: a2 must wait
		e.ack(m...)
		m = e.want(10, "a2")
		e.ack(m...)
		e.ack(e.want(10, "a3")...)
		e.want(10)
	})

	t.Run("receipts and ids in enqueue order", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		rs := e.enq(msg("a", "1"), msg("b", "2"), msg("a", "3"))
		rs = append(rs, e.enq(msg("c", "4"))...)
		for i, r := range rs {
			if r.Outcome != outbox.Appended {
				t.Fatalf("receipt %d = %v, want appended", i, r.Outcome)
			}
			if i > 0 && r.ID <= rs[i-1].ID {
				t.Fatalf("ids %d then %d: not increasing", rs[i-1].ID, r.ID)
			}
		}
		ms := e.deq(0, 10)
		if len(ms) != 3 || ms[0].ID != rs[0].ID || ms[1].ID != rs[1].ID || ms[2].ID != rs[3].ID {
			t.Fatalf("Dequeue ids %v, receipts %v", ms, rs)
		}
		if m := ms[0]; m.Receiver != "a" || m.Kind != "cmd" || !m.CreatedAt.Equal(t0) || m.Attempts != 0 {
			t.Fatalf("message = %+v", m)
		}
	})

	t.Run("backing-off head holds its receiver only", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"), msg("b", "b1"), msg("b", "b2"))
		ms := e.want(10, "a1", "b1")
		if res, err := e.s.Nack(ctx, ms[0].ID, time.Minute, "offline"); err != nil || res != outbox.Requeued {
			t.Fatalf("Nack = %v, %v", res, err)
		}
		e.ack(ms[1])
		e.ack(e.want(10, "b2")...) // a1 backs off, b goes on
		e.want(10)                 // a2 waits behind a1
		e.clk.Advance(time.Minute - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		m := e.want(10, "a1")[0]
		if m.Attempts != 1 || m.LastError != "offline" || !m.SendAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after nack: attempts %d, last error %q, send at %v", m.Attempts, m.LastError, m.SendAt)
		}
		e.ack(m)
		e.want(10, "a2")
	})

	t.Run("due only, oldest SendAt first, at most max", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		at := func(r, p string, d time.Duration) outbox.Message {
			m := msg(r, p)
			m.SendAt = t0.Add(d)
			return m
		}
		e.enq(at("a", "a+3", 3*time.Second), at("b", "b+1", time.Second), at("c", "c+2", 2*time.Second),
			at("d", "d+10", 10*time.Second), at("e", "e-1", -time.Second))
		e.want(10, "e-1")
		e.clk.Advance(3 * time.Second)
		e.want(2, "b+1", "c+2")
		e.want(10, "a+3")
		e.clk.Advance(6 * time.Second)
		e.want(10)
	})

	t.Run("partitions", func(t *testing.T) {
		const n = 4
		e := newEnv(t, open, outbox.Options{Partitions: n})
		if e.s.Partitions() != n {
			t.Fatalf("Partitions = %d, want %d", e.s.Partitions(), n)
		}
		var all []outbox.Message
		for i := range 40 {
			all = append(all, msg(fmt.Sprintf("w-%d", i), fmt.Sprint(i)))
		}
		e.enq(all...)
		seen := 0
		for p := range n {
			for _, m := range e.deq(p, 100) {
				if got := outbox.PartitionOf(m.Receiver, n); got != p {
					t.Fatalf("partition %d returned %s, which is in partition %d", p, m.Receiver, got)
				}
				seen++
			}
		}
		if seen != len(all) {
			t.Fatalf("partitions returned %d messages, want %d", seen, len(all))
		}
	})

	t.Run("lease expires and the message is handed out again", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{LeaseTimeout: 10 * time.Second})
		e.enq(msg("a", "a1"), msg("a", "a2"))
		first := e.want(10, "a1")[0]
		e.clk.Advance(10*time.Second - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		again := e.want(10, "a1")[0]
		if again.ID != first.ID || again.Attempts != 0 {
			t.Fatalf("re-lease: id %d attempts %d, want id %d attempts 0", again.ID, again.Attempts, first.ID)
		}
		if st := e.s.Stats(); st.Leased != 1 || st.Depth != 2 {
			t.Fatalf("Stats: leased %d depth %d, want 1 and 2", st.Leased, st.Depth)
		}
		e.ack(again)
		if err := e.s.Ack(ctx, first.ID); !errors.Is(err, outbox.ErrNotLeased) {
			t.Fatalf("second Ack = %v, want ErrNotLeased", err)
		}
		e.want(10, "a2")
	})
}
