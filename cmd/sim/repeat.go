package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// repeatFlag is check's --repeat: how many times each scenario variant
// runs when its baseline is captured.
type repeatFlag struct{ n int }

func (r *repeatFlag) add(c *cobra.Command) {
	c.Flags().IntVar(&r.n, "repeat", 1, "with --update-baseline: run each scenario (and sweep variant) this many times and size each band from the spread of the runs (5 or more; 10 recommended; 1: each kind's default band, not measured)")
}

// check reports a --repeat that cannot be used: below 1, or without
// --update-baseline (a check compares one run with its baseline).
func (r *repeatFlag) check(c *cobra.Command, update bool) error {
	switch {
	case r.n < 1:
		return cli.Usagef("--repeat %d: must be at least 1 (the runs a baseline's bands are measured from)", r.n)
	case c.Flags().Changed("repeat") && !update:
		return cli.Usagef("--repeat %d: only with --update-baseline (the runs a new baseline is measured from); a check compares one run with its baseline", r.n)
	}
	return nil
}

// runRounds runs every variant of every scenario n times
// (runner.Plan.Repeat), saying which round starts when there are several.
// rounds[i] is the i-th round, in the order runAll gives; the last round
// is the one the command reports and compares.
func runRounds(ctx context.Context, scs []*scenario.Scenario, f *runFlags, log *slog.Logger, n int, stdout io.Writer) (rounds [][]*result.Report, err error) {
	plan, err := runner.NewPlan(scs)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	o := sweepOptions(f, log, false, stdout)
	if n > 1 {
		o.Round = func(i, n int) { fmt.Fprintf(stdout, "round %d of %d\n", i, n) }
	}
	return plan.Repeat(ctx, n, o)
}

// runsOf is the runs of the i-th variant over all rounds.
func runsOf(rounds [][]*result.Report, i int) []*result.Report {
	runs := make([]*result.Report, len(rounds))
	for j, round := range rounds {
		runs[j] = round[i]
	}
	return runs
}

// earlierFailures prints the runs of the rounds before the last that
// failed their expectations (the last round is reported in full) and
// returns exit code 4 naming them; nil when there are none.
func earlierFailures(w io.Writer, rounds [][]*result.Report) error {
	var failed []string
	for i, round := range rounds[:len(rounds)-1] {
		for _, run := range report.Judge(round, nil, report.Options{}) {
			if !run.Verdict.Status.Fails() {
				continue
			}
			fmt.Fprintf(w, "round %d of %d:\n", i+1, len(rounds))
			report.Text(w, []report.Run{run})
			failed = append(failed, fmt.Sprintf("%s (round %d)", runName(run), i+1))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &cli.Error{Code: cli.ExitFailed, Err: fmt.Errorf("runs of earlier rounds failed: %s", strings.Join(failed, ", "))}
}
