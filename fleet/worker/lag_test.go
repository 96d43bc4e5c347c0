package worker_test

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestLags: a worker records, for each command, the time from its sent_ms
// to the worker's handler (delivery lag), and how late it completes it
// against its service time (service lag): 0 when its service timer fires
// as the time is up and the loop gets to it at once; when each step of the
// worker's loop takes longer than the service time (every reading of the
// clock costs time: a starved machine), at least a step late.
func TestLags(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		var service, delivery stats.Histogram
		clk := fleettest.NewCostlyClock(clock.NewFake(time.Unix(1_700_000_000, 0)))
		r := startRigOn(t, drv, worker.Config{Service: dist.Const(100 * time.Millisecond), ServiceLag: &service, DeliveryLag: &delivery}, clk.Fake, clk)
		pinged := func(n uint64) func() error {
			return func() error {
				return fleettest.Unless(r.w.Stats().Pings == n, "%d pings done; %s", r.w.Stats().Pings, r.seen())
			}
		}

		sent := r.clk.Now().Add(-3 * time.Second).UnixMilli()
		if ack := r.command(t, wire.Envelope{ID: "p1", Kind: wire.KindPing, SentMs: sent}); ack.Result != wire.ResultOK {
			t.Fatalf("ping answered %s", ack.Result)
		}
		if s := delivery.Snapshot(); s.Count != 1 || s.Sum != 3*time.Second {
			t.Fatalf("delivery lags: %d summing to %v; want one of 3s", s.Count, s.Sum)
		}
		fleettest.Advance(t, r.clk, 100*time.Millisecond, "the ping's service timer")
		fleettest.Eventually(t, 10*time.Second, "the first ping done", pinged(1))
		if s := service.Snapshot(); s.Count != 1 || s.Sum != 0 {
			t.Fatalf("on time: %d service lags summing to %v; want one of 0", s.Count, s.Sum)
		}

		// Each reading takes 300 ms, three times the service time: the loop's
		// own readings move the clock past the ping's due time, and the one it
		// completes the ping with adds 300 ms more.
		clk.SetCost(300 * time.Millisecond)
		r.command(t, wire.Envelope{ID: "p2", Kind: wire.KindPing})
		fleettest.Eventually(t, 10*time.Second, "the second ping done", pinged(2))
		clk.SetCost(0)
		if s := service.Snapshot(); s.Count != 2 || s.Sum < 300*time.Millisecond {
			t.Fatalf("starved: %d service lags summing to %v; want two, the second at least 300ms", s.Count, s.Sum)
		}
		if s := delivery.Snapshot(); s.Count != 1 {
			t.Fatalf("%d delivery lags after a ping without sent_ms; want still 1", s.Count)
		}
	})
}

// TestLagsAtOnce: a command shorter than a millisecond completes as the
// worker takes it, so it counts as on time.
func TestLagsAtOnce(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		var service stats.Histogram
		r := startRig(t, drv, worker.Config{Service: dist.Const(500 * time.Microsecond), ServiceLag: &service})
		r.command(t, wire.Envelope{ID: "p1", Kind: wire.KindPing})
		fleettest.Eventually(t, 10*time.Second, "the ping done", func() error {
			return fleettest.Unless(r.w.Stats().Pings == 1, "%s", r.seen())
		})
		if s := service.Snapshot(); s.Count != 1 || s.Max != 0 {
			t.Fatalf("%d service lags, max %v; want one of 0", s.Count, s.Max)
		}
	})
}
