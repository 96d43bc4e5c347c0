package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// A Plan is the runs of several scenarios: every variant of each one's
// sweep (one run for a scenario without a sweep), in order. Its Sweep
// runs them all and gives the whole verdict: each run's expectations,
// and each sweep's comparisons once its variants have run.
type Plan struct {
	scs      []*scenario.Scenario
	variants [][]scenario.Variant
	runs     int
}

// NewPlan expands each scenario into its variants (scenario.Variants);
// the error is the first scenario's whose sweep does not expand.
func NewPlan(scs []*scenario.Scenario) (*Plan, error) {
	p := &Plan{scs: scs, variants: make([][]scenario.Variant, len(scs))}
	for i, sc := range scs {
		vs, err := sc.Variants()
		if err != nil {
			return nil, err
		}
		p.variants[i] = vs
		p.runs += len(vs)
	}
	return p, nil
}

// Runs is how many runs one Sweep makes.
func (p *Plan) Runs() int { return p.runs }

// A Step is one run of a Sweep: a scenario's variant, and its place in
// the scenario's sweep.
type Step struct {
	Variant scenario.Variant
	N, Of   int // variant N (from 1) of the Of its scenario makes
}

// StepFunc runs one step and returns its report, with its expectations
// judged. It calls judged with the report as soon as the run is judged
// (not for a run stopped or failed part-way), so that its results can be
// kept before anything else happens. stop says to run no more steps (the
// user stopped: the report is the last); an error ends the Sweep, with
// no report.
type StepFunc func(ctx context.Context, st Step, judged func(*result.Report)) (rep *result.Report, stop bool, err error)

// SweepOptions are a Sweep's hooks; the zero value runs each step with
// RunOptions{} and keeps nothing.
type SweepOptions struct {
	// Run runs each step. Default: a Runner with RunOptions (Variant set
	// to the step's), its report's Stopped set if ctx ended the run.
	Run StepFunc
	// RunOptions are the default Run's.
	RunOptions RunOptions
	// Judged, if set, is called each time a run is judged, with the
	// reports of the runs so far, that one last. Its first error is
	// Sweep.JudgedErr; the runs go on.
	Judged func(reps []*result.Report) error
	// Round, if set, is called by Repeat before each round, i from 1 to n.
	Round func(i, n int)
}

// Sweep is what Plan.Sweep ran.
type Sweep struct {
	// Reports are the runs' reports in plan order. The last variant's
	// report of each scenario whose variants all ran carries the sweep's
	// comparisons (result.Report.Comparisons).
	Reports []*result.Report
	// Left counts the runs not started: ctx ended, or a step said stop.
	Left int
	// JudgedErr is the first error SweepOptions.Judged returned.
	JudgedErr error
}

// Sweep runs every variant of every scenario in turn, judges each sweep's
// comparisons once its variants have all run, and returns the reports.
// It stops starting runs when ctx ends or a step says stop, and counts
// those left. A run that fails part-way yields a report with Err set,
// and the others still run; a step's error ends the sweep.
func (p *Plan) Sweep(ctx context.Context, o SweepOptions) (Sweep, error) {
	run := o.Run
	if run == nil {
		run = o.RunOptions.step
	}
	var out Sweep
	for i, sc := range p.scs {
		vs := p.variants[i]
		var mine []*result.Report
		for vi, v := range vs {
			if ctx.Err() != nil {
				out.Left = p.runs - len(out.Reports)
				return out, nil
			}
			prior := out.Reports
			judged := func(rep *result.Report) {
				if o.Judged == nil {
					return
				}
				if err := o.Judged(append(slices.Clip(prior), rep)); err != nil && out.JudgedErr == nil {
					out.JudgedErr = err
				}
			}
			rep, stop, err := run(ctx, Step{Variant: v, N: vi + 1, Of: len(vs)}, judged)
			if err != nil {
				return Sweep{}, err
			}
			out.Reports = append(out.Reports, rep)
			mine = append(mine, rep)
			if stop {
				out.Left = p.runs - len(out.Reports)
				return out, nil
			}
		}
		if len(mine) > 0 {
			mine[len(mine)-1].Comparisons = judge.Comparisons(sc, vs, mine)
		}
	}
	return out, nil
}

// Repeat sweeps the plan n times: every run once, then all again, so
// that each variant's runs are spread over the time the whole takes (as
// a CI's runs are spread over days). rounds[i] is the (i+1)-th round's
// reports, in plan order. It stops after a round that ctx ended, or
// whose Judged failed (that error), or at a step's error; the last round
// is then partial.
func (p *Plan) Repeat(ctx context.Context, n int, o SweepOptions) (rounds [][]*result.Report, err error) {
	for i := range n {
		if o.Round != nil {
			o.Round(i+1, n)
		}
		out, err := p.Sweep(ctx, o)
		if err == nil {
			err = out.JudgedErr
		}
		if err != nil || ctx.Err() != nil {
			return append(rounds, out.Reports), err
		}
		rounds = append(rounds, out.Reports)
	}
	return rounds, nil
}

// step is the default StepFunc: a Runner with o for the step's variant.
// A run that ctx stopped is not judged; its report says so in Stopped
// and asks for no more steps.
func (o RunOptions) step(ctx context.Context, st Step, judged func(*result.Report)) (*result.Report, bool, error) {
	o.Variant = st.Variant.Name
	rep, err := Run(ctx, st.Variant.Scenario, o)
	if rep == nil {
		return nil, false, fmt.Errorf("%s: %w", st.Variant.Scenario.File, err)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		rep.Stopped = fmt.Sprintf("the context ended (%v) at %.1fs of %v (simulated)", context.Cause(ctx), float64(rep.Result.Run.SimSeconds), st.Variant.Scenario.Duration)
		rep.Err = ""
		return rep, true, nil
	case err != nil && rep.Err == "":
		rep.Err = err.Error()
	case err == nil && rep.Err == "":
		judged(rep)
	}
	return rep, false, nil
}
