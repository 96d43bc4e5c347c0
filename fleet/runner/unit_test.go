package runner

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

func TestNextVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.0.0", "1.0.1"}, {"2.9", "2.10"}, {"7", "8"}, {"2.0.0-rc", "2.0.0-rc.1"}, {"", ".1"}, {"v1.2.3", "v1.2.4"},
	} {
		if got := NextVersion(tc.in); got != tc.want {
			t.Errorf("NextVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNewRunnerRefuses: what cannot run is refused before anything
// starts, with an error that names the event.
func TestNewRunnerRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*scenario.Scenario)
		want string
	}{
		{"two actions", func(sc *scenario.Scenario) {
			sc.Timeline = []scenario.Event{{At: rtSec(1), Heal: &scenario.Targets{}, Crash: &scenario.Targets{}}}
		}, "timeline[0] (at 1s): want exactly one action"},
		{"no action", func(sc *scenario.Scenario) { sc.Timeline = []scenario.Event{{At: rtSec(1)}} }, "found 0"},
		{"unknown group", func(sc *scenario.Scenario) {
			sc.Timeline = []scenario.Event{{At: rtSec(2), Crash: &scenario.Targets{Workers: scenario.Selector{Group: "gw", Text: "group:gw"}}}}
		}, `timeline[0] (at 2s): workers "group:gw": no group "gw"`},
		{"after the end", func(sc *scenario.Scenario) { sc.Timeline = []scenario.Event{{At: rtSec(11), Speed: rtPtr(2.0)}} }, "after the end of the run"},
		{"bad kind", func(sc *scenario.Scenario) {
			sc.Timeline = []scenario.Event{{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2", Kind: "bios"}}}
		}, `deploy kind "bios": want firmware or config`},
		{"block mailbox", func(sc *scenario.Scenario) {
			sc.Fleet.Worker.Mailbox = &scenario.MailboxSpec{Capacity: 4, Policy: 3}
		}, "mailbox policy block"},
		{"no duration", func(sc *scenario.Scenario) { sc.Duration = 0 }, "duration 0s: must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := rtFleet(3, 10)
			tc.edit(sc)
			_, err := NewRunner(sc, RunOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewRunner = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestStateOf(t *testing.T) {
	r := &Runner{cut: make([]atomic.Bool, 2)}
	r.cut[1].Store(true)
	for _, tc := range []struct {
		s    worker.State
		cut  bool
		want result.WorkerState
	}{
		// A worker the run cut off is partitioned, whatever its session
		// still believes.
		{worker.State{Online: true, Capacity: 4, Version: "2"}, true, result.StatePartitioned},
		{worker.State{Online: false, Version: "2"}, false, result.StateOffline},
		{worker.State{Online: true, Depth: 4, Capacity: 4, Busy: true}, false, result.StateFull},
		{worker.State{Online: true, Depth: 1, Capacity: 4, Busy: true, Version: "2"}, false, result.StateBusy},
		{worker.State{Online: true, Capacity: 4, Version: "2"}, false, result.StateUpdated},
		{worker.State{Online: true, Capacity: 4, Version: "1"}, false, result.StateOnline},
	} {
		i := 0
		if tc.cut {
			i = 1
		}
		if got := r.stateOf(i, tc.s, "2"); got != tc.want {
			t.Errorf("stateOf(%+v) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestSamplerStops: the sampler takes a sample every sample_every of
// simulated time, each at its tick, and stops when told.
func TestSamplerStops(t *testing.T) {
	sc := rtFleet(3, 10)
	sc.SampleEvery = scenario.Duration(10 * time.Millisecond)
	r, err := NewRunner(sc, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	clk := make(chan error, 1)
	go func() { clk <- r.clk.Run(ctx) }()
	defer func() {
		cancel()
		<-clk
	}()
	r.startRunning()
	s := r.startSampler()
	fleettest.Eventually(t, 10*time.Second, "a few samples", func() error {
		r.mu.Lock()
		n := len(r.samples)
		r.mu.Unlock()
		return fleettest.Unless(n >= 3, "%d samples", n)
	})
	stopped := make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	fleettest.Receive(t, 10*time.Second, "the sampler to stop", stopped, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, smp := range r.samples {
		if want := 0.01 * float64(i); math.Abs(float64(smp.T)-want) > 1e-9 {
			t.Fatalf("sample %d at %vs, want %vs", i, smp.T, want)
		}
	}
}

// TestRelayResultDecreases: limit.decreases is the limiters' own count,
// summed over partitions and leader restarts, not the falls a limit
// history happens to show (two halvings between samples show as one).
func TestRelayResultDecreases(t *testing.T) {
	r := &Runner{sc: &scenario.Scenario{}}
	r.limits.init(10)
	t0 := time.Unix(0, 0)
	hist := []outbox.LimitSample{{At: t0, Limit: 10}, {At: t0.Add(time.Second), Limit: 2}}
	first := outbox.RelayStats{Partitions: []outbox.PartitionStats{
		{Limit: 2, Decreases: 2, LimitHistory: hist},
		{Limit: 10, Decreases: 0},
	}}
	second := outbox.RelayStats{Partitions: []outbox.PartitionStats{{Limit: 5, Decreases: 1}, {Limit: 5, Decreases: 1}}}
	r.limits.observe(0, first.Partitions)
	r.limits.observe(1, second.Partitions)
	got := r.relayResult(leaderTotals{all: []leader.Stats{{Relay: first}, {Relay: second}}}).Limit
	if got.Decreases != 4 || got.Min != 2 || got.Max != 10 {
		t.Fatalf("limit %+v: want 4 decreases (2 + 0 + 1 + 1), min 2, max 10", got)
	}
}
