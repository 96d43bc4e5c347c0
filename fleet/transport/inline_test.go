package transport

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// leaderLink is what the leader asks of its link, and what its owner
// does with it: the calls both kinds of link have.
type leaderLink interface {
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
	Send(topic string, qos byte, payload []byte) error
	Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error
	Unsubscribe(filter string) error
	Close(clean bool)
}

// linkKinds are the two links a leader may have: a paho session (an
// external broker, or the embedded one over mem://) and the inline link
// on the embedded broker. The tests below run on both.
var linkKinds = []struct {
	name string
	open func(t *testing.T, b *broker.Broker, will *Will) leaderLink
}{
	{"session", func(t *testing.T, b *broker.Broker, will *Will) leaderLink {
		o := leaderOpts()
		o.ID, o.Broker, o.Will = "leader-session", "mem://", will
		s, err := Connect(ctxT(t), o, b)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(true) })
		return s
	}},
	{"inline", func(t *testing.T, b *broker.Broker, will *Will) leaderLink {
		s, err := NewInline(b, InlineOptions{Will: will})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(true) })
		return s
	}},
}

// TestLinkRoundTrip: a command the link publishes reaches a worker at QoS
// 1, and the worker's ack reaches the link's handler, under the fleet's
// login and topic policy.
func TestLinkRoundTrip(t *testing.T) {
	for _, k := range linkKinds {
		t.Run(k.name, func(t *testing.T) {
			b := startBroker(t, broker.BrokerOptions{Auth: testAuth()})
			link := k.open(t, b, nil)
			acks := make(chan string, 1)
			if err := link.Subscribe(ctxT(t), testTopics.AllUp(), 0, func(topic string, p []byte) { acks <- topic + " " + string(p) }); err != nil {
				t.Fatal(err)
			}
			w := connect(t, b, workerOpts("w-0001"))
			cmds := make(inbox, 1)
			subscribe(t, w, testTopics.Down("w-0001"), 1, cmds.handler)
			if err := link.Publish(ctxT(t), testTopics.Down("w-0001"), 1, false, []byte("cmd")); err != nil {
				t.Fatal(err)
			}
			m := cmds.next(t)
			if string(m.Payload()) != "cmd" || m.Qos() != 1 {
				t.Fatalf("the worker got %q at QoS %d; want cmd at QoS 1", m.Payload(), m.Qos())
			}
			publish(t, w, testTopics.Up("w-0001"), 1, "ack")
			if got, want := receive(t, acks), testTopics.Up("w-0001")+" ack"; got != want {
				t.Fatalf("the link got %q; want %q", got, want)
			}
			if err := link.Send(testTopics.Down("w-0001"), 1, []byte("reply")); err != nil {
				t.Fatal(err)
			}
			if got := string(cmds.next(t).Payload()); got != "reply" {
				t.Fatalf("the worker got %q; want reply", got)
			}
		})
	}
}

// TestLinkRetainedStatuses: a subscription to the statuses brings every
// worker's retained status (the leader learns the fleet from them).
func TestLinkRetainedStatuses(t *testing.T) {
	const n = 50
	for _, k := range linkKinds {
		t.Run(k.name, func(t *testing.T) {
			b := startBroker(t, broker.BrokerOptions{})
			w := connect(t, b, ClientOptions{ID: "announcer", CleanSession: true})
			for i := range n {
				if err := Wait(ctxT(t), w.Publish(testTopics.Status(fmt.Sprintf("w-%04d", i)), 1, true, "online 1")); err != nil {
					t.Fatal(err)
				}
			}
			link := k.open(t, b, nil)
			got := make(chan string, n)
			if err := link.Subscribe(ctxT(t), testTopics.AllStatus(), 1, func(topic string, _ []byte) { got <- topic }); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for len(seen) < n {
				seen[receive(t, got)] = true
			}
		})
	}
}

// TestLinkWill: a link that dies without a goodbye leaves the will
// (offline, retained) for the statuses' readers, now and later; a clean
// close leaves none. Without it, a crashed leader stayed online.
func TestLinkWill(t *testing.T) {
	for _, k := range linkKinds {
		for _, clean := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/clean=%v", k.name, clean), func(t *testing.T) {
				b := startBroker(t, broker.BrokerOptions{Auth: testAuth()})
				link := k.open(t, b, LeaderWill(testTopics))
				watcher := connect(t, b, leaderOpts())
				live := make(inbox, 4)
				subscribe(t, watcher, testTopics.LeaderStatus(), 1, live.handler)
				if err := link.Publish(ctxT(t), testTopics.LeaderStatus(), 1, true, []byte(wire.StatusOnline)); err != nil {
					t.Fatal(err)
				}
				if got := string(live.next(t).Payload()); got != wire.StatusOnline {
					t.Fatalf("leader status %q, want online", got)
				}
				link.Close(clean)
				if clean {
					// Something after the close, to show nothing came before it.
					publish(t, watcher, testTopics.LeaderStatus(), 1, "marker")
					if got := live.nextOther(t, wire.StatusOnline); got != "marker" {
						t.Fatalf("after a clean close: %q; want no will", got)
					}
					return
				}
				if got := live.nextOther(t, wire.StatusOnline); got != wire.StatusOffline {
					t.Fatalf("after the link died: %q, want offline", got)
				}
				late := connect(t, b, ClientOptions{ID: "late-reader", Username: wire.LeaderUsername, Password: "leader-pw", CleanSession: true})
				in := make(inbox, 4)
				subscribe(t, late, testTopics.LeaderStatus(), 1, in.handler)
				if got := string(in.next(t).Payload()); got != wire.StatusOffline {
					t.Fatalf("retained leader status %q, want offline", got)
				}
			})
		}
	}
}

