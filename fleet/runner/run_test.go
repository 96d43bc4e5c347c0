package runner

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestBalanceCanFail: a message acked in the outbox file behind the
// leader's back (by another process while the leader is down after a
// crash) was never delivered: the run must say it lost one. This is the
// proof that Lost is a balance that can fail, not a restatement.
func TestBalanceCanFail(t *testing.T) {
	sc := rtFleet(40, 8)
	sc.Timeline = []scenario.Event{
		{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 10, WaveInterval: rtSec(2)}},
		{At: rtSec(2), LeaderCrash: &scenario.LeaderCrash{RestartAfter: rtSec(1)}},
	}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var stolen string
	r.testLeaderDown = func(path string) {
		// The waves after the first are due in the future: the intruder
		// reads the file from there.
		later := clock.NewFake(r.clk.Now().Add(time.Hour))
		st, err := outbox.OpenBolt(path, outbox.Options{Clock: later, Partitions: 4, Durability: outbox.None})
		if err != nil {
			t.Error(err)
			return
		}
		defer st.Close()
		// Take an update of the last wave (workers 30-39, due at 7s): one
		// no leader has tried yet. Hand the others back as they were.
		ctx := context.Background()
		for p := range 4 {
			msgs, err := st.Dequeue(ctx, p, 100)
			if err != nil {
				t.Error(err)
				return
			}
			for _, m := range msgs {
				if stolen == "" && m.Receiver >= scenario.WorkerID(30) {
					stolen = m.Receiver
					if err := st.Ack(ctx, m.ID); err != nil {
						t.Error(err)
					}
					continue
				}
				if err := st.Release(ctx, m.ID, m.SendAt); err != nil {
					t.Error(err)
				}
			}
		}
	}
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rtDump(t, rep)
	if stolen == "" {
		t.Fatal("found no due message to take from the file")
	}
	res := rep.Result
	if res.Lost != 1 || res.Commands.Lost != 1 {
		t.Errorf("lost %d (commands %d) after a message for %s was taken from the file, want 1", res.Lost, res.Commands.Lost, stolen)
	}
	if res.Workers.AtVersion["2.0.0"] != 39 || res.Deploys[0].Delivered != 39 {
		t.Errorf("%d workers at 2.0.0, %d delivered; want 39", res.Workers.AtVersion["2.0.0"], res.Deploys[0].Delivered)
	}
	if !slices.ContainsFunc(rep.Records, func(rec result.Record) bool { return rec.Kind == "warning" && strings.Contains(rec.Text, "lost 1") }) {
		t.Error("no warning about the loss in the records")
	}
}

// TestRunCancel: a run whose context ends stops cleanly — every goroutine
// gone (goleak, at the end of the package), the outbox file closed and its
// directory removed — and returns the partial report with Err set.
func TestRunCancel(t *testing.T) {
	sc := rtFleet(30, 600)
	sc.Timeline = []scenario.Event{{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 5, WaveInterval: rtSec(30)}}}
	dir := t.TempDir()
	r, err := NewRunner(sc, RunOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		rep *result.Report
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := r.Run(ctx)
		done <- out{rep, err}
	}()
	fleettest.Eventually(t, 30*time.Second, "run past its deploy", func() error {
		now := r.Snapshot().Now
		return fleettest.Unless(now > 3, "at %.1fs", now)
	})
	cancel()
	var o out
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !errors.Is(o.err, context.Canceled) || o.rep == nil || !strings.Contains(o.rep.Err, "canceled") {
		t.Fatalf("Run = %v, report error %q; want context.Canceled and a partial report", o.err, o.rep.Err)
	}
	res := o.rep.Result
	if res.Fleet.Count != 30 || res.Deploys[0].Delivered < 5 || len(o.rep.Samples) == 0 || res.Lost != 0 {
		t.Errorf("partial report: count %d, delivered %d, %d samples, lost %d", res.Fleet.Count, res.Deploys[0].Delivered, len(o.rep.Samples), res.Lost)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("the run's directory is left behind: %v %v", ents, err)
	}
	if lv := r.Snapshot(); lv.Phase != result.PhaseDone || lv.Report != o.rep {
		t.Errorf("after the run: phase %q, report %p; want done and %p", lv.Phase, lv.Report, o.rep)
	}
	if _, err := r.Run(context.Background()); !errors.Is(err, ErrRan) {
		t.Errorf("second Run = %v, want ErrRan", err)
	}
}

