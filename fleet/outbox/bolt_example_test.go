package outbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// A leader's outbox: a command is put in a bbolt file, where it survives a
// crash, and a relay delivers it and acks it off the queue.
func ExampleOpenBolt() {
	dir, _ := os.MkdirTemp("", "outbox-example")
	defer os.RemoveAll(dir)
	st, err := outbox.OpenBolt(filepath.Join(dir, "leader.db"), outbox.Options{Durability: outbox.Batch})
	if err != nil {
		fmt.Println(err) // names the file and what to do
		return
	}
	defer st.Close()

	ctx, cancel := context.WithCancel(context.Background())
	st.Enqueue(ctx, outbox.Message{Receiver: "w-17", Kind: "config", Payload: []byte("v3"),
		Key: "config", Seq: 3, Conflict: outbox.Overwrite})

	delivered := make(chan struct{})
	deliver := outbox.DeliveryFunc(func(ctx context.Context, m outbox.Message) error {
		fmt.Println("deliver", m.Kind, string(m.Payload), "to", m.Receiver)
		close(delivered)
		return nil // the receiver's ack; a flow.Capacity error would be "full"
	})
	relay, _ := outbox.NewRelay(st, deliver, outbox.RelayOptions{})
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	<-delivered
	cancel()
	<-done // Run returns once what was delivered is settled
	s := st.Stats()
	fmt.Printf("queued %d, acked %d\n", s.Depth, s.Acked)
	// Output:
	// deliver config v3 to w-17
	// queued 0, acked 1
}
