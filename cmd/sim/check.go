package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

func newCheckCmd(ctx context.Context, stdout, stderr io.Writer, logs *cli.LogOptions) *cobra.Command {
	var (
		f        runFlags
		junit    string
		baseline string
		update   bool
		repeat   repeatFlag
		summary  string
		keptUp   bool
	)
	c := &cobra.Command{
		Use:   "check FILE|DIR|NAME...",
		Short: "Run scenarios headless, judge them against expectations and baselines (for CI)",
		Long: `check runs each scenario headless, judges its expectations, and compares its
result with its baseline in --baseline: exact for what the scenario's
timeline decides, and within a band for what load decides, from
value/factor - abs to value*factor + abs, so that a count falling to a
tenth fails as one rising tenfold does (timings too, when the run and the
baseline's run kept up; see docs/REPORTS.md). It exits 4 when an
expectation fails or a baseline regresses, and writes JUnit XML for the CI
to display.

When a file does not load, nothing runs: every file's problems are
printed (exit 2), and --junit still writes its file, with a failed
testcase per file that did not load.

A missing baseline, or one captured at another fleet size or gateway size
(--workers, --gateway-size), fails the check:
record one with --update-baseline. With --repeat N each scenario runs N
times: each metric's value is the median of the runs, its band is sized
from their spread, and the spread (runs, min, max) is written beside it.
Without --repeat the bands are each kind of metric's default, and the file
says they were not measured. Updating keeps an existing file's metrics (a
line you deleted stays deleted, a rule you made exact stays exact) and
measures their values and bands anew; review the diff before committing it.

A file's warnings (an expectation that cannot depend on this scenario's run;
see 'sim validate') go to stderr before the runs.

Runs go as fast as the machine allows (--speed sets a ceiling) on the virtual
clock: a busy CI runner gives the same verdicts as an idle laptop. A run
whose simulated time had to be forced on (run.forced_advances above 0: the
process did not settle) fails. A run that fell behind its schedule anyway
(run.kept_up false: its timer, service or delivery lag passed the
threshold, which only something waiting on the wall clock inside the
process causes) has its timing checks not judged and its timings not
compared; it passes on its counts. With --require-kept-up it fails instead
(exit 4), with a line naming the run and the lag, for a CI that must not
pass on timings it did not check.

` + exitCodes,
		Example: `  sim check scenarios/ --junit junit.xml
  sim check scenarios/ --workers 300 --update-baseline --repeat 10`,
		Args: needScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			if err := repeat.check(c, update); err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			scs, err := loadAll(ctx, args, &f, log, stderr)
			if errors.Is(err, errStopped) {
				// A gate must not pass on what it did not check.
				return cli.Runtime(fmt.Errorf("%w: nothing was checked", err))
			}
			var failed loadError
			if errors.As(err, &failed) && junit != "" {
				// The CI shows why there are no runs.
				if werr := writeFile(junit, func(w io.Writer) error { return report.JUnitLoadFailures(w, failed) }); werr != nil {
					fmt.Fprintf(stderr, "sim check: --junit %s: %v\n", junit, werr)
				}
			}
			if err != nil {
				return err
			}
			var rounds [][]*result.Report
			err = withCPUProfile(f.cpu, func() (err error) {
				rounds, err = runRounds(ctx, scs, &f, log, repeat.n, stdout)
				return err
			})
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return cli.Runtime(errors.New("stopped by SIGINT/SIGTERM: the runs did not complete, nothing was checked"))
			}
			reps := rounds[len(rounds)-1]
			cmps, err := compareAll(reps, rounds, baseline, update, stdout)
			if err != nil {
				return err
			}
			if err := writeReports(f.report, reps, cmps); err != nil {
				return err
			}
			if junit != "" {
				jo := report.JUnitOptions{RequireKeptUp: keptUp}
				if err := writeFile(junit, func(w io.Writer) error { return report.JUnitWith(w, reps, cmps, jo) }); err != nil {
					return cli.Runtime(fmt.Errorf("--junit %s: %w", junit, err))
				}
			}
			if summary != "" {
				if err := writeFile(summary, func(w io.Writer) error { return report.Markdown(w, reps, cmps) }); err != nil {
					return cli.Runtime(fmt.Errorf("--summary %s: %w", summary, err))
				}
			}
			earlier := earlierFailures(stdout, rounds)
			printSummary(stdout, reps, cmps, false)
			printReportPaths(stdout, f.report, reps, true)
			err = verdict(reps, cmps)
			if err == nil {
				err = earlier
			}
			if keptUp {
				err = requireKeptUp(stdout, reps, err)
			}
			return err
		},
	}
	f.add(c, "")
	c.Flags().StringVar(&junit, "junit", "", "write JUnit XML here (a test suite per scenario, a test case per expectation and baseline)")
	c.Flags().StringVar(&baseline, "baseline", "testdata/baselines", "directory of the baseline files")
	c.Flags().BoolVar(&update, "update-baseline", false, "write new baselines from this run (or the --repeat runs) instead of comparing")
	repeat.add(c)
	c.Flags().StringVar(&summary, "summary", "", "append the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
	c.Flags().BoolVar(&keptUp, "require-kept-up", false, "fail (exit 4) a run the machine could not keep up with, instead of only not judging its timings")
	f.headless = true
	return c
}