// TestSnapshotDuringRun reads Snapshot as fast as it can while a run goes
// through its phases (with -race: safe for concurrent use) and checks that
// every snapshot is consistent and that they move forward.
func TestSnapshotDuringRun(t *testing.T) {
	const n = 60
	sc := rtFleet(n, 10)
	sc.Fleet.Groups = []scenario.Group{{Name: "gw", Count: 6}}
	sc.Timeline = []scenario.Event{
		{At: rtSec(2), Deploy: &scenario.Deploy{Version: "2.0.0"}},
		{At: rtSec(5), Crash: &scenario.Targets{Workers: scenario.Selector{Group: "gw", Text: "group:gw"}}},
	}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir(), Variant: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	order := map[string]int{result.PhaseStarting: 0, result.PhaseRunning: 1, result.PhaseDraining: 2, result.PhaseDone: 3}
	var (
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		seen    = map[string]bool{}
		updated bool
		next    []string
	)
	wg.Go(func() {
		last := result.Live{Phase: result.PhaseStarting}
		// A snapshot every millisecond of wall time, as a dashboard takes
		// them ten times a second: a loop that never paused would keep
		// the process from ever settling, and simulated time from moving.
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			lv := r.Snapshot()
			switch {
			case len(lv.Workers) != n || len(lv.Groups) != n || lv.Groups[0] != "gw" || lv.Groups[n-1] != scenario.DefaultGroup:
				t.Errorf("snapshot: %d workers, %d groups", len(lv.Workers), len(lv.Groups))
			case order[lv.Phase] < order[last.Phase]:
				t.Errorf("phase went back from %s to %s", last.Phase, lv.Phase)
			case lv.Now < last.Now:
				t.Errorf("time went back from %v to %v", last.Now, lv.Now)
			case lv.Latest.T > lv.Now+0.001 || (len(lv.History) > 0 && lv.History[len(lv.History)-1].T != lv.Latest.T):
				t.Errorf("latest sample at %v, now %v", lv.Latest.T, lv.Now)
			case lv.Next != "" && lv.NextAt < last.NextAt:
				t.Errorf("next event went back from %v to %v", last.NextAt, lv.NextAt)
			case lv.Scenario != "test" || lv.Variant != "v1" || lv.Duration != 10:
				t.Errorf("snapshot names %q %q, duration %v", lv.Scenario, lv.Variant, lv.Duration)
			}
			seen[lv.Phase] = true
			if lv.Next != "" && (len(next) == 0 || next[len(next)-1] != lv.Next) {
				next = append(next, lv.Next)
			}
			if lv.Target == "2.0.0" && slices.Contains(lv.Workers, result.StateUpdated) {
				updated = true
			}
			last = lv
			if lv.Phase == result.PhaseDone {
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	rep, err := r.Run(t.Context())
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	rtNoLoss(t, rep)
	for _, p := range []string{result.PhaseRunning, result.PhaseDraining} {
		if !seen[p] {
			t.Errorf("no snapshot in phase %s", p)
		}
	}
	if !updated {
		t.Error("no snapshot showed an updated worker")
	}
	if len(next) != 2 || !strings.HasPrefix(next[0], "deploy 2.0.0") || !strings.HasPrefix(next[1], "crash 6 workers") {
		t.Errorf("next events seen: %q", next)
	}
	if lv := r.Snapshot(); lv.Phase != result.PhaseDone || lv.Report != rep || lv.Next != "" {
		t.Errorf("final snapshot: phase %s, next %q", lv.Phase, lv.Next)
	}
	// The clock a person reads stops with the run: the simulated time
	// run, drain included, not a clock still going while the summary is
	// on screen.
	end := rep.Result.Run.SimSeconds
	if end < simSec(sc.Duration.D()) {
		t.Fatalf("run.sim_seconds %v, shorter than the duration", end)
	}
	r.clk.SetSpeed(1000) // simulated time runs on, fast
	if lv := r.Snapshot(); lv.Now != end {
		t.Errorf("snapshot after the end at %v, want the run's end %v", lv.Now, end)
	}
	if now, dur, phase := r.Position(); now != end || dur != 10 || phase != result.PhaseDone {
		t.Errorf("position after the end: %v of %v, %s; want %v of 10, done", now, dur, phase, end)
	}
}

// TestControls: the dashboard's controls act on a running scenario and
// are recorded in the report.
func TestControls(t *testing.T) {
	sc := rtFleet(30, 120)
	sc.Speed = 10
	sc.Fleet.Worker.KeepAlive = rtPtr(rtSec(1))
	// The dashboard's ceiling: the controls below come while the run is
	// under way, at a person's pace.
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir(), Speed: sc.Speed})
	if err != nil {
		t.Fatal(err)
	}
	r.Partition(10) // not running yet: a warning
	done := make(chan *result.Report, 1)
	go func() {
		rep, err := r.Run(t.Context())
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	fleettest.Eventually(t, 30*time.Second, "running", func() error {
		l := r.Snapshot()
		return fleettest.Unless(l.Now > 1, "phase %q at %.1fs", l.Phase, l.Now)
	})
	r.Pause()
	if lv := r.Snapshot(); !lv.Paused {
		t.Error("paused, but the snapshot says not")
	}
	r.Resume()
	r.SetSpeed(20)
	r.SetSpeed(-1) // a warning
	r.Deploy("")
	fleettest.Eventually(t, 30*time.Second, "deploy 1.0.1 applied", func() error {
		s := r.Snapshot().Latest
		return fleettest.Unless(s.AtTarget == 30, "%d of 30 at the target, %d online", s.AtTarget, s.Online)
	})
	r.KillLeader()
	fleettest.Eventually(t, 30*time.Second, "leader back", func() error {
		lr, _ := r.current()
		if lr == nil {
			return errors.New("no leader running")
		}
		return fleettest.Unless(lr.n == 2, "leader start %d", lr.n)
	})
	r.Partition(20)
	// A partition is noticed at 1.5 keepalives, in simulated time.
	fleettest.Eventually(t, 30*time.Second, "partition noticed", func() error {
		on := r.Snapshot().Latest.Online
		return fleettest.Unless(on <= 24, "%d online", on)
	})
	r.Heal()
	r.SetSpeed(100) // the rest of the run, fast
	rep := <-done
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	var controls, warnings []string
	for _, rec := range rep.Records {
		switch rec.Kind {
		case "control":
			controls = append(controls, rec.Text)
		case "warning":
			warnings = append(warnings, rec.Text)
		}
	}
	want := []string{"pause", "resume", "speed 20", "deploy 1.0.1 to every worker", "kill the leader (restart from its outbox file)", "partition 20% (6 workers)", "heal every worker", "speed 100"}
	if !slices.Equal(controls, want) {
		t.Errorf("controls recorded:\n%q\nwant\n%q", controls, want)
	}
	if len(warnings) < 2 || !strings.Contains(warnings[0], "partition 10% ignored") || !strings.Contains(warnings[1], "speed -1 ignored") {
		t.Errorf("warnings: %q", warnings)
	}
	res := rep.Result
	if res.Workers.AtVersion["1.0.1"] != 30 || res.Run.LeaderRestarts != 1 || res.Run.Speed != 10 {
		t.Errorf("at 1.0.1 %d, restarts %d, speed %g; want 30, 1, 10 (the starting speed)", res.Workers.AtVersion["1.0.1"], res.Run.LeaderRestarts, res.Run.Speed)
	}
	if res.Workers.ConnectionsLost < 6 {
		t.Errorf("connections lost %d, want the 6 partitioned", res.Workers.ConnectionsLost)
	}
}
