package broker

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// TestRetainedFloodAtQoS1: a QoS 1 subscription to more retained messages
// than mochi's default in-flight limit (8,192) — a restarted leader's to
// every worker's status — receives every one of them, and the broker
// refuses none.
func TestRetainedFloodAtQoS1(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes 9,000 retained messages")
	}
	const n = 9000
	b := startBroker(t, BrokerOptions{})
	pub, err := transport.Connect(ctxT(t), transport.ClientOptions{ID: "pub", Broker: "mem://", CleanSession: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(true) })
	for i := range n {
		if err := pub.Publish(ctxT(t), fmt.Sprintf("flood/w-%05d/status", i), 1, true, []byte("online")); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := transport.Connect(ctxT(t), transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true, WriteQueue: 4 * n}, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close(true) })
	var got atomic.Int64
	all := make(chan struct{})
	if err := sub.Subscribe(ctxT(t), "flood/+/status", 1, func(string, []byte) {
		if got.Add(1) == n {
			close(all)
		}
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-all:
	case <-time.After(patience):
		s := b.Stats()
		t.Fatalf("%d of %d received in %v; the broker refused %d for too many in flight and dropped %d", got.Load(), n, patience, s.InflightDropped, s.PublishDropped)
	}
	if s := b.Stats(); s.InflightDropped != 0 || s.PublishDropped != 0 {
		t.Errorf("broker %+v: want nothing refused or dropped", s)
	}
}
