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
// message) first waits cost of wall time, as a loop that gets the CPU once
// every cost would. The leader's other goroutines, its MQTT intake among
// them, and the runner's own timers read the clock at once: the machine
// keeps pace everywhere but in the loop.
type starvedClock struct {
	clock.Clock
	cost  time.Duration
	reads atomic.Int64 // readings the loop took
}

func (c *starvedClock) Now() time.Time {
	if calledByServiceLoop() {
		c.reads.Add(1)
		time.Sleep(c.cost) // not a wait for something: the CPU is elsewhere
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
// telemetry every 5s to a leader that serves each message in 100ms, on a
// machine that gives the leader's service loop the CPU once every 5ms of
// wall time: 5ms of wall time is 5ms simulated at speed 1, far within the
// 100ms a message may take, and 5s at speed 1000, fifty times more.
//
// The threshold is 5s, not the default 1s, so that a loaded machine's
// scheduling delays (a tenth of a second seen at speed 1) stay far inside
// it; starved at speed 1000, each message puts the loop 4.9s further
// behind, and thirty syncs alone make it hundreds of seconds.
func starvedRun(t *testing.T, speed float64) (*result.Report, *starvedClock) {
	t.Helper()
	sc := rtFleet(30, 4)
	sc.Speed = speed
	sc.Drain = rtSec(1200)
	sc.Fleet.Worker.Heartbeat = nil
	sc.Fleet.Worker.Telemetry = rtPtr(rtSec(5))
	svc := dist.Const(100 * time.Millisecond)
	sc.Leader.Service = &svc
	sc.Expect = []scenario.Expect{{Name: "a request waits little", Check: "leader.mailbox.wait.p99 <= 10"}, {Check: "lost == 0"}}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir(), LagThreshold: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	starved := &starvedClock{cost: 5 * time.Millisecond}
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

// TestStarvedLeaderFallsBehind: a leader whose service loop the machine
// starves cannot serve at the rate its speed demands. At speed 1000 the run
// says so — service lag past the threshold, kept_up false, the warning and
// the timing check's reason naming the service lag — whether or not its
// timers (sample ticks, on the runner's goroutine) fire on time: they do on
// a quiet machine (timer lag p99 1.2 to 3.8s against 5s, measured), which
// without the service lag would call the run kept up; under -race on a
// loaded one they may fall behind too. At speed 1, on the same starved
// machine, the run keeps up and its timing check is judged.
func TestStarvedLeaderFallsBehind(t *testing.T) {
	rep, _ := starvedRun(t, 1000)
	defer rtDump(t, rep)
	run := rep.Result.Run
	t.Logf("speed 1000: timer lag p99 %.3fs, service lag p99 %.3fs, delivery lag p99 %.3fs, threshold %gs",
		run.LagP99, run.ServiceLagP99, run.DeliveryLagP99, run.LagThreshold)
	if run.ServiceLagP99 <= run.LagThreshold || run.ServiceLagMax < run.ServiceLagP99 || run.KeptUp {
		t.Errorf("starved at speed 1000: service lag p99 %.3fs (max %.3fs), kept_up %v; want past the threshold %gs, not kept up",
			run.ServiceLagP99, run.ServiceLagMax, run.KeptUp, run.LagThreshold)
	}
	if v := rep.Verdicts[0]; v.Status != result.NotJudged || !strings.Contains(v.Detail, "service lag p99 ") || !strings.HasSuffix(v.Detail, "> threshold 5s at speed 1000") {
		t.Errorf("timing check on the starved run: %+v, want not judged, naming the service lag", v)
	}
	if v := rep.Verdicts[1]; v.Status == result.NotJudged {
		t.Errorf("count check on the starved run: %+v, want judged", v)
	}
	warned := false
	for _, rec := range rep.Records {
		warned = warned || rec.Kind == "warning" && strings.Contains(rec.Text, "could not keep up") && strings.Contains(rec.Text, "service lag p99 at the leader")
	}
	if !warned {
		t.Error("no warning that the leader's service lag passed the threshold")
	}

	rep, _ = starvedRun(t, 1)
	defer rtDump(t, rep)
	run = rep.Result.Run
	t.Logf("speed 1: timer lag p99 %.3fs, service lag p99 %.3fs, delivery lag p99 %.3fs", run.LagP99, run.ServiceLagP99, run.DeliveryLagP99)
	if !run.KeptUp || run.Behind() != "" {
		t.Errorf("starved at speed 1: kept_up %v (%s), want kept up", run.KeptUp, run.Behind())
	}
	for _, v := range rep.Verdicts {
		if v.Status == result.NotJudged {
			t.Errorf("check %q not judged at speed 1: %s", v.Check, v.Detail)
		}
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
