package transport

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// TestSubscribeBehindRetainedFlood: a subscription made while the broker
// is still sending the client a flood of retained QoS 1 messages gets
// through. mochi refuses a SUBSCRIBE whose packet id matches one of the
// messages it has in flight to the client (SUBACK 0x91); the session
// subscribes again, where before the refusal went unnoticed and the
// subscription was lost.
func TestSubscribeBehindRetainedFlood(t *testing.T) {
	// Room for the whole flood in each client's write queue: with mochi's
	// default, a client reading slowly on a loaded machine has some of it
	// dropped, the retained message the test waits for among them.
	b := startBroker(t, broker.BrokerOptions{MaxWritesPending: 1024})
	pub := connect(t, b, ClientOptions{ID: "_publisher", CleanSession: true})
	for i := range 200 {
		if err := Wait(ctxT(t), pub.Publish(fmt.Sprintf("flood/%d", i), 1, true, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := Wait(ctxT(t), pub.Publish("after/1", 1, true, "here")); err != nil {
		t.Fatal(err)
	}
	for round := range 30 {
		s, err := Connect(ctxT(t), ClientOptions{ID: fmt.Sprintf("sub-%d", round), Broker: "mem://", CleanSession: true}, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Subscribe(ctxT(t), "flood/+", 1, func(string, []byte) {}); err != nil {
			t.Fatal(err)
		}
		got := make(chan struct{}, 1)
		if err := s.Subscribe(ctxT(t), "after/+", 1, func(string, []byte) {
			select {
			case got <- struct{}{}:
			default:
			}
		}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		select {
		case <-got:
		case <-time.After(patience):
			t.Fatalf("round %d: the subscription made behind the flood never got its retained message (broker drops: %d)", round, b.Stats().PublishDropped)
		}
		s.Close(true)
	}
}
