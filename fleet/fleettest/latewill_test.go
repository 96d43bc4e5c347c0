package fleettest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// lingeringDialer dials real MQTT sessions. Its first session outlives the
// worker's interest in it: when the worker drops it without a clean
// disconnect, the connection stays open at the broker, as a partitioned
// connection does until its keepalive runs out, until the test kills it.
// It connects under another client id than the worker's, so that the
// worker's next connection does not take it over (a takeover would have the
// broker drop it, and publish its will, at a moment of the broker's
// choosing rather than the test's).
type lingeringDialer struct {
	mqtt worker.MQTTDialer

	mu    sync.Mutex
	dials []worker.DialOptions
	first worker.Session
}

func (d *lingeringDialer) Dial(ctx context.Context, o worker.DialOptions) (worker.Session, error) {
	d.mu.Lock()
	d.dials = append(d.dials, o)
	first := len(d.dials) == 1
	d.mu.Unlock()
	if !first {
		return d.mqtt.Dial(ctx, o)
	}
	o.ID += ".lingering"
	s, err := d.mqtt.Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.first = s
	d.mu.Unlock()
	return lingering{s}, nil
}

// kill cuts the first connection: the broker publishes its will now.
func (d *lingeringDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first != nil {
		d.first.Close(false)
		d.first = nil
	}
}

// wills returns the last will of each dial, in order.
func (d *lingeringDialer) wills(t *testing.T) []wire.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ws []wire.Status
	for _, o := range d.dials {
		s, err := wire.ParseStatus(o.WillTopic, o.WillPayload)
		if err != nil {
			t.Fatalf("will of dial %d: %v", len(ws)+1, err)
		}
		ws = append(ws, s)
	}
	return ws
}

// lingering is a session whose abrupt Close leaves the connection open.
type lingering struct{ worker.Session }

func (l lingering) Close(clean bool) {
	if clean {
		l.Session.Close(true)
	}
}

// TestLateWillOfReplacedConnection reproduces, every time, the race a fast
// reconnect can lose: the worker's new connection says "online", then the
// broker drops the old one and publishes its last will "offline". The
// will names the old connection's epoch, so the leader ignores it: the
// worker stays online in its view, and its commands are delivered rather
// than parked until it next reconnects.
func TestLateWillOfReplacedConnection(t *testing.T) {
	f := fleettest.StartFleet(t, 0, fleettest.Options{})
	d := &lingeringDialer{mqtt: worker.MQTTDialer{Broker: "mem://", Mem: f.Broker}}
	w, err := worker.New(worker.Config{ID: "w-late", Reconnect: worker.Reconnect{Immediate: true}}, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	t.Cleanup(func() { // before the fleet's: the worker leaves, then the broker stops
		cancel()
		<-done
		d.kill()
	})
	f.WaitOnline(t, 1)

	w.Crash() // the worker gives up on its connection; the broker does not
	fleettest.Eventually(t, 30*time.Second, "the leader sees the worker's new connection online", func() error {
		n := f.Leader.Stats().Reconnects // online on a new epoch while online on the old one
		return fleettest.Unless(n == 1, "%d reconnects seen", n)
	})
	d.kill() // the old connection dies now, after the new one said online
	fleettest.Eventually(t, 30*time.Second, "the leader takes the old connection's will (ignored or applied)", func() error {
		stale, off := f.Leader.Stats().StatusStale, f.Leader.Fleet().Offline
		return fleettest.Unless(stale == 1 || off == 1, "%d stale statuses, %d offline", stale, off)
	})
	if v := f.Leader.Fleet(); v.Online != 1 || v.Offline != 0 {
		t.Fatalf("after the late will the leader sees %d online, %d offline; want 1, 0", v.Online, v.Offline)
	}
	if ws := d.wills(t); len(ws) != 2 || ws[0].Online || ws[1].Online || ws[0].Epoch == "" || ws[0].Epoch == ws[1].Epoch {
		t.Fatalf("wills %v: want two offline statuses with distinct epochs", ws)
	}

	if _, err := f.Leader.Send(context.Background(), w.ID(), wire.KindJob, wire.Body(wire.Job{})); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 30*time.Second, "the job delivered to the worker", func() error {
		jobs := w.Stats().Jobs
		return fleettest.Unless(jobs == 1, "%d jobs done", jobs)
	})
	if s := f.Leader.Stats().Relay.Total(); s.OfflineSkips != 0 {
		t.Fatalf("the relay skipped the worker %d times as offline", s.OfflineSkips)
	}
}
