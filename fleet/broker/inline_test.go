package broker

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestInlineRoundTrip: an inline publish reaches a connected subscriber
// at the QoS published, and a client's publish reaches an inline
// subscription, under the login and topic policy for the client.
func TestInlineRoundTrip(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: &Auth{LeaderPassword: "leader-pw", Secret: testSecret}})
	got := make(chan string, 1)
	unsub, err := b.InlineSubscribe(testTopics.AllUp(), func(topic string, p []byte) { got <- topic + " " + string(p) })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	w := connect(t, b, workerOpts("w-0001"))
	cmds := make(inbox, 1)
	subscribe(t, w, testTopics.Down("w-0001"), 1, cmds.handler)
	if err := b.InlinePublish(testTopics.Down("w-0001"), 1, false, []byte("cmd")); err != nil {
		t.Fatal(err)
	}
	if m := cmds.next(t); string(m.Payload()) != "cmd" || m.Qos() != 1 {
		t.Fatalf("the worker got %q at QoS %d; want cmd at QoS 1", m.Payload(), m.Qos())
	}
	publish(t, w, testTopics.Up("w-0001"), 1, "ack")
	if m, want := <-got, testTopics.Up("w-0001")+" ack"; m != want {
		t.Fatalf("inline subscription got %q; want %q", m, want)
	}
}

// TestInlineSubscribeRetainedRace: an inline wildcard subscription scans
// the retained store while clients publish retained statuses, as the
// leader's inline link does when it starts among its workers. mochi
// reads that store without its index's locks; under -race this was a
// data race inside the broker until the scan took the retained guard
// (see TestRetainedPublishesDuringWildcardSubscribes for a connection's).
func TestInlineSubscribeRetainedRace(t *testing.T) {
	const publishers, rounds = 8, 200
	b := startBroker(t, BrokerOptions{})
	defer retainedPublishers(t, b, publishers)()
	for round := range rounds {
		var n atomic.Int64
		unsub, err := b.InlineSubscribe("guard/+/status", func(string, []byte) { n.Add(1) })
		if err != nil {
			t.Fatal(err)
		}
		unsub()
		if n.Load() < publishers {
			t.Fatalf("round %d: %d retained statuses arrived while subscribing; want at least %d", round, n.Load(), publishers)
		}
	}
}

// TestInlineRefused: bad filters and topics, and calls on a closed
// broker, are errors that say so.
func TestInlineRefused(t *testing.T) {
	b, err := StartBroker(BrokerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.InlineSubscribe("a/#/b", func(string, []byte) {}); err == nil {
		t.Error("InlineSubscribe a/#/b: nil error")
	}
	if _, err := b.InlineSubscribe("a/#", nil); err == nil {
		t.Error("InlineSubscribe with a nil handler: nil error")
	}
	if err := b.InlinePublish("a/+", 0, false, nil); err == nil {
		t.Error("InlinePublish to a/+: nil error")
	}
	if err := b.InlinePublish("a", 3, false, nil); err == nil {
		t.Error("InlinePublish at QoS 3: nil error")
	}
	if err := b.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := b.InlinePublish("a", 0, false, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("InlinePublish after Close: %v; want ErrClosed", err)
	}
	if _, err := b.InlineSubscribe("a", func(string, []byte) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("InlineSubscribe after Close: %v; want ErrClosed", err)
	}
}
