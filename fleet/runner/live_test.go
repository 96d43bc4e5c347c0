package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// The wait p99 over an interval forgets the waits before it; the run's
// p99 does not.
func TestWaitP99Interval(t *testing.T) {
	r := &Runner{}
	for range 100 {
		r.leaderWait.Record(time.Second)
	}
	if cum, iv := r.waitP99(); iv < 900*time.Millisecond || cum != iv {
		t.Fatalf("after slow waits: cumulative %v, interval %v; want both about 1s", cum, iv)
	}
	for range 1000 {
		r.leaderWait.Record(time.Millisecond)
	}
	cum, iv := r.waitP99()
	if iv > 2*time.Millisecond || cum < 900*time.Millisecond {
		t.Errorf("after fast waits: cumulative %v, interval %v; want about 1s and 1ms", cum, iv)
	}
	if _, iv := r.waitP99(); iv != 0 {
		t.Errorf("no waits since: interval %v, want 0", iv)
	}
}

// startRun runs sc in the background until it is running.
func startRun(t *testing.T, sc *scenario.Scenario) (*Runner, <-chan *result.Report, context.CancelFunc) {
	t.Helper()
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	done := make(chan *result.Report, 1)
	go func() {
		rep, _ := r.Run(ctx)
		done <- rep
	}()
	fleettest.Eventually(t, time.Minute, "the run to start", func() error {
		p := r.Snapshot().Phase
		return fleettest.Unless(p == result.PhaseRunning, "phase %s", p)
	})
	return r, done, cancel
}

// A partition shows in Snapshot at once, before any keepalive fails, and
// a heal ends it at once.
func TestSnapshotPartition(t *testing.T) {
	r, done, cancel := startRun(t, rtFleet(10, 30))
	defer func() { cancel(); <-done }()
	r.Partition(50)
	if n := count(r.Snapshot().Workers, result.StatePartitioned); n != 5 {
		t.Errorf("%d partitioned at once after partitioning 50%%, want 5", n)
	}
	if d := r.WorkerDetails(0, 10); len(d) != 10 || d[0].ID != scenario.WorkerID(0) || d[0].Capacity == 0 || count([]result.WorkerState{d[0].State, d[1].State}, result.StatePartitioned) != 1 {
		t.Errorf("details %+v", d)
	}
	r.Heal()
	if n := count(r.Snapshot().Workers, result.StatePartitioned); n != 0 {
		t.Errorf("%d partitioned after heal, want 0", n)
	}
}

// After the run, the fleet is shown as the run left it, not offline as
// its workers stop; the drain's start and end are recorded, and so are
// the deploy's waves as they start and are delivered.
func TestSnapshotEnd(t *testing.T) {
	sc := rtFleet(10, 3)
	sc.Timeline = []scenario.Event{{At: rtSec(0.2), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 5, WaveInterval: rtSec(0.5)}}}
	r, done, cancel := startRun(t, sc)
	defer cancel()
	rep := <-done
	defer rtDump(t, rep)
	l := r.Snapshot()
	if l.Phase != result.PhaseDone || count(l.Workers, result.StateUpdated) != 10 || l.AtTarget != 10 {
		t.Errorf("at the end: phase %s, workers %v, %d at the target; want all 10 updated", l.Phase, l.Workers, l.AtTarget)
	}
	var texts []string
	for _, rec := range rep.Records {
		texts = append(texts, rec.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"drain: every worker healed", "drain: done", "deploy 2.0.0: wave 1 of 2 started (5 workers)", "deploy 2.0.0: wave 2 of 2 started",
		"deploy 2.0.0: wave 1 of 2 delivered in", "deploy 2.0.0: wave 2 of 2 delivered in", "deploy 2.0.0: every target runs it"} {
		if strings.Count(all, want) != 1 {
			t.Errorf("records hold %q %d times, want once:\n%s", want, strings.Count(all, want), all)
		}
	}
}

func count(ws []result.WorkerState, s result.WorkerState) int {
	n := 0
	for _, w := range ws {
		if w == s {
			n++
		}
	}
	return n
}
