package runner

import (
	"slices"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// Snapshot returns the run as it is now, for the dashboard and the
// progress line. It is safe for concurrent use at any time (before, during
// and after Run) and cheap: it copies no sample and no record (the slices
// share memory with the run and must not be modified) and reads each
// worker's state at a glance, so ten calls a second with 10,000 workers
// cost a few milliseconds.
func (r *Runner) Snapshot() result.Live {
	lag, behind, lagOf := r.lagNow()
	r.mu.Lock()
	// Now is read under the lock that guards the samples, so it is never
	// before the latest sample's time.
	now := r.liveNow()
	lv := result.Live{
		Scenario: r.sc.Name, Variant: r.o.Variant, Seed: r.sc.Seed,
		Speed: r.clk.Speed(), Paused: r.clk.Paused(),
		Now: now, Duration: simSec(r.sc.Duration.D()),
		Phase: r.phase, Lag: simSec(lag), Behind: behind, LagOf: lagOf,
		Groups: r.groups, Records: r.records, Target: r.target, Report: r.report,
	}
	if !r.ended {
		lv.Rate = r.clk.Rate()
	}
	if r.nextEvent < len(r.events) && r.phase != result.PhaseDone {
		e := &r.events[r.nextEvent]
		lv.Next, lv.NextAt = e.text, simSec(e.at)
	}
	if n := len(r.samples); n > 0 {
		lv.Latest = r.samples[n-1]
		lv.History = r.samples[max(0, n-liveHistory):n:n]
	}
	target, end := r.target, r.endWorkers
	r.mu.Unlock()
	if end != nil {
		lv.Workers = slices.Clone(end.states)
		lv.AtTarget = end.atTarget
		return lv
	}
	lv.Workers = make([]result.WorkerState, len(r.workers))
	for i, w := range r.workers {
		st := w.State()
		lv.Workers[i] = r.stateOf(i, st, target)
		if target != "" && st.Version == target {
			lv.AtTarget++
		}
	}
	return lv
}

// Position is where the run is: its simulated time (as Snapshot's Now),
// the timeline's length and the phase. It is Snapshot without the fleet,
// the samples and the records, cheap enough to poll many times a second
// whatever the fleet's size.
func (r *Runner) Position() (now, duration result.Seconds, phase string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.liveNow(), simSec(r.sc.Duration.D()), r.phase
}

// liveNow is the simulated time a snapshot shows: 0 before time 0, and
// from the run's end on the time it ran (Result.Run.SimSeconds), not a
// clock that keeps going while the summary is on screen. r.mu is held.
func (r *Runner) liveNow() result.Seconds {
	switch {
	case r.ended:
		return simSec(r.endAt)
	case r.started:
		return simSec(r.clk.Mono() - r.t0)
	}
	return 0
}

// endState is the fleet as Snapshot shows it once the workers stop.
type workersAtEnd struct {
	states   []result.WorkerState
	atTarget int
}

// keepEndStates keeps the workers' states for Snapshot before the run
// stops them: the dashboard's last screen shows the fleet as the run left
// it, not every worker offline.
func (r *Runner) keepEndStates() {
	r.mu.Lock()
	target := r.target
	r.mu.Unlock()
	end := &workersAtEnd{states: make([]result.WorkerState, len(r.workers))}
	for i, w := range r.workers {
		st := w.State()
		end.states[i] = r.stateOf(i, st, target)
		if target != "" && st.Version == target {
			end.atTarget++
		}
	}
	r.mu.Lock()
	r.endWorkers = end
	r.mu.Unlock()
}

// WorkerDetails returns workers lo to hi-1 (clamped to the fleet) as
// the dashboard's drill-down shows them. It reads each worker's stats,
// so it is meant for a few dozen workers at a time. Safe for concurrent
// use.
func (r *Runner) WorkerDetails(lo, hi int) []result.WorkerDetail {
	lo, hi = max(0, lo), min(hi, len(r.workers))
	if lo >= hi {
		return nil
	}
	r.mu.Lock()
	target, end := r.target, r.endWorkers
	r.mu.Unlock()
	out := make([]result.WorkerDetail, 0, hi-lo)
	for i := lo; i < hi; i++ {
		w := r.workers[i]
		st, ws := w.State(), w.Stats()
		d := result.WorkerDetail{
			Index: i, ID: r.specs[i].ID, Group: r.specs[i].Group, Version: st.Version,
			State: r.stateOf(i, st, target), Depth: st.Depth, Capacity: st.Capacity,
			ConnectAttempts: ws.ConnectAttempts, MaxAttempt: ws.MaxAttempt,
		}
		if end != nil {
			d.State = end.states[i]
		}
		out = append(out, d)
	}
	return out
}

// stateOf is worker i's cell in the fleet grid: partitioned (the run cut
// it off), offline, else full, busy, updated (at the target version) or
// online, in that order.
func (r *Runner) stateOf(i int, s worker.State, target string) result.WorkerState {
	switch {
	case r.cut[i].Load():
		return result.StatePartitioned
	case !s.Online:
		return result.StateOffline
	case s.Depth >= s.Capacity:
		return result.StateFull
	case s.Busy:
		return result.StateBusy
	case target != "" && s.Version == target:
		return result.StateUpdated
	}
	return result.StateOnline
}
