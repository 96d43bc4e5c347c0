package broker

import (
	"fmt"
	"sync"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// A subscriber that stops reading, behind a one-slot write queue and a
// small connection buffer, loses messages; every one of them is counted,
// and what is not counted arrives: delivered + dropped == published.
func TestPublishDropsAreCountedExactly(t *testing.T) {
	const n = 300
	b := startBroker(t, BrokerOptions{MaxWritesPending: 1})
	pub := connect(t, b, transport.ClientOptions{ID: "pub", CleanSession: true})
	release := make(chan struct{})
	got := newCounter()
	slow := connect(t, b, transport.ClientOptions{ID: "slow", CleanSession: true, MemBuffer: 1024})
	subscribe(t, slow, "data", 0, func(paho.Client, paho.Message) {
		<-release // the first message blocks paho's router, then its reader
		got.add()
	})
	subscribe(t, slow, "fence", 0, func(paho.Client, paho.Message) { got.fence <- struct{}{} })

	for i := range n {
		publish(t, pub, "data", 0, fmt.Sprintf("message %03d with some padding to fill buffers", i))
	}
	// The broker handles pub's packets in order: once this PUBACK is back,
	// it has queued or dropped all n.
	publish(t, pub, "elsewhere", 1, "fence")
	dropped := b.Stats().PublishDropped
	if dropped == 0 || dropped >= n {
		t.Fatalf("dropped %d of %d; the test needs some of each", dropped, n)
	}
	got.expect(n - int64(dropped))
	close(release)
	got.wait(t, "slow")
	publish(t, pub, "fence", 0, "fence") // arrives after any straggler
	got.waitFence(t)
	t.Logf("%d delivered, %d dropped", got.count(), dropped)
	if d := got.count(); uint64(d)+dropped != n {
		t.Errorf("delivered %d + dropped %d != %d published", d, dropped, n)
	}
	if s := b.Stats(); s.PublishDropped != dropped || s.QosDropped != 0 || s.InflightDropped != 0 {
		t.Errorf("Stats changed after the fence: %+v (dropped was %d)", s, dropped)
	}
	if mochi := b.srv.Info.MessagesDropped; uint64(mochi) != dropped {
		t.Errorf("mochi counted %d dropped, the hook %d", mochi, dropped)
	}
}

// QoS 1 messages a clean-session client leaves unacknowledged are
// abandoned when it disconnects; each is counted once.
func TestQosDropsAreCountedExactly(t *testing.T) {
	const k = 25
	b, err := StartBroker(BrokerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pub := connect(t, b, transport.ClientOptions{ID: "pub", CleanSession: true})
	got := make(inbox, k)
	o := transport.ClientOptions{ID: "no-ack", CleanSession: true, ManualAck: true}
	sub, err := transport.NewClient(withMem(o), b)
	if err != nil {
		t.Fatal(err)
	}
	if err := transport.Wait(ctxT(t), sub.Connect()); err != nil {
		t.Fatal(err)
	}
	subscribe(t, sub, "cmd", 1, got.handler) // never calls Ack
	for i := range k {
		publish(t, pub, "cmd", 1, fmt.Sprint(i))
	}
	for range k {
		got.next(t)
	}
	sub.Disconnect(1000)
	pub.Disconnect(1000)
	if err := b.Close(ctxT(t)); err != nil { // every connection's goroutine has returned
		t.Fatal(err)
	}
	if s := b.Stats(); s.QosDropped != k || s.PublishDropped != 0 || s.ClientsConnected != 0 || s.Disconnects != 2 {
		t.Errorf("Stats = %+v; want QosDropped %d, no other drop, 2 disconnects", s, k)
	}
}

func withMem(o transport.ClientOptions) transport.ClientOptions {
	o.Broker = "mem://"
	return o
}

// Each in-memory connection gets its own broker write queue: behind the
// same stalled reader, a subscriber with a deep queue loses nothing while
// one with the default single slot loses most messages.
func TestWriteQueuePerConnection(t *testing.T) {
	const n = 500
	b := startBroker(t, BrokerOptions{MaxWritesPending: 1})
	pub := connect(t, b, transport.ClientOptions{ID: "pub", CleanSession: true})
	release := make(chan struct{})
	deep, shallow := newCounter(), newCounter()
	for _, sub := range []struct {
		id    string
		queue int
		c     *counter
	}{{"deep", n, deep}, {"shallow", 0, shallow}} {
		c := connect(t, b, transport.ClientOptions{ID: sub.id, CleanSession: true, MemBuffer: 1024, WriteQueue: sub.queue})
		subscribe(t, c, "data", 0, func(paho.Client, paho.Message) {
			<-release
			sub.c.add()
		})
		subscribe(t, c, "fence", 0, func(paho.Client, paho.Message) { sub.c.fence <- struct{}{} })
	}
	for i := range n {
		publish(t, pub, "data", 0, fmt.Sprintf("message %03d with some padding to fill buffers", i))
	}
	publish(t, pub, "elsewhere", 1, "fence") // pub's n messages are queued or dropped
	dropped := b.Stats().PublishDropped
	if dropped == 0 || dropped >= n {
		t.Fatalf("%d dropped; want the shallow subscriber to lose some but not all", dropped)
	}
	deep.expect(n)
	shallow.expect(n - int64(dropped))
	close(release)
	deep.wait(t, "deep")
	shallow.wait(t, "shallow")
	publish(t, pub, "fence", 0, "fence") // arrives after any straggler
	deep.waitFence(t)
	shallow.waitFence(t)
	if d, s := deep.count(), shallow.count(); d != n || s != n-int64(dropped) {
		t.Errorf("deep got %d of %d, shallow %d of %d (%d dropped)", d, n, s, n, dropped)
	}
}

// counter counts deliveries and says when it reaches the expected count
// (which may be set before or after it is reached).
type counter struct {
	mu      sync.Mutex
	n, want int64 // want 0: not set yet
	reached chan struct{}
	fence   chan struct{}
}

func newCounter() *counter {
	return &counter{reached: make(chan struct{}), fence: make(chan struct{}, 1)}
}

func (c *counter) add()             { c.mu.Lock(); c.n++; c.check(); c.mu.Unlock() }
func (c *counter) expect(w int64)   { c.mu.Lock(); c.want = w; c.check(); c.mu.Unlock() }
func (c *counter) count() int64     { c.mu.Lock(); defer c.mu.Unlock(); return c.n }
func (c *counter) wantCount() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.want }

// check closes reached once; called with mu held.
func (c *counter) check() {
	if c.want > 0 && c.n >= c.want {
		select {
		case <-c.reached:
		default:
			close(c.reached)
		}
	}
}

func (c *counter) wait(t *testing.T, name string) {
	t.Helper()
	select {
	case <-c.reached:
	case <-ctxT(t).Done():
		t.Fatalf("%s: %d delivered, want %d", name, c.count(), c.wantCount())
	}
}

func (c *counter) waitFence(t *testing.T) {
	t.Helper()
	select {
	case <-c.fence:
	case <-ctxT(t).Done():
		t.Fatal("the fence did not arrive")
	}
}
