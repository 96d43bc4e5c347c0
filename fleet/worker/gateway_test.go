package worker_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestGatewayCarriesDevices: devices behind a gateway share its one MQTT
// session, are announced online via it, take commands and ack them; when
// they stop, each says offline via it, and the gateway says offline.
func TestGatewayCarriesDevices(t *testing.T) {
	r := startGatewayRig(t, 3, worker.Config{Service: dist.Const(time.Microsecond)}, nil)
	if c := r.b.Stats().ClientsConnected; c != 2 {
		t.Errorf("%d sessions at the broker, want 2: the leader's and the gateway's", c)
	}
	_, gw := r.status(t, 0, r.tp.GatewayStatus(gatewayID), "the gateway's online", func(s wire.Status) bool { return s.Online })
	if gw.Epoch == "" || gw.Via != "" {
		t.Errorf("gateway status %v, want online with an epoch", gw)
	}
	for _, id := range r.ids {
		r.status(t, 0, r.tp.Status(id), id+" online via the gateway", func(s wire.Status) bool {
			return s.Online && s.Via == gatewayID && s.Epoch != ""
		})
	}
	r.jobs(t, "j1")

	mark := r.recorded()
	gs := r.pool.Stats()
	if gs.Gateways != 1 || gs.GatewaysOnline != 1 {
		t.Errorf("pool stats: %d gateways, %d online; want 1, 1", gs.Gateways, gs.GatewaysOnline)
	}
	r.stop() // as the cleanup would; the leader's session stays to read the goodbyes
	for _, id := range r.ids {
		r.status(t, mark, r.tp.Status(id), id+" offline via the gateway", func(s wire.Status) bool {
			return !s.Online && s.Via == gatewayID
		})
	}
	r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway's goodbye", func(s wire.Status) bool {
		return s == wire.Status{Epoch: gw.Epoch}
	})
}

// TestGatewayDeviceCrash: a device that drops off its gateway without a
// word gets its will, "offline <epoch> via <gateway>", published by the
// gateway; the other devices stay online, and the device comes back.
func TestGatewayDeviceCrash(t *testing.T) {
	r := startGatewayRig(t, 3, worker.Config{Service: dist.Const(time.Microsecond)}, nil)
	victim := r.ids[1]
	_, online := r.status(t, 0, r.tp.Status(victim), victim+" online", func(s wire.Status) bool { return s.Online })
	mark := r.recorded()
	r.pool.Get(victim).Crash()
	r.status(t, mark, r.tp.Status(victim), victim+"'s will, played by the gateway", func(s wire.Status) bool {
		return s == wire.Status{Epoch: online.Epoch, Via: gatewayID}
	})
	if s := r.pool.Gateway(gatewayID).Stats(); s.Wills != 1 || !s.Online || s.ConnectionsLost != 0 {
		t.Errorf("gateway after a device crash: %+v; want 1 will, online, no connection lost", s)
	}
	r.waitOnline(t, victim+" back")
	r.status(t, mark, r.tp.Status(victim), victim+" online again", func(s wire.Status) bool {
		return s.Online && s.Via == gatewayID && s.Epoch != online.Epoch
	})
	r.mu.Lock()
	for _, s := range r.statuses[mark:] {
		if s.topic != r.tp.Status(victim) && strings.HasPrefix(s.payload, wire.StatusOffline) {
			t.Errorf("%s: %s after another device's crash", s.topic, s.payload)
		}
	}
	r.mu.Unlock()
	r.jobs(t, "after")
}

// TestGatewayPartition: a gateway cut off from the broker goes silent; the
// broker publishes its will, and every device behind it loses its session
// and cannot dial until the gateway is back. Healed, the gateway
// reconnects with a new epoch, announces itself before its devices, and
// they come back and take commands.
func TestGatewayPartition(t *testing.T) {
	cfg := worker.Config{
		Service: dist.Const(time.Microsecond), KeepAlive: time.Second,
		Reconnect: worker.Reconnect{Backoff: flow.Backoff{Base: 10 * time.Millisecond, Cap: 10 * time.Millisecond}},
	}
	r := startGatewayRig(t, 4, cfg, nil)
	_, first := r.status(t, 0, r.tp.GatewayStatus(gatewayID), "the gateway's online", func(s wire.Status) bool { return s.Online })
	g := r.pool.Gateway(gatewayID)
	mark := r.recorded()
	g.Partition()
	r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway's will, from the broker", func(s wire.Status) bool {
		return s == wire.Status{Epoch: first.Epoch}
	})
	fleettest.Eventually(t, 10*time.Second, "every device lost its session", func() error {
		ps := r.pool.Stats()
		return fleettest.Unless(ps.Online == 0 && ps.GatewaysOnline == 0 && ps.Total.ConnectionsLost == uint64(len(r.ids)),
			"%d online, %d gateways online, %d sessions lost", ps.Online, ps.GatewaysOnline, ps.Total.ConnectionsLost)
	})
	attempts := r.pool.Stats().Total.ConnectAttempts
	for range 5 { // devices retry, and fail: their gateway is gone
		r.clk.Advance(10 * time.Millisecond)
	}
	fleettest.Eventually(t, 10*time.Second, "devices retried", func() error {
		ps := r.pool.Stats()
		return fleettest.Unless(ps.Total.ConnectAttempts > attempts && ps.Online == 0, "%d attempts (%d before), %d online", ps.Total.ConnectAttempts, attempts, ps.Online)
	})
	if s := g.Stats(); s.DevicesLost != uint64(len(r.ids)) || s.Wills != 0 {
		t.Errorf("gateway stats %+v: want %d devices lost with it and no device wills (its own will speaks for them)", s, len(r.ids))
	}

	g.Heal()
	r.waitOnline(t, "devices back after the heal")
	at, second := r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway online again", func(s wire.Status) bool { return s.Online })
	if second.Epoch == first.Epoch {
		t.Errorf("the gateway came back with its old epoch %s", first.Epoch)
	}
	for _, id := range r.ids {
		i, _ := r.status(t, mark, r.tp.Status(id), id+" online again", func(s wire.Status) bool { return s.Online && s.Via == gatewayID })
		if i < at {
			t.Errorf("%s announced before its gateway", id)
		}
	}
	r.jobs(t, "healed")
}