// TestLinkClosed: once Close has returned, no handler runs and a publish
// fails, on either link.
func TestLinkClosed(t *testing.T) {
	for _, k := range linkKinds {
		t.Run(k.name, func(t *testing.T) {
			b := startBroker(t, broker.BrokerOptions{})
			link := k.open(t, b, nil)
			var after atomic.Bool
			var closed atomic.Bool
			if err := link.Subscribe(ctxT(t), testTopics.AllUp(), 0, func(string, []byte) {
				if closed.Load() {
					after.Store(true)
				}
			}); err != nil {
				t.Fatal(err)
			}
			link.Close(true)
			closed.Store(true)
			w := connect(t, b, ClientOptions{ID: "w-0001", CleanSession: true})
			publish(t, w, testTopics.Up("w-0001"), 1, "late")
			if err := link.Publish(ctxT(t), testTopics.Down("w-0001"), 1, false, []byte("x")); err == nil {
				t.Fatal("Publish after Close: nil error")
			}
			// The broker has handled the worker's publish (its PUBACK came
			// back) and with it any delivery to the link.
			if after.Load() {
				t.Fatal("a handler ran after Close returned")
			}
		})
	}
}

// TestLinkHandlersOneAtATime: messages from many publishers at once reach
// the link's handlers one at a time, as on a session's one delivery
// goroutine: the leader decides and applies a status without a lock
// between. Without the link's delivery lock, the inline link ran them
// concurrently, in the publishers' goroutines.
func TestLinkHandlersOneAtATime(t *testing.T) {
	const workers, each = 8, 200
	for _, k := range linkKinds {
		t.Run(k.name, func(t *testing.T) {
			b := startBroker(t, broker.BrokerOptions{})
			link := k.open(t, b, nil)
			var running, overlaps, got atomic.Int64
			done := make(chan struct{})
			h := func(string, []byte) {
				if running.Add(1) > 1 {
					overlaps.Add(1)
				}
				runtime.Gosched() // let another publisher's delivery in, if it may
				running.Add(-1)
				if got.Add(1) == workers*each {
					close(done)
				}
			}
			if err := link.Subscribe(ctxT(t), testTopics.AllUp(), 0, h); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range workers {
				id := fmt.Sprintf("w-%04d", i)
				w := connect(t, b, ClientOptions{ID: id, CleanSession: true})
				wg.Go(func() {
					for range each {
						w.Publish(testTopics.Up(id), 0, false, "x")
					}
				})
			}
			wg.Wait()
			receive(t, done)
			if n := overlaps.Load(); n > 0 {
				t.Fatalf("%d handler calls overlapped another", n)
			}
		})
	}
}

// TestLinkUnsubscribe: after Unsubscribe the filter's messages no longer
// reach the handler.
func TestLinkUnsubscribe(t *testing.T) {
	for _, k := range linkKinds {
		t.Run(k.name, func(t *testing.T) {
			b := startBroker(t, broker.BrokerOptions{})
			link := k.open(t, b, nil)
			got := make(chan string, 4)
			if err := link.Subscribe(ctxT(t), testTopics.AllUp(), 1, func(_ string, p []byte) { got <- string(p) }); err != nil {
				t.Fatal(err)
			}
			if err := link.Subscribe(ctxT(t), testTopics.AllStatus(), 1, func(_ string, p []byte) { got <- string(p) }); err != nil {
				t.Fatal(err)
			}
			w := connect(t, b, ClientOptions{ID: "w-0001", CleanSession: true})
			publish(t, w, testTopics.Up("w-0001"), 1, "before")
			if m := receive(t, got); m != "before" {
				t.Fatalf("got %q; want before", m)
			}
			if err := link.Unsubscribe(testTopics.AllUp()); err != nil {
				t.Fatal(err)
			}
			// A session's UNSUBSCRIBE is not waited for: a round trip on the
			// link shows the broker has it.
			if err := link.Publish(ctxT(t), "probe", 1, false, []byte("x")); err != nil {
				t.Fatal(err)
			}
			publish(t, w, testTopics.Up("w-0001"), 1, "after")
			publish(t, w, testTopics.Status("w-0001"), 1, "marker")
			if m := receive(t, got); m != "marker" {
				t.Fatalf("got %q; want marker (nothing from the filter unsubscribed)", m)
			}
		})
	}
}

// TestNewInlineRefuses: a link without a broker, or with a will a session
// would refuse, is an error naming it.
func TestNewInlineRefuses(t *testing.T) {
	if _, err := NewInline(nil, InlineOptions{}); err == nil {
		t.Fatal("NewInline(nil): nil error")
	}
	b := startBroker(t, broker.BrokerOptions{})
	if _, err := NewInline(b, InlineOptions{Will: &Will{Topic: "x"}}); err == nil {
		t.Fatal("NewInline with an empty will: nil error")
	}
	link, err := NewInline(b, InlineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := link.Subscribe(ctxT(t), "a/#/b", 1, func(string, []byte) {}); err == nil {
		t.Fatal("Subscribe to a/#/b: nil error")
	}
	if err := link.Subscribe(ctxT(t), "a/#", 1, nil); err == nil {
		t.Fatal("Subscribe with a nil handler: nil error")
	}
	if err := link.Publish(ctxT(t), "a/+", 1, false, nil); err == nil {
		t.Fatal("Publish to a/+: nil error")
	}
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	ctx := ctxT(t)
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatal("nothing arrived within the patience")
		var zero T
		return zero
	}
}
