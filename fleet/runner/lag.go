package runner

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// lagMeter measures how far the run falls behind its schedule, in
// simulated time, three ways:
//
//   - timer lag: how late the timeline's events and the sample ticks fire;
//   - service lag: how late the leader's and the workers' loops complete
//     what they serve against their service times (a loop the machine
//     starves falls further behind with each message, while a timer that
//     fires now and then may still be on time);
//   - delivery lag: from a message's publish (its sent_ms) to its
//     receiver's handler.
//
// The leader (every instance) and the workers record service and delivery
// lag into the histograms here, handed to them in their configs.
type lagMeter struct {
	timer             stats.Histogram
	service, delivery actorLags

	mu     sync.Mutex // guards the fields below
	last   time.Duration
	warned map[string]bool // what has been warned about, by lag
	// now holds each loop lag's p99 over the latest sample interval
	// (what "behind now" means for them), and prev the snapshots it
	// was measured from.
	now  [2]windowLag
	prev [2][2]stats.HistogramSnapshot
	// start holds the loop lags as they stood at time 0: what the fleet's
	// connect burst before it recorded is not the run's (no schedule ran
	// yet), and the run's lags are measured from there.
	start [2][2]stats.HistogramSnapshot
}

// startSchedule marks time 0: loop lags count from here.
func (m *lagMeter) startSchedule() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, l := range [2]*actorLags{&m.service, &m.delivery} {
		m.start[k] = [2]stats.HistogramSnapshot{l.leader.Snapshot(), l.workers.Snapshot()}
	}
	m.prev = m.start
}

// actorLags is one lag as the leader and the workers record it.
type actorLags struct{ leader, workers stats.Histogram }

// windowLag is a loop lag over a recent window: its p99 and whose it is.
type windowLag struct {
	p99   time.Duration
	actor string // "the leader" or "the workers"
}

var loopLagNames = [2]string{"service", "delivery"}

// observeLag records that what fired lag (simulated) after its time.
func (r *Runner) observeLag(lag time.Duration, what string) {
	lag = max(lag, 0)
	r.lag.timer.Record(lag)
	m := &r.lag
	m.mu.Lock()
	m.last = lag
	warn := lag > r.threshold && m.once("timer")
	m.mu.Unlock()
	if warn {
		r.warnf("behind schedule: %s fired %.2fs late (simulated; threshold %.2fs): the machine may not keep up at speed %g",
			what, lag.Seconds(), r.threshold.Seconds(), r.clk.Speed())
	}
}

// once reports whether kind has not been warned about yet, and marks it.
// The caller holds m.mu.
func (m *lagMeter) once(kind string) bool {
	if m.warned == nil {
		m.warned = map[string]bool{}
	}
	if m.warned[kind] {
		return false
	}
	m.warned[kind] = true
	return true
}

// observeLoops takes the service and delivery lags' p99 over the interval
// since the previous call (a sample's), warning the first time one passes
// the threshold.
func (r *Runner) observeLoops(interval time.Duration) {
	m := &r.lag
	var warns []string
	m.mu.Lock()
	for k, l := range [2]*actorLags{&m.service, &m.delivery} {
		ld, wk := l.leader.Snapshot(), l.workers.Snapshot()
		pl, pw := ld.Since(m.prev[k][0]).Quantile(0.99), wk.Since(m.prev[k][1]).Quantile(0.99)
		m.prev[k] = [2]stats.HistogramSnapshot{ld, wk}
		m.now[k] = windowLag{pl, "the leader"}
		if pw > pl {
			m.now[k] = windowLag{pw, "the workers"}
		}
		if m.now[k].p99 > r.threshold && m.once(loopLagNames[k]) {
			warns = append(warns, fmt.Sprintf("%s lag p99 at %s %.2fs over the last %.2fs", loopLagNames[k], m.now[k].actor, m.now[k].p99.Seconds(), interval.Seconds()))
		}
	}
	m.mu.Unlock()
	for _, w := range warns {
		r.warnf("behind schedule: %s (simulated; threshold %.2fs): the machine may not keep up at speed %g", w, r.threshold.Seconds(), r.clk.Speed())
	}
}

// lagNow returns how far the run is behind now — the latest timer lag or
// a loop lag's p99 over the latest sample interval, whichever is larger —
// whether that is past the threshold, and which lag it is ("" for the
// timer lag, "service" or "delivery").
func (r *Runner) lagNow() (lag time.Duration, behind bool, of string) {
	m := &r.lag
	m.mu.Lock()
	defer m.mu.Unlock()
	lag = m.last
	for k, w := range m.now {
		if w.p99 > lag {
			lag, of = w.p99, loopLagNames[k]
		}
	}
	return lag, lag > r.threshold, of
}

// lagResult fills in run's lags over the whole run and whether it kept up;
// a run that did not is told in a warning naming each lag that passed the
// threshold and whose it is.
func (r *Runner) lagResult(run *result.RunInfo) {
	m := &r.lag
	timer := m.timer.Snapshot()
	run.LagMax, run.LagP99 = simSec(timer.Max), simSec(timer.Quantile(0.99))
	run.LagThreshold = simSec(r.threshold)
	var behind []string
	if p := timer.Quantile(0.99); p > r.threshold {
		behind = append(behind, fmt.Sprintf("timer lag p99 %.2fs", p.Seconds()))
	}
	m.mu.Lock()
	start := m.start
	m.mu.Unlock()
	for k, l := range [2]*actorLags{&m.service, &m.delivery} {
		ld, wk := l.leader.Snapshot().Since(start[k][0]), l.workers.Snapshot().Since(start[k][1])
		pl, pw := ld.Quantile(0.99), wk.Quantile(0.99)
		p99, mx := simSec(max(pl, pw)), simSec(max(ld.Max, wk.Max))
		if k == 0 {
			run.ServiceLagP99, run.ServiceLagMax = p99, mx
		} else {
			run.DeliveryLagP99, run.DeliveryLagMax = p99, mx
		}
		for _, a := range []struct {
			who string
			p   time.Duration
		}{{"the leader", pl}, {"the workers", pw}} {
			if a.p > r.threshold {
				behind = append(behind, fmt.Sprintf("%s lag p99 at %s %.2fs", loopLagNames[k], a.who, a.p.Seconds()))
			}
		}
	}
	run.KeptUp = run.Behind() == ""
	if !run.KeptUp {
		r.warnf("the machine could not keep up at speed %g: %s > threshold %.2fs (simulated); timing expectations are not judged",
			run.Speed, strings.Join(behind, ", "), r.threshold.Seconds())
	}
}
