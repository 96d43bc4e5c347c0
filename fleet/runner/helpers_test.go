package runner

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

func rtPtr[T any](v T) *T { return &v }

func rtSec(s float64) scenario.Duration {
	return scenario.Duration(time.Duration(s * float64(time.Second)))
}

// small is a fleet of n workers, fast: speed 20, keepalive 2s (wall
// time; tests with partitions take 1s, the time a partition takes to be
// noticed), no fsync.
func rtFleet(n int, dur float64) *scenario.Scenario {
	sc := &scenario.Scenario{
		Name: "test", Seed: 7, Speed: 20, Duration: rtSec(dur), Drain: rtSec(60),
		Fleet: scenario.Fleet{Count: n, Worker: scenario.WorkerProfile{
			KeepAlive: rtPtr(scenario.Duration(2 * time.Second)),
			Heartbeat: rtPtr(rtSec(2)),
		}},
		Leader: scenario.LeaderSpec{HeartbeatInterval: rtSec(5), Outbox: scenario.OutboxSpec{Durability: "none"}},
	}
	sc.ApplyDefaults()
	return sc
}

// run runs sc and fails the test on an error.
func rtRun(t *testing.T, sc *scenario.Scenario) *result.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

// dump logs the result and the records when the test has failed.
func rtDump(t *testing.T, rep *result.Report) {
	t.Helper()
	if !t.Failed() && os.Getenv("SCENARIO_DUMP") == "" {
		return
	}
	b, _ := json.MarshalIndent(rep.Result, "", "  ")
	t.Logf("result: %s", b)
	for _, rec := range rep.Records {
		t.Logf("%7.2fs %-8s %s (lag %.3fs)", rec.T, rec.Kind, rec.Text, rec.LagSec)
	}
}

// noLoss checks the balances every run must keep.
func rtNoLoss(t *testing.T, rep *result.Report) {
	t.Helper()
	r := rep.Result
	if r.Lost != 0 || r.Commands.Lost != 0 || r.Telemetry.Lost != 0 {
		t.Errorf("lost %d (commands %d, telemetry %d), want 0", r.Lost, r.Commands.Lost, r.Telemetry.Lost)
	}
	if r.Workers.AppliedTwice != 0 {
		t.Errorf("%d workers applied a version twice", r.Workers.AppliedTwice)
	}
	if rep.Err != "" {
		t.Errorf("report error: %s", rep.Err)
	}
}

// keptUp reports whether rep's run kept to its schedule. Assertions on
// timing (what a sample shows at a given time, counts of timer-driven
// events) are checked only then, as the runner itself does with timing
// expectations: on a loaded machine (or under -race) a run that fell
// behind says so instead of failing them. So are the leader's view of who
// is online and what that decides (deliveries completing within the
// drain): a loaded machine misses 1s keepalives, and a worker that
// reconnects before the broker has dropped its old connection can have
// that connection's will ("offline") published after its new "online"
// (mochi sends the will of a taken-over session asynchronously), so the
// leader parks its commands until the run ends.
func rtKeptUp(t *testing.T, reps ...*result.Report) bool {
	t.Helper()
	for _, rep := range reps {
		if r := rep.Result.Run; !r.KeptUp {
			t.Logf("the run fell behind (%s): timing checks not judged", r.Behind())
			return false
		}
	}
	return true
}

// rtLoad parses a scenario file given as text.
func rtLoad(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}
