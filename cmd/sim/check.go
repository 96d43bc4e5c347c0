package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// checkFlags are check's flags.
type checkFlags struct {
	runFlags
	junit    string
	baseline string
	update   bool
	repeat   repeatFlag
	summary  string
	keptUp   bool
}

// checkHelp is the long help of 'sim check'.
var checkHelp = `check runs each scenario headless, judges its expectations, and compares its
result with its baseline in --baseline: exact for what the scenario's
timeline decides, and within a band for what load decides, from
value/factor - abs to value*factor + abs, so that a count falling to a
tenth fails as one rising tenfold does (timings too, when the run and the
baseline's run kept up). Each run's verdict is one of passed, failed,
stopped or not judged, and the terminal, --junit, --summary and --report
all say the same one (docs/REPORTS.md, "The verdict"). It exits 4 when a
run failed or was not judged.

Before any run starts, check refuses (exit 2, naming each file and the
command that fixes it) what it could not compare: a scenario file that
does not load, and a baseline that is missing, unreadable, or captured at
another fleet size or gateway layout than this check's (--workers,
--gateway-size: counts at 100 workers say nothing about 300). --junit,
--summary and --report then say why nothing ran. A new scenario's first
step is to capture its baseline:

  sim check my-scenario.yaml --update-baseline --repeat 10
  sim check my-scenario.yaml

--update-baseline records the baselines from this run instead of
comparing (replacing one of another size). With --repeat N each scenario
runs N times: each metric's value is the median of the runs, its band is
sized from their spread, and the spread (runs, min, max) is written
beside it. Without --repeat the bands are each kind of metric's default,
and the file says they were not measured. Updating keeps an existing
file's metrics (a line you deleted stays deleted, a rule you made exact
stays exact) and measures their values and bands anew; review the diff
before committing it. To gate on expectations alone, without baselines:
sim run --headless.

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
(exit 4), its verdict naming the lag, for a CI that must not pass on
timings it did not check.

` + exitCodesOf("check")

func newCheckCmd(ctx context.Context, stdout, stderr io.Writer, logs *cli.LogOptions) *cobra.Command {
	var o checkFlags
	f := &o.runFlags
	c := &cobra.Command{
		Use:   "check FILE|DIR|NAME...",
		Short: "Run scenarios headless, judge them against expectations and baselines (for CI)",
		Long:  checkHelp,
		Example: `  sim check my-scenario.yaml --update-baseline --repeat 10   # first: capture its baseline
  sim check my-scenario.yaml                                 # then: check against it
  sim check scenarios/ --workers 300 --junit junit.xml --summary summary.md`,
		Args: needScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			if err := o.repeat.check(c, o.update); err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			return o.run(ctx, args, log, stdout, stderr)
		},
	}
	f.add(c, "")
	c.Flags().StringVar(&o.junit, "junit", "", "write JUnit XML here (a test suite per scenario, a test case per expectation and baseline)")
	c.Flags().StringVar(&o.baseline, "baseline", defaultBaselines, "directory of the baseline files")
	c.Flags().BoolVar(&o.update, "update-baseline", false, "write new baselines from this run (or the --repeat runs) instead of comparing")
	o.repeat.add(c)
	c.Flags().StringVar(&o.summary, "summary", "", "append the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
	c.Flags().BoolVar(&o.keptUp, "require-kept-up", false, "fail (exit 4) a run the machine could not keep up with, instead of only not judging its timings")
	f.headless = true
	return c
}

// run loads the scenarios and their baselines (refusing, with the
// reports saying why, what it could not compare), runs every variant
// --repeat times, and reports the last round.
func (o *checkFlags) run(ctx context.Context, args []string, log *slog.Logger, stdout, stderr io.Writer) error {
	f := &o.runFlags
	scs, err := loadAll(ctx, args, f, log, stderr)
	if errors.Is(err, errStopped) {
		// A gate must not pass on what it did not check.
		return cli.Runtime(fmt.Errorf("%w: nothing was checked", err))
	}
	var failed loadError
	if errors.As(err, &failed) {
		// The CI shows why there are no runs.
		return refuse(report.Refusal{Phase: report.RefusedLoad, Problems: failed}, o.junit, o.summary, f.report, stderr)
	}
	if err != nil {
		return err
	}
	bs := baselines{}
	if !o.update {
		var rf *report.Refusal
		if bs, rf, err = loadBaselines(scs, o.baseline, f); err != nil {
			return err
		}
		if rf != nil {
			return refuse(*rf, o.junit, o.summary, f.report, stderr)
		}
	}
	var rounds [][]*result.Report
	err = withCPUProfile(f.cpu, func() (err error) {
		rounds, err = runRounds(ctx, scs, f, log, o.repeat.n, stdout)
		return err
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return cli.Runtime(errors.New("stopped by SIGINT/SIGTERM: the runs did not complete, nothing was checked"))
	}
	return o.report(rounds, bs, stdout)
}

// report compares the last round with the baselines (or, with
// --update-baseline, writes them), writes --report, --junit and
// --summary, prints the verdicts and returns the exit code's error.
func (o *checkFlags) report(rounds [][]*result.Report, bs baselines, stdout io.Writer) error {
	reps := rounds[len(rounds)-1]
	cmps, err := compareAll(reps, rounds, bs, o.baseline, o.update, stdout)
	if err != nil {
		return err
	}
	runs := report.Judge(reps, cmps, report.Options{RequireKeptUp: o.keptUp})
	if err := writeReports(o.runFlags.report, runs); err != nil {
		return err
	}
	if o.junit != "" {
		if err := writeFile(o.junit, func(w io.Writer) error { return report.JUnit(w, runs) }); err != nil {
			return cli.Runtime(fmt.Errorf("--junit %s: %w", o.junit, err))
		}
	}
	if o.summary != "" {
		if err := writeFile(o.summary, func(w io.Writer) error { return report.Markdown(w, runs) }); err != nil {
			return cli.Runtime(fmt.Errorf("--summary %s: %w", o.summary, err))
		}
	}
	earlier := earlierFailures(stdout, rounds)
	report.Text(stdout, runs)
	printReportPaths(stdout, o.runFlags.report, reps, true)
	if err := verdict(runs); err != nil {
		return err
	}
	return earlier
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
