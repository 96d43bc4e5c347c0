package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// RunOptions configures a Runner. Every zero field takes the default noted.
type RunOptions struct {
	// Dir is where the run makes its temporary directory (os.MkdirTemp)
	// for the leader's bbolt file when the scenario gives no
	// leader.outbox.path. The directory is removed after the run. Default:
	// the system's temporary directory.
	Dir string
	// Logger receives the run's events, controls and warnings. Default:
	// discard.
	Logger *slog.Logger
	// LagThreshold is how far behind its schedule (simulated time) the run
	// may fall and still count as having kept up: Result.Run.KeptUp is
	// false when the 99th percentile of any of three lags passes it — the
	// timer lag (timeline events and sample ticks firing late), the
	// service lag (the leader's and the workers' loops completing what
	// they serve later than their service times allow) and the delivery
	// lag (publish to handler). One threshold for the three, as each is
	// time the run's timings were stretched by. Default: max(1s, 2% of
	// the duration). The p99 rather than the maximum, so that one stall
	// (a GC pause, a leader restart) does not disqualify a run whose
	// timing was otherwise true; 2% so that a long scenario's timing
	// checks, which are in seconds to minutes, stay meaningful, and at
	// least 1s so that a short one is not judged on timer granularity.
	LagThreshold time.Duration
	// Variant names the sweep values of this run (Report.Variant, Live.Variant).
	Variant string
	// ConnectTimeout bounds the simulated time the runner waits, before
	// time 0, for the whole fleet to connect when the scenario has no
	// ramp. Past it the run starts anyway, with a warning. Default 2
	// minutes.
	ConnectTimeout time.Duration
	// Speed is the run's ceiling: at most this many simulated seconds per
	// wall second, for a person watching (the dashboard passes the
	// scenario's speed). 0: none, the run goes as fast as the process
	// settles. Either way the results are the same (see Runner).
	Speed float64
	// StallTimeout is how long of wall time the process may go without
	// settling, with nothing in it moving, before simulated time is
	// forced on (counted in run.forced_advances, which fails the run).
	// Default clock.DefaultStallTimeout.
	StallTimeout time.Duration
}

// Defaults for RunOptions.
const (
	DefaultConnectTimeout = 2 * time.Minute
	minLagThreshold       = time.Second
	lagThresholdShare     = 0.02
	liveHistory           = 300 // samples in Live.History
)

// Runner runs one scenario once on the real stack: the embedded broker
// (in-memory listener), a leader on a bbolt outbox, and one worker per
// fleet member with its own MQTT session, all on one virtual clock
// (clock.Virtual): simulated time moves to the next timer only once the
// whole process has settled, so the machine's speed and load change how
// long a run takes, never what it measures.
// Create it with NewRunner and start it with Run; Snapshot and the
// controls (Pause, Resume, SetSpeed, Partition, Heal, KillLeader, Deploy)
// are safe from any goroutine at any time, and each control is recorded
// in the report.
type Runner struct {
	sc        *scenario.Scenario
	o         RunOptions
	log       *slog.Logger
	clk       *clock.Virtual
	own       clock.Clock // clk as the runner's own loops arm timers on it (keyRunner)
	threshold time.Duration

	specs   []scenario.WorkerSpec
	groups  []string // group per worker index (Live.Groups)
	events  []timedEvent
	pool    *worker.Pool
	gwMu    sync.Mutex
	gwCut   map[string]bool // gateways the run partitioned, until it heals them
	workers []*worker.Worker
	broker  atomic.Pointer[broker.Broker] // set by Run before any worker dials
	disc    []atomic.Bool                 // workers the run disconnected (they need a Reconnect)
	// cut marks the workers the run partitioned, until it heals them: the
	// fleet grid shows them cut off at once, before their keepalive fails.
	cut []atomic.Bool

	// Histograms shared by every leader instance and every worker, so the
	// distributions cover the whole run across leader restarts (and so do
	// lag's service and delivery lags).
	leaderWait, hbWait, askRTT, workerWait stats.Histogram

	// Guarded by sampleMu: what the sampler saw last (the sampler and
	// the final sample at shutdown both take samples).
	sampleMu sync.Mutex
	lastWait stats.HistogramSnapshot
	waveSeen map[waveKey]waveState

	lead   leaderState
	limits limitTracker
	lag    lagMeter

	ran    atomic.Bool
	atZero chan struct{} // closed at simulated time 0

	bgMu     sync.Mutex
	bgCtx    context.Context // ends when the run shuts down; for control and deploy goroutines
	bg       sync.WaitGroup
	deploysN atomic.Int32  // deploys still enqueueing waves (wait_for_wave)
	poisoned atomic.Uint64 // poison commands enqueued
	jobs     jobsRun       // the jobs events' jobs (jobs.go)

	mu        sync.Mutex // guards the fields below
	phase     string
	t0        time.Duration // r.clk.Mono() at simulated time 0
	started   bool          // t0 is set
	endAt     time.Duration // simulated time at the run's end (shutdown)
	ended     bool          // endAt is set: snapshots show it as now
	records   []result.Record
	samples   []result.Sample
	target    string
	nextEvent int // index into events of the next timeline event to fire
	fired     int
	deploys   []*deployRun
	marks     map[time.Duration]*windowMark // the windows' edges, by scheduled time
	report    *result.Report
	// endWorkers is the fleet just before the run stopped it (Snapshot).
	endWorkers *workersAtEnd
	fail       context.CancelCauseFunc

	// testLeaderDown, if set, is called with the outbox file's path while
	// a crashed leader is down (tests: tamper with the file).
	testLeaderDown func(path string)
	// testLeaderConfig, if set, changes each leader's configuration before
	// it starts (tests: a leader on a machine that starves it).
	testLeaderConfig func(*leader.Config)
}

