package leader_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestServiceLag: the leader records how late it completes each message
// against its schedule (the previous service's end or the message's
// arrival, whichever is later, plus the service time). On time it is 0.
// When each step of the leader takes longer than the service time (every
// reading of the clock costs time: a starved machine) it is late by the
// difference; when its sleep wakes late, by how late.
func TestServiceLag(t *testing.T) {
	var lag stats.Histogram
	clk := fleettest.NewCostlyClock(clock.NewFake(time.Unix(1_700_000_000, 0)))
	r := startLeaderOn(t, leader.Config{Service: dist.Const(100 * time.Millisecond), HeartbeatInterval: time.Hour, ServiceLag: &lag}, clk.Fake, clk)
	recorded := func(what string, n uint64, sum time.Duration) {
		t.Helper()
		if s := lag.Snapshot(); s.Count != n || s.Sum != sum {
			t.Fatalf("%s: %d lags summing to %v, want %d summing to %v", what, s.Count, s.Sum, n, sum)
		}
	}

	// On time: the loop sleeps out the service time and wakes as it ends.
	r.request(t)
	r.waitServing(t, 100*time.Millisecond)
	r.clk.Advance(100 * time.Millisecond) // waitServing saw the timer armed
	fleettest.Eventually(t, 10*time.Second, "the first request served", r.served(1))
	recorded("on time", 1, 0)

	// Starved: the intake's reading (the arrival) and the loop's (taking
	// it) take 250 ms each, so the loop takes the message 150 ms after its
	// 100 ms service was up and completes it at once, 150 ms late.
	clk.SetCost(250 * time.Millisecond)
	r.request(t)
	fleettest.Eventually(t, 10*time.Second, "the second request served", r.served(2))
	clk.SetCost(0)
	recorded("starved", 2, 150*time.Millisecond)

	// A sleep that wakes late: readings take 30 ms; the loop sleeps out
	// the 70 ms left of the service time, and its reading on waking takes
	// 30 ms more.
	clk.SetCost(30 * time.Millisecond)
	r.request(t)
	r.waitServing(t, 70*time.Millisecond)
	r.clk.Advance(70 * time.Millisecond)
	fleettest.Eventually(t, 10*time.Second, "the third request served", r.served(3))
	clk.SetCost(0)
	recorded("woken late", 3, 180*time.Millisecond)
}

// TestDeliveryLag: the leader records, for each worker message that says
// when it was sent, the time from then to its handler; an ack, which does
// not say, and a request that does not either, are not counted.
func TestDeliveryLag(t *testing.T) {
	var lag stats.Histogram
	r := startLeader(t, leader.Config{HeartbeatInterval: time.Hour, DeliveryLag: &lag})
	now := r.clk.Now()
	for _, env := range []wire.Envelope{
		{ID: "s1", Kind: wire.KindRequest, SentMs: now.Add(-2 * time.Second).UnixMilli(), Body: wire.Body(wire.Request{What: "sync"})},
		{ID: "h1", Kind: wire.KindHeartbeat, Seq: 1, SentMs: now.Add(-500 * time.Millisecond).UnixMilli()},
		{Kind: wire.KindAck, Ref: "m1", Result: wire.ResultOK},
		{ID: "s2", Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: "sync"})},
	} {
		b, err := wire.Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up("w-00001"), b)
		if env.Kind == wire.KindRequest {
			fleettest.Receive(t, 10*time.Second, "the answer to "+env.ID, r.link.out, r.seen)
		}
	}
	if s := lag.Snapshot(); s.Count != 2 || s.Sum != 2500*time.Millisecond || s.Max != 2*time.Second {
		t.Fatalf("delivery lags: %d summing to %v, max %v; want 2 summing to 2.5s, max 2s", s.Count, s.Sum, s.Max)
	}
}

// BenchmarkLagRecord is what recording a lag adds to each message an actor
// handles: a reading of the scaled clock a scenario runs on and a Record
// into a histogram every goroutine shares, as a run's leader and workers
// do. BenchmarkLagClockRead, the reading alone, is its baseline.
func BenchmarkLagRecord(b *testing.B) {
	var h stats.Histogram
	clk := clock.NewScaled(time.Now(), 50)
	due := clk.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Record(clk.Now().Sub(due))
		}
	})
}

func BenchmarkLagClockRead(b *testing.B) {
	clk := clock.NewScaled(time.Now(), 50)
	var last atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var t time.Time
		for pb.Next() {
			t = clk.Now()
		}
		last.Store(t.UnixNano())
	})
}
