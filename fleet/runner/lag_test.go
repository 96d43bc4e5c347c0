package runner

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// starvedClock is the run's clock as a leader sees it on a machine that
// starves its service loop: each reading the loop takes (one or two per
// message) first burns cost of CPU, as a loop that must wait for the CPU
// does. The leader's other goroutines, and the runner's, read the clock
// at once.
type starvedClock struct {
	clock.Clock
	cost  time.Duration
	reads atomic.Int64 // readings the loop took
}

func (c *starvedClock) Now() time.Time {
	if calledByServiceLoop() {
		c.reads.Add(1)
		// Busy, not asleep: a goroutine that waits for the CPU runs (or
		// is ready to), and the process has not settled meanwhile.
		for start := time.Now(); time.Since(start) < c.cost; {
		}
	}
	return c.Clock.Now()
}

// calledByServiceLoop reports whether Now's caller is the leader's service
// loop.
func calledByServiceLoop() bool {
	var pc [1]uintptr
	if runtime.Callers(3, pc[:]) == 0 { // skip Callers, this function and Now
		return false
	}
	f, _ := runtime.CallersFrames(pc[:]).Next()
	return strings.HasSuffix(f.Function, "leader.(*Leader).serveRequests")
}

// starvedRun runs 30 workers that ask for a sync as they connect and send
// telemetry every 5s to a leader that serves each message in 100ms, its
// service loop starved by cost of CPU a message (0: not starved).
func starvedRun(t *testing.T, cost time.Duration) (*result.Report, *starvedClock) {
	t.Helper()
	sc := rtFleet(30, 20)
	sc.Drain = rtSec(1200)
	sc.Fleet.Worker.Heartbeat = nil
	sc.Fleet.Worker.Telemetry = rtPtr(rtSec(5))
	svc := dist.Const(100 * time.Millisecond)
	sc.Leader.Service = &svc
	sc.Expect = []scenario.Expect{{Name: "a request waits little", Check: "leader.mailbox.wait.p99 <= 10"}, {Check: "lost == 0"}}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	starved := &starvedClock{cost: cost}
	r.testLeaderConfig = func(c *leader.Config) {
		starved.Clock = c.Clock
		c.Clock = starved
	}
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if starved.reads.Load() == 0 {
		t.Fatal("the starved clock never saw the leader's service loop (is it still leader.(*Leader).serveRequests?)")
	}
	return rep, starved
}

// TestStarvedLeaderSameResult: a leader whose service loop the machine
// starves of CPU (5ms of it burnt a message, where the scaled clock of
// speed 1000 made that 5 simulated seconds) takes longer in wall time and
// measures the same: simulated time waits for the loop. Every number of
// the result is the same as the unstarved run's, timings included, and
// both are judged.
func TestStarvedLeaderSameResult(t *testing.T) {
	quiet, _ := starvedRun(t, 0)
	defer rtDump(t, quiet)
	starved, c := starvedRun(t, 5*time.Millisecond)
	defer rtDump(t, starved)
	t.Logf("starved: %d readings of the loop, %.2fs of wall time against %.2fs", c.reads.Load(), starved.Result.Run.WallSeconds, quiet.Result.Run.WallSeconds)
	if diff := result.Differences(&quiet.Result, &starved.Result); len(diff) > 0 {
		t.Errorf("the starved run measured otherwise than the quiet one:\n%s", strings.Join(diff, "\n"))
	}
	for _, rep := range []*result.Report{quiet, starved} {
		for _, v := range rep.Verdicts {
			if v.Status != result.Pass {
				t.Errorf("%s: %s: %s", v.Name, v.Status, v.Detail)
			}
		}
	}
	if starved.Result.Run.ForcedAdvances != 0 {
		t.Errorf("forced advances: %d", starved.Result.Run.ForcedAdvances)
	}
}

// TestLagMeter: the live "behind" reads the service and delivery lags
// over the latest sample interval as well as the latest timer lag, and
// names which; the run's result reads each lag over the whole run, and a
// run whose service or delivery lag passed the threshold did not keep up,
// with a warning naming the lag and whose it is.
func TestLagMeter(t *testing.T) {
	r, err := NewRunner(rtFleet(3, 10), RunOptions{LagThreshold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got result.Seconds, want float64) bool { return float64(got) >= want && float64(got) <= want*9/8 }
	r.observeLag(100*time.Millisecond, "a tick")
	if lv := r.Snapshot(); lv.Behind || lv.LagOf != "" || lv.Lag != 0.1 {
		t.Errorf("timer lag 0.1s: behind %v, lag %v of %q; want 0.1s of the timer, not behind", lv.Behind, lv.Lag, lv.LagOf)
	}
	for range 100 {
		r.lag.service.leader.Record(3 * time.Second)
	}
	r.observeLoops(time.Second)
	if lv := r.Snapshot(); !lv.Behind || lv.LagOf != "service" || !near(lv.Lag, 3) {
		t.Errorf("leader 3s late: behind %v, lag %v of %q; want behind by 3s of service", lv.Behind, lv.Lag, lv.LagOf)
	}
	r.observeLoops(time.Second) // an interval with nothing late
	if lv := r.Snapshot(); lv.Behind || lv.LagOf != "" {
		t.Errorf("an interval later: behind %v, lag %v of %q; want caught up", lv.Behind, lv.Lag, lv.LagOf)
	}
	for range 10 {
		r.lag.delivery.workers.Record(1500 * time.Millisecond)
		r.lag.delivery.leader.Record(time.Millisecond)
	}
	r.observeLoops(time.Second)
	if lv := r.Snapshot(); !lv.Behind || lv.LagOf != "delivery" || !near(lv.Lag, 1.5) {
		t.Errorf("commands 1.5s late: behind %v, lag %v of %q; want behind by 1.5s of delivery", lv.Behind, lv.Lag, lv.LagOf)
	}

	run := result.RunInfo{Speed: 20}
	r.lagResult(&run)
	if run.KeptUp || !near(run.ServiceLagP99, 3) || !near(run.DeliveryLagP99, 1.5) || run.LagP99 != 0.1 || run.LagThreshold != 1 {
		t.Errorf("result: %+v; want service 3s, delivery 1.5s, timer 0.1s, threshold 1s, not kept up", run)
	}
	var last string
	for _, rec := range r.records {
		last = rec.Text
	}
	for _, want := range []string{"could not keep up at speed 20", "service lag p99 at the leader 3.", "delivery lag p99 at the workers 1.", "> threshold 1.00s"} {
		if !strings.Contains(last, want) {
			t.Errorf("last warning %q does not say %q", last, want)
		}
	}

	quiet, err := NewRunner(rtFleet(3, 10), RunOptions{LagThreshold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	quiet.lag.service.workers.Record(900 * time.Millisecond)
	quiet.lag.delivery.leader.Record(time.Second)
	run = result.RunInfo{Speed: 20}
	quiet.lagResult(&run)
	if !run.KeptUp || len(quiet.records) != 0 {
		t.Errorf("lags within the threshold: kept_up %v, records %v; want kept up, no warning", run.KeptUp, quiet.records)
	}
}