// NewRunner checks what it can of sc before anything runs — the fleet's
// layout, every selector of the timeline, every worker's configuration —
// and builds the workers (not yet connected). sc must have its defaults
// applied (Load and Parse do; a Scenario built in Go calls ApplyDefaults).
// Its simulated clock moves while Run runs; time 0 of the timeline is
// when Run has the fleet connected.
func NewRunner(sc *scenario.Scenario, o RunOptions) (*Runner, error) {
	if sc == nil {
		return nil, errors.New("runner: NewRunner: no scenario")
	}
	switch {
	case sc.Duration <= 0:
		return nil, fmt.Errorf("scenario %s: duration %v: must be positive", sc.Name, sc.Duration)
	case !(sc.Speed > 0) || math.IsInf(sc.Speed, 0):
		return nil, fmt.Errorf("scenario %s: speed %v: must be a positive number", sc.Name, sc.Speed)
	case !(o.Speed >= 0) || math.IsInf(o.Speed, 0):
		return nil, fmt.Errorf("runner: RunOptions.Speed %v: want 0 (no ceiling) or a positive number", o.Speed)
	case sc.SampleEvery <= 0 || sc.Drain <= 0:
		return nil, fmt.Errorf("scenario %s: sample_every and drain must be positive (defaults not applied?)", sc.Name)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	r := &Runner{sc: sc, o: o, log: o.Logger.With("scenario", sc.Name), phase: result.PhaseStarting, atZero: make(chan struct{})}
	r.threshold = o.LagThreshold
	if r.threshold <= 0 {
		r.threshold = max(minLagThreshold, time.Duration(float64(sc.Duration.D())*lagThresholdShare))
	}
	var err error
	if r.specs, err = sc.Workers(); err != nil {
		return nil, fmt.Errorf("scenario %s: fleet: %w", sc.Name, err)
	}
	r.groups = make([]string, len(r.specs))
	for i, ws := range r.specs {
		r.groups[i] = ws.Group
	}
	r.jobs.init(r)
	if r.events, err = r.planTimeline(); err != nil {
		return nil, err
	}
	// A whole second: the milliseconds the wire carries (sent_ms) then
	// fall at the same simulated moments on every run.
	r.clk = clock.NewVirtual(time.Now().Truncate(time.Second), clock.VirtualOptions{Speed: o.Speed, StallTimeout: o.StallTimeout})
	r.own = clock.Keyed(r.clk, keyRunner)
	if err := r.buildPool(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	r.disc = make([]atomic.Bool, len(r.workers))
	r.cut = make([]atomic.Bool, len(r.workers))
	r.gwCut = map[string]bool{}
	r.lead.init()
	r.limits.init(r.limitInitial())
	return r, nil
}

// Run runs sc once with options o: NewRunner, then Runner.Run.
func Run(ctx context.Context, sc *scenario.Scenario, o RunOptions) (*result.Report, error) {
	r, err := NewRunner(sc, o)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// ErrRan is returned by a second call of Run: a Runner runs once.
var ErrRan = errors.New("runner: this runner has already run")

// Run starts the stack, waits for the fleet, plays the timeline for the
// scenario's duration, drains (heals and reconnects every worker, then
// waits, at most sc.Drain of simulated time, until the outboxes and
// mailboxes are empty), computes the Result and stops everything in order:
// workers, leader, outbox, broker. It returns after everything it started
// has stopped and every file is closed.
//
// When ctx ends first the run stops the same way and returns the partial
// report, with Err set, and ctx's error. Any other error that stops the
// run (the broker or the outbox cannot start) is returned with the report
// as far as it got. A run that completed is judged (Report.Verdicts, from
// Judge) before Snapshot reports it done, so the dashboard shows the
// verdicts.
func (r *Runner) Run(ctx context.Context) (*result.Report, error) {
	if !r.ran.CompareAndSwap(false, true) {
		return nil, ErrRan
	}
	wallStart := time.Now()
	rep := &result.Report{Scenario: r.sc.Name, File: r.sc.File, Description: r.sc.Description, Variant: r.o.Variant, Started: wallStart}
	end, runErr := r.run(ctx)
	rep.Result = end.result
	rep.Result.Run.WallSeconds = time.Since(wallStart).Seconds()
	r.mu.Lock()
	rep.Records = r.records
	rep.Samples = r.samples
	r.mu.Unlock()
	if runErr != nil {
		rep.Err = runErr.Error()
	} else {
		rep.Verdicts = judge.Expectations(r.sc, rep.Result)
	}
	r.mu.Lock()
	r.phase, r.report = result.PhaseDone, rep
	r.mu.Unlock()
	return rep, runErr
}

// run does the work of Run; the returned end state holds the Result, as
// complete as the run got.
func (r *Runner) run(parent context.Context) (end endState, err error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	r.mu.Lock()
	r.fail = cancel
	r.mu.Unlock()
	dir, err := os.MkdirTemp(r.o.Dir, "fleetsim-run-*")
	if err != nil {
		return end, fmt.Errorf("scenario %s: temporary directory: %w", r.sc.Name, err)
	}
	defer os.RemoveAll(dir)
	// The clock moves from here until everything has stopped: stopping
	// waits on simulated time too (a clean leader stop settles what is in
	// flight).
	clkCtx, stopClock := context.WithCancel(context.Background())
	clkDone := make(chan struct{})
	go func() {
		defer close(clkDone)
		_ = r.clk.Run(clkCtx)
	}()
	defer func() {
		stopClock()
		<-clkDone
	}()
	// A clock stuck at one instant (a timer re-armed due at once, for
	// ever) would be a run that never ends: it fails instead.
	watch := goLoop(func(wctx context.Context) { r.watchClock(wctx) })
	defer watch.stop()
	path := r.sc.Leader.Outbox.Path
	if path == "" {
		path = filepath.Join(dir, "outbox.db")
	}
	st, err := r.startStack(ctx, path)
	if err != nil {
		return end, err
	}
	// From here on everything started is stopped by shutdown, whatever
	// happens.
	defer func() {
		end = r.shutdown(st)
		if err == nil && ctx.Err() != nil {
			err = context.Cause(ctx)
			if parent.Err() != nil {
				err = fmt.Errorf("scenario %s: stopped at %.1fs of simulated time: %w", r.sc.Name, r.simNow().Seconds(), parent.Err())
			}
		}
	}()
	if err := r.waitConnected(ctx); err != nil {
		return end, nil // ctx ended; the deferred shutdown reports it
	}
	r.startRunning()
	// One after another, each once the one before has done what it does
	// at time 0: the first sample, then the events at 0, then the
	// offline schedule.
	st.sampler = r.startSampler()
	r.settle(ctx)
	st.timeline = r.startTimeline()
	r.settle(ctx)
	st.offline = r.startOffline()
	if clock.Sleep(ctx, r.own, r.untilSim(r.sc.Duration.D())) != nil {
		return end, nil
	}
	st.offline.stop()
	r.finishFollowUps(st.timeline)
	r.drain(ctx)
	return end, nil
}

// watchClock fails the run, every second of wall time, if its clock is
// stuck at one instant (clock.Virtual.Stalled), until ctx ends.
func (r *Runner) watchClock(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if why := r.clk.Stalled(); why != "" {
			r.failRun(errors.New(why))
			return
		}
	}
}

// failRun ends the run with err (a leader that cannot be restarted).
func (r *Runner) failRun(err error) {
	r.warnf("the run fails: %v", err)
	r.mu.Lock()
	f := r.fail
	r.mu.Unlock()
	if f != nil {
		f(fmt.Errorf("scenario %s: %w", r.sc.Name, err))
	}
}

// startRunning fixes simulated time 0 and enters phase running.
func (r *Runner) startRunning() {
	r.mu.Lock()
	r.t0, r.started, r.phase = r.clk.Mono(), true, result.PhaseRunning
	r.mu.Unlock()
	close(r.atZero)
	r.lag.startSchedule()
	r.log.Info("running", "workers", len(r.workers), "duration", r.sc.Duration.D(), "ceiling", r.clk.Speed())
}

// simNow is the simulated time since time 0 (0 before it).
func (r *Runner) simNow() time.Duration {
	r.mu.Lock()
	t0, ok := r.t0, r.started
	r.mu.Unlock()
	if !ok {
		return 0
	}
	return r.clk.Mono() - t0
}

// WaitUntil waits until the run reaches simulated time at (since time
// 0), or until ctx ends (its error). It waits on the run's clock, so a
// caller that reads the run when it returns (a progress line at every
// tenth of the run) sees it exactly at that time, on every run; the run
// does not go past at until the caller has been woken. Call it only while
// the run runs, and end ctx when the run ends.
func (r *Runner) WaitUntil(ctx context.Context, at time.Duration) error {
	select {
	case <-r.atZero:
	case <-ctx.Done():
		return ctx.Err()
	}
	observer := clock.Keyed(r.clk, keyObserver)
	for {
		wait := r.untilSim(at)
		if wait <= 0 {
			return nil
		}
		if err := clock.Sleep(ctx, observer, wait); err != nil {
			return err
		}
	}
}

// untilSim is how long from now until simulated time at.
func (r *Runner) untilSim(at time.Duration) time.Duration { return at - r.simNow() }

func (r *Runner) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
	r.log.Info("phase", "phase", p, "t", r.simNow())
}

// record adds a Record at the current simulated time and logs it.
func (r *Runner) record(kind, text string, lag time.Duration) {
	now := r.simNow()
	r.mu.Lock()
	r.records = append(r.records, result.Record{T: simSec(now), Kind: kind, Text: text, LagSec: simSec(lag)})
	r.mu.Unlock()
	if kind == "warning" {
		r.log.Warn(text, "t", now)
	} else {
		r.log.Info(text, "kind", kind, "t", now, "lag", lag)
	}
}

// partition cuts worker i off the broker and marks it cut; heal ends it.
func (r *Runner) partition(i int) { r.cut[i].Store(true); r.workers[i].Partition() }
func (r *Runner) heal(i int)      { r.cut[i].Store(false); r.workers[i].Heal() }

// partitionGateway cuts a gateway's session off the broker and marks it
// cut; healGateway ends it.
func (r *Runner) partitionGateway(id string) {
	r.gwMu.Lock()
	r.gwCut[id] = true
	r.gwMu.Unlock()
	r.pool.Gateway(id).Partition()
}

func (r *Runner) healGateway(id string) {
	r.gwMu.Lock()
	delete(r.gwCut, id)
	r.gwMu.Unlock()
	r.pool.Gateway(id).Heal()
}

// eachGateway runs f once for each gateway the workers targets sit
// behind, in their order, letting the process settle after each.
func (r *Runner) eachGateway(targets []int, f func(id string)) func(context.Context, func(*timelineAction)) {
	return func(ctx context.Context, _ func(*timelineAction)) {
		seen := map[string]bool{}
		for _, i := range targets {
			if id := r.specs[i].Gateway; !seen[id] {
				seen[id] = true
				f(id)
				r.settle(ctx)
			}
		}
	}
}

// cutGateways returns the gateways partitioned and not healed, sorted.
func (r *Runner) cutGateways() []string {
	r.gwMu.Lock()
	defer r.gwMu.Unlock()
	return slices.Sorted(maps.Keys(r.gwCut))
}

func (r *Runner) warnf(format string, a ...any) { r.record("warning", fmt.Sprintf(format, a...), 0) }

// goBackground runs f in a goroutine the run owns: it is told to stop
// (its ctx ends) and waited for when the run shuts down. It reports false,
// and does not run f, once the run is shutting down.
func (r *Runner) goBackground(f func(ctx context.Context)) bool {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.bgCtx == nil || r.bgCtx.Err() != nil {
		return false
	}
	ctx := r.bgCtx
	r.bg.Go(func() { f(ctx) })
	return true
}

// settle waits until what the caller set off (a control to a worker) has
// run its course (clock.Virtual.Settle). An event's workers are told one
// after another, each once the one before has done what it was told, so
// that the run is the same every time.
func (r *Runner) settle(ctx context.Context) { _ = clock.Settle(ctx, r.own) }

// The owners of timers on a run's clock (clock.Keyed), in the order their
// timers fire when due at one instant. The leader, its relay, its outbox
// and the MQTT sessions arm theirs on the clock itself (key 0, first).
const (
	keyRunner   = 1 + iota // the runner's own loops: timeline, samples, offline periods, drain, deploys
	keyObserver            // callers of WaitUntil (the headless progress line)
	keyPool                // the worker pool's starts
	keyWorkers             // plus a worker's index (behind a gateway, its gateway's first device's)
)

func simSec(d time.Duration) result.Seconds { return result.Seconds(d.Seconds()) }
