package transport

import (
	"errors"
	"fmt"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// TestSubscribeNoWaitBehindRetainedFlood: a subscription a gateway makes
// for a device without waiting, while the broker pours retained QoS 1
// messages into the same session, gets through. mochi refuses a SUBSCRIBE
// whose packet id is one of the messages it has in flight to the client
// (SUBACK 0x91); the session reads the answer in the background and
// subscribes again, where before the device was left deaf.
func TestSubscribeNoWaitBehindRetainedFlood(t *testing.T) {
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
		got := make(chan struct{}, 1)
		o := ClientOptions{ID: fmt.Sprintf("gw-%d", round), Broker: "mem://", CleanSession: true,
			DefaultHandler: func(_ paho.Client, m paho.Message) {
				if m.Topic() == "after/1" {
					select {
					case got <- struct{}{}:
					default:
					}
				}
			}}
		s, err := Connect(ctxT(t), o, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Subscribe(ctxT(t), "flood/+", 1, func(string, []byte) {}); err != nil {
			t.Fatal(err)
		}
		refused := make(chan error, 1)
		if err := s.SubscribeNoWait("after/+", 1, func(err error) { refused <- err }); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case err := <-refused:
			t.Fatalf("round %d: %v", round, err)
		case <-time.After(patience):
			t.Fatalf("round %d: the subscription made behind the flood never got its retained message (broker drops: %d)", round, b.Stats().PublishDropped)
		}
		s.Close(true)
	}
}

// TestSubscribeNoWaitRefused: a subscription the broker refuses for good
// (its ACL) is reported to the caller's refused, after SubscribeNoWait
// returned without error.
func TestSubscribeNoWaitRefused(t *testing.T) {
	b := startBroker(t, broker.BrokerOptions{Auth: testAuth()})
	o := workerOpts("w-a")
	o.Broker = "mem://"
	s, err := Connect(ctxT(t), o, b)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(true)
	refused := make(chan error, 1)
	if err := s.SubscribeNoWait(testTopics.Down("w-b"), 1, func(err error) { refused <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-refused:
		if !errors.Is(err, ErrSubscribeRefused) {
			t.Fatalf("refused with %v, want ErrSubscribeRefused", err)
		}
	case <-time.After(patience):
		t.Fatal("the refusal was never reported")
	}
}