// compareAll compares each report with its baseline, or records the
// baselines with update, each from its runs over all rounds. A run that
// could not complete is not recorded.
func compareAll(reps []*result.Report, rounds [][]*result.Report, dir string, update bool, stdout io.Writer) ([]report.Comparison, error) {
	cmps := make([]report.Comparison, len(reps))
	for i, r := range reps {
		path := report.BaselinePath(dir, r.Scenario, r.Variant)
		if update {
			runs := runsOf(rounds, i)
			for _, run := range runs {
				if run.Err != "" {
					return nil, cli.Runtime(fmt.Errorf("%s: not recording a baseline from a run that failed: %s", r.Scenario, run.Err))
				}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, cli.Runtime(err)
			}
			if err := report.UpdateBaseline(path, runs...); err != nil {
				return nil, cli.Runtime(err)
			}
			fmt.Fprintf(stdout, "baseline written: %s\n", path)
		}
		b, err := report.LoadBaseline(path)
		if err != nil && !errors.Is(err, report.ErrNoBaseline) {
			return nil, cli.Runtime(err)
		}
		if update {
			for _, w := range b.Warnings() {
				fmt.Fprintf(stdout, "  warning: %s\n", w)
			}
		}
		if errors.Is(err, report.ErrNoBaseline) {
			cmps[i] = report.Comparison{Scenario: r.Scenario, Variant: r.Variant,
				Skipped: fmt.Sprintf("no baseline at %s: record one with --update-baseline", path)}
			continue
		}
		cmps[i] = report.Compare(b, r)
	}
	return cmps, nil
}

// writeFile writes a file through fn, or appends when it is the GitHub step
// summary (which other steps share).
func writeFile(path string, fn func(io.Writer) error) error {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if os.Getenv("GITHUB_STEP_SUMMARY") == path {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	fh, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if err := fn(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// requireKeptUp prints a line for each run that completed but could not
// keep up with its speed, naming the lag that passed its threshold, and
// returns the check's error: err if there is one, else exit code 4 naming
// those runs.
func requireKeptUp(stdout io.Writer, reps []*result.Report, err error) error {
	var behind []string
	for _, r := range reps {
		run := r.Result.Run
		if r.Err != "" || run.KeptUp {
			continue // a run that did not complete has failed already
		}
		name := r.Scenario
		if r.Variant != "" {
			name += " [" + r.Variant + "]"
		}
		why := run.Behind()
		if why == "" { // a Result without its lags
			why = fmt.Sprintf("could not keep up at speed %g", run.Speed)
		}
		fmt.Fprintf(stdout, "BEHIND %s: %s (--require-kept-up)\n", name, why)
		behind = append(behind, name)
	}
	if err != nil || len(behind) == 0 {
		return err
	}
	return &cli.Error{Code: cli.ExitFailed, Err: fmt.Errorf("%d of %d runs could not keep up (--require-kept-up): %s", len(behind), len(reps), strings.Join(behind, ", "))}
}
