package transport

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// TestSessionRoutesToDefaultHandler: subscriptions made with a nil handler
// deliver to the session's DefaultHandler (one handler for many topics, as
// a gateway routes for its devices); Unsubscribe stops one of them, and
// SendRetained leaves a retained message behind.
func TestSessionRoutesToDefaultHandler(t *testing.T) {
	b := startBroker(t, broker.BrokerOptions{})
	in := make(inbox, 8)
	s, err := Connect(ctxT(t), ClientOptions{ID: "gw", Broker: "mem://", CleanSession: true, DefaultHandler: in.handler}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(true)
	for _, f := range []string{"f/a/down", "f/b/down"} {
		if err := s.Subscribe(ctxT(t), f, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	pub := connect(t, b, ClientOptions{ID: "pub", CleanSession: true})
	publish(t, pub, "f/a/down", 1, "1")
	publish(t, pub, "f/b/down", 1, "2")
	for _, want := range []string{"f/a/down", "f/b/down"} {
		if m := in.next(t); m.Topic() != want {
			t.Fatalf("got %s, want %s", m.Topic(), want)
		}
	}
	if err := s.Unsubscribe("f/a/down"); err != nil {
		t.Fatal(err)
	}
	// The unsubscribe goes before this subscribe on the session, so once
	// the subscribe is answered the broker has dropped f/a/down.
	if err := s.Subscribe(ctxT(t), "f/c/down", 1, nil); err != nil {
		t.Fatal(err)
	}
	publish(t, pub, "f/a/down", 1, "3")
	publish(t, pub, "f/c/down", 1, "4")
	if m := in.next(t); m.Topic() != "f/c/down" {
		t.Fatalf("after unsubscribing f/a/down got %s %q", m.Topic(), m.Payload())
	}

	if err := s.SendRetained("f/a/status", 1, []byte("offline e1")); err != nil {
		t.Fatal(err)
	}
	kept := make(inbox, 1)
	reader := connect(t, b, ClientOptions{ID: "reader", CleanSession: true})
	// The retained message may need a moment to land: SendRetained does not
	// wait. A publish waited for after it on the same session orders it.
	if err := s.Publish(ctxT(t), "f/x", 1, false, []byte("sync")); err != nil {
		t.Fatal(err)
	}
	subscribe(t, reader, "f/a/status", 1, kept.handler)
	if m := kept.next(t); string(m.Payload()) != "offline e1" || !m.Retained() {
		t.Fatalf("retained %q (retained %v), want offline e1", m.Payload(), m.Retained())
	}
}