// gatedClock is a fake clock whose Now blocks while its gate is shut: a
// worker loop on it stops dead at its next reading, as one starved of CPU.
type gatedClock struct {
	*clock.Fake
	mu   sync.Mutex
	gate chan struct{} // nil: open
}

func (c *gatedClock) shut() { c.mu.Lock(); c.gate = make(chan struct{}); c.mu.Unlock() }

func (c *gatedClock) open() {
	c.mu.Lock()
	if c.gate != nil {
		close(c.gate)
		c.gate = nil
	}
	c.mu.Unlock()
}

func (c *gatedClock) Now() time.Time {
	c.mu.Lock()
	g := c.gate
	c.mu.Unlock()
	if g != nil {
		<-g
	}
	return c.Fake.Now()
}

// TestGatewaySlowDeviceDoesNotBlockOthers: a device whose loop has
// stopped taking messages fills its queue; what the gateway has for it
// after that is dropped and counted, and the other devices on the same
// session still get their commands at once. (The stalled device reads a
// clock of its own, so it has a loop of its own: the gateway's session
// must not wait on one loop for another's devices.)
func TestGatewaySlowDeviceDoesNotBlockOthers(t *testing.T) {
	slow := &gatedClock{}
	r := startGatewayRig(t, 2, worker.Config{Service: dist.Const(time.Microsecond)}, func(i int, f *clock.Fake) clock.Clock {
		if i == 1 {
			slow.Fake = f
			return slow
		}
		return f
	})
	defer slow.open()
	slowID := r.ids[1]
	slow.shut()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const flood = 200 // far more than a worker's queue holds
	for i := range flood {
		b, err := wire.Encode(wire.Envelope{ID: fmt.Sprintf("f%d", i), Kind: wire.KindPing})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(ctx, r.tp.Down(slowID), 1, false, b); err != nil {
			t.Fatal(err)
		}
	}
	// The other device's command travels the same session behind the flood.
	b, err := wire.Encode(wire.Envelope{ID: "quick", Kind: wire.KindJob})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.lead.Publish(ctx, r.tp.Down(r.ids[0]), 1, false, b); err != nil {
		t.Fatal(err)
	}
	for {
		env := fleettest.Receive(t, 10*time.Second, "the other device's ack while one device is stalled", r.up, func() string {
			return fmt.Sprintf("broker %+v", r.b.Stats())
		})
		if env.Kind == wire.KindAck && env.Ref == "quick" {
			break
		}
	}
	s := r.pool.Get(slowID).Stats()
	slow.open()
	if s.DeliveriesDropped == 0 || s.DeliveriesDropped >= flood {
		t.Errorf("%d of %d deliveries to the stalled device dropped; want some, not all (its queue keeps the first)", s.DeliveriesDropped, flood)
	}
}

// TestGatewayDevicesHaveNoGoroutines: devices behind a gateway run on
// their pool's loops, a few goroutines for all of them, not one each; a
// hundred devices online and taking commands cost the process far fewer
// goroutines than a hundred.
func TestGatewayDevicesHaveNoGoroutines(t *testing.T) {
	const n = 100
	g0 := runtime.NumGoroutine()
	r := startGatewayRig(t, n, worker.Config{Service: dist.Const(time.Microsecond), Heartbeat: time.Second}, nil)
	r.jobs(t, "j")
	// The broker, the leader's session and the gateway's, and the loops.
	g := runtime.NumGoroutine() - g0
	t.Logf("%d devices online: %d more goroutines", n, g)
	if g >= n/2 {
		t.Errorf("%d devices online: %d more goroutines, want far fewer than one each", n, g)
	}
}
