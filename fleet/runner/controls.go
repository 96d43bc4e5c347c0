package runner

import (
	"context"
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// The controls below are for the dashboard (and any caller): each is safe
// from any goroutine, returns at once (the leader's are carried out in the
// background) and is recorded in the report as a Record of kind "control",
// or, when it cannot apply now, of kind "warning".

// Pause stops simulated time: no timer fires, no event, no sample, until
// Resume.
func (r *Runner) Pause() {
	r.clk.Pause()
	r.record("control", "pause", 0)
}

// Resume restarts simulated time where Pause left it.
func (r *Runner) Resume() {
	r.clk.Resume()
	r.record("control", "resume", 0)
}

// SetSpeed changes the run's speed (simulated seconds per wall second)
// from now on; pending timers keep their simulated deadlines.
func (r *Runner) SetSpeed(speed float64) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		r.warnf("control speed %g ignored: want a positive number", speed)
		return
	}
	r.clk.SetSpeed(speed)
	r.record("control", fmt.Sprintf("speed %g", speed), 0)
}

// active reports whether the fleet is up for controls that act on it.
func (r *Runner) active(what string) bool {
	r.mu.Lock()
	p := r.phase
	r.mu.Unlock()
	if p != result.PhaseRunning && p != result.PhaseDraining {
		r.warnf("control %s ignored: the run is %s", what, p)
		return false
	}
	return true
}

// Partition cuts percent of the fleet off (spread evenly over it, as the
// selector "N%" does), silently, until Heal.
func (r *Runner) Partition(percent float64) {
	what := fmt.Sprintf("partition %g%%", percent)
	if !(percent > 0 && percent <= 100) {
		r.warnf("control %s ignored: want a percentage in (0, 100]", what)
		return
	}
	if !r.active(what) {
		return
	}
	idx, err := scenario.Selector{Percent: percent}.Select(r.specs)
	if err != nil {
		r.warnf("control %s: %v", what, err)
		return
	}
	for _, i := range idx {
		r.partition(i)
	}
	r.record("control", fmt.Sprintf("%s (%d workers)", what, len(idx)), 0)
}

// Heal ends every partition; the workers reconnect by their policy.
func (r *Runner) Heal() {
	if !r.active("heal") {
		return
	}
	for i := range r.workers {
		r.heal(i)
	}
	r.record("control", "heal every worker", 0)
}

// KillLeader crashes the leader and restarts it at once from its bbolt
// file, as a leader_crash event with no downtime does.
func (r *Runner) KillLeader() {
	if !r.active("kill leader") {
		return
	}
	if !r.goBackground(func(context.Context) { r.crashLeader(0) }) {
		r.warnf("control kill leader ignored: the run is ending")
		return
	}
	r.record("control", "kill the leader (restart from its outbox file)", 0)
}

// Deploy sends version to every worker in one wave; an empty version is
// the one after the latest deployed (or the fleet's starting version):
// "1.0.0" → "1.0.1".
func (r *Runner) Deploy(version string) {
	if !r.active("deploy") {
		return
	}
	if version == "" {
		r.mu.Lock()
		version = r.target
		r.mu.Unlock()
		if version == "" {
			version = startVersion(r.sc)
		}
		version = NextVersion(version)
	}
	all := make([]int, len(r.workers))
	for i := range all {
		all[i] = i
	}
	if !r.goBackground(func(ctx context.Context) { r.startDeploy(ctx, scenario.Deploy{Version: version}, all) }) {
		r.warnf("control deploy %s ignored: the run is ending", version)
		return
	}
	r.record("control", fmt.Sprintf("deploy %s to every worker", version), 0)
}

// startVersion is the version the fleet's default profile starts at.
func startVersion(sc *scenario.Scenario) string {
	if v := sc.Fleet.Worker.Version; v != nil {
		return *v
	}
	return worker.DefaultVersion
}
