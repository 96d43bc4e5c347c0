package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/dash"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// runFlags are the flags run and check share.
type runFlags struct {
	fileFlags
	speed    optional[float64]
	seed     uint64
	workers  int
	gateway  optional[int]
	report   string
	headless bool
	progress time.Duration
	heap     string
	cpu      string
}

func (f *runFlags) add(c *cobra.Command, reportDefault string) {
	c.Flags().Var(&f.speed, "speed", fmt.Sprintf("a ceiling on the run's pace: at most this many simulated seconds per wall second, above 0 and at most %d (left out: the scenario's speed on the dashboard; none headless and in check, where a run goes as fast as the machine settles it; the results are the same either way)", scenario.MaxSpeed))
	c.Flags().Uint64Var(&f.seed, "seed", 0, "seed for every random choice, overriding the scenario's (0: the scenario's)")
	c.Flags().IntVar(&f.workers, "workers", 0, fmt.Sprintf("run with this many workers (1 to %d), scaling the groups, ranges and wave sizes in proportion, and the leader with scale.leader: proportional; a size outside the scenario's scale.min to scale.max is refused (0: the scenario's fleet.count)", scenario.MaxWorkers))
	c.Flags().Var(&f.gateway, "gateway-size", "put the workers of every group behind gateways of N, one MQTT session each: sets fleet.gateway_size (1 to fleet.count, after --workers) and drops the groups' own (left out: the scenario's)")
	c.Flags().StringVar(&f.heap, "heap-profile", "", "write a Go heap profile (go tool pprof) to this file when the timeline has played, before the drain: where a large fleet's memory goes (empty: none)")
	c.Flags().StringVar(&f.cpu, "cpu-profile", "", "write a Go CPU profile (go tool pprof) of every run to this file: where a large fleet's CPU goes (empty: none)")
	c.Flags().StringVar(&f.report, "report", reportDefault, "directory for the reports: <scenario>.json, <scenario>.html and summary.md (empty: none)")
	c.Flags().DurationVar(&f.progress, "progress", 5*time.Second, "wall time between headless progress lines, which also come at every phase change and every tenth of the run's simulated time (0: no lines)")
	f.fileFlags.add(c)
}

// validate checks the flags before any file is read: the same range as
// the scenario's keys, and NaN or Inf named as the flag's fault.
func (f *runFlags) validate() error {
	switch {
	case f.speed.set && !(f.speed.v > 0 && f.speed.v <= scenario.MaxSpeed):
		return cli.Usagef("--speed %g: want above 0 and at most %d (simulated seconds per wall second at most), or leave the flag out", f.speed.v, scenario.MaxSpeed)
	case f.workers < 0 || f.workers > scenario.MaxWorkers:
		return cli.Usagef("--workers %d: want 1 to %d, or 0 for the scenario's fleet.count", f.workers, scenario.MaxWorkers)
	case f.gateway.set && f.gateway.v < 1:
		return cli.Usagef("--gateway-size %d: want 1 to fleet.count workers per gateway, or leave the flag out for the scenario's fleet.gateway_size", f.gateway.v)
	case f.progress < 0:
		return cli.Usagef("--progress %v: want an interval such as 5s, or 0 for no progress lines", f.progress)
	}
	return nil
}

// prepare applies the overrides to a loaded scenario.
func (f *runFlags) prepare(sc *scenario.Scenario) (*scenario.Scenario, error) {
	if f.workers > 0 {
		s, err := sc.Scale(f.workers)
		if err != nil {
			return nil, cli.Usagef("--workers %d: %v", f.workers, inFile(sc.File, err))
		}
		sc = s
	}
	if n := f.gateway.v; f.gateway.set {
		if n > sc.Fleet.Count {
			scaled := ""
			if f.workers > 0 {
				scaled = " (with --workers)"
			}
			return nil, cli.Usagef("--gateway-size %d: %s has %d workers%s: want 1 to %d workers per gateway", n, sc.File, sc.Fleet.Count, scaled, sc.Fleet.Count)
		}
		s, err := sc.WithGatewaySize(n)
		if err != nil {
			return nil, cli.Usagef("--gateway-size %d: %v", n, inFile(sc.File, err))
		}
		sc = s
	}
	if f.speed.set {
		sc.Speed = f.speed.v
	}
	if f.seed != 0 {
		sc.Seed = f.seed
	}
	return sc, nil
}

// inFile names the file of an error that does not place itself (a
// scenario.Errors names it, with the line and column).
func inFile(file string, err error) error {
	var placed scenario.Errors
	if errors.As(err, &placed) {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

// ceiling is the speed ceiling of a run: --speed if given, else the
// scenario's speed for a person watching the dashboard, else none (a
// run's results do not depend on it).
func (f *runFlags) ceiling(sc *scenario.Scenario, interactive bool) float64 {
	if f.speed.set || interactive {
		return sc.Speed
	}
	return 0
}

// optional is a number flag that knows whether it was given, so that an
// explicit 0 is refused rather than read as "left out".
type optional[T int | float64] struct {
	v   T
	set bool
}

func (o *optional[T]) String() string {
	if !o.set {
		return ""
	}
	return fmt.Sprint(o.v)
}

func (o *optional[T]) Type() string {
	if _, ok := any(o.v).(int); ok {
		return "int"
	}
	return "float"
}

func (o *optional[T]) Set(s string) error {
	s = strings.TrimSpace(s)
	switch v := any(&o.v).(type) {
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		*v = n
	case *float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("want a number")
		}
		*v = f
	}
	o.set = true
	return nil
}

func newRunCmd(ctx context.Context, stdout, stderr io.Writer, logs *cli.LogOptions) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run FILE|DIR|NAME...",
		Short: "Run scenarios, on the live dashboard when on a terminal",
		Long: `run runs each scenario (and each variant of its sweep) on an embedded broker,
a leader on a bbolt outbox in a temporary directory (unless the scenario names
one) and a pool of workers over real MQTT sessions, judges its expectations,
and writes the reports.

On a terminal a single scenario opens the live dashboard (press ? for its
keys); the summary stays on screen until you press q. A sweep shows each
variant in turn ("variant 2 of 3" in the header): q once a variant has
ended starts the next, and ctrl+c there stops the sweep; q before a
variant ends stops it (not judged) and runs no more. A run's reports are
written as soon as it is judged, and the end summary and the verdicts are
printed once the dashboard is closed.

Elsewhere, or with --headless, it prints a progress line of at most 100
columns at every phase change, every tenth of the run's simulated time and
every --progress of wall time: simulated time and phase, workers online,
the leader's mailbox (box: now/capacity and the most it held), requests
rejected (rej) and relay backpressure (bp) since the line before, the
mailbox wait p99 (w99), and BEHIND with the lag if the run fell behind its
schedule; the least needed parts give way on a long line. Errors come after
the verdicts.

A run's time is virtual: it moves once the process has settled, so the
machine's speed changes how long a run takes, never its results. On the
dashboard it goes at most the scenario's speed (simulated seconds per wall
second), and the header shows the pace reached; headless it goes as fast as
the machine allows. --speed sets that ceiling for either.

A file's warnings (an expectation that cannot depend on this scenario's run;
see 'sim validate') go to stderr before the run.

` + exitCodesOf("run"),
		Example: `  sim run scenarios/wave-deploy.yaml
  sim run thundering-herd --workers 200 --speed 20 --headless
  sim run wave-deploy --workers 2000 --gateway-size 100 --headless
  sim run scenarios/ --report out/`,
		Args: needScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			scs, err := loadAll(ctx, args, &f, log, stderr)
			if errors.Is(err, errStopped) {
				// Nothing ran: a stop the user asked for, as during a run.
				fmt.Fprintf(stderr, "sim run: %v: nothing ran\n", err)
				return nil
			}
			if err != nil {
				return err
			}
			interactive := !f.headless && isTerminal(os.Stdout) && isTerminal(os.Stdin) && len(scs) == 1
			var out outcome
			err = withCPUProfile(f.cpu, func() (err error) {
				out, err = runAll(ctx, scs, &f, log, interactive, stdout)
				return err
			})
			if err != nil {
				return err
			}
			// Each judged run's reports were written as it was judged;
			// this writes them once more with a stopped run's partial
			// report and the sweep's comparisons.
			runs := report.Judge(out.reps, nil, report.Options{})
			werr := writeReports(f.report, runs)
			report.Text(stdout, runs)
			printReportPaths(stdout, f.report, out.reps, werr == nil)
			if out.left > 0 {
				fmt.Fprintf(stdout, "stopped: %d more %s not run\n", out.left, plural(out.left, "run", "runs"))
			}
			if werr != nil {
				return werr
			}
			if err := out.saveErr; err != nil {
				return err
			}
			// A run stopped before its end was not judged: not a failure.
			return verdict(runs)
		},
	}
	f.add(c, "fleetsim-report")
	c.Flags().BoolVar(&f.headless, "headless", false, "no dashboard even on a terminal: progress lines on stdout")
	return c
}

// loadAll resolves, loads and prepares every scenario named by args,
// printing the files' warnings to warn; errStopped when ctx ends first.
// A scenario the overrides do not fit (a --workers outside its scale) did
// not load: every such file is reported together, as a loadError.
func loadAll(ctx context.Context, args []string, f *runFlags, log *slog.Logger, warn io.Writer) ([]*scenario.Scenario, error) {
	return loadFiles(ctx, args, int64(f.maxSize), log, warn, func(scs []*scenario.Scenario) error {
		var failed loadError
		for i, sc := range scs {
			var err error
			if scs[i], err = f.prepare(sc); err != nil {
				failed = append(failed, report.LoadFailure{File: sc.File, Err: err.Error()})
			}
		}
		if len(failed) > 0 {
			return &cli.Error{Code: cli.ExitUsage, Err: failed}
		}
		return nil
	})
}

// outcome is what runAll ran.
type outcome struct {
	reps []*result.Report
	// left counts the runs not started because the user stopped.
	left int
	// saveErr is the first error writing a judged run's reports.
	saveErr error
}

// runAll runs every variant of every scenario in turn and judges it
// (runner.Plan.Sweep), writing the reports of the runs so far (--report)
// as each is judged, so that a run's results are on disk before the
// dashboard waits for q. A run that cannot start is a runtime error; a
// run that fails part-way yields a report with Err set, and the others
// still run.
func runAll(ctx context.Context, scs []*scenario.Scenario, f *runFlags, log *slog.Logger, interactive bool, stdout io.Writer) (outcome, error) {
	plan, err := runner.NewPlan(scs)
	if err != nil {
		return outcome{}, cli.Usagef("%v", err)
	}
	sw, err := plan.Sweep(ctx, sweepOptions(f, log, interactive, stdout))
	if err != nil {
		return outcome{}, err
	}
	return outcome{reps: sw.Reports, left: sw.Left, saveErr: sw.JudgedErr}, nil
}

// sweepOptions runs each variant with runOne: on the dashboard when
// interactive, else with progress lines on stdout; and writes the
// reports of the runs so far as each is judged.
func sweepOptions(f *runFlags, log *slog.Logger, interactive bool, stdout io.Writer) runner.SweepOptions {
	return runner.SweepOptions{
		Run: func(ctx context.Context, st runner.Step, judged func(*result.Report)) (*result.Report, bool, error) {
			// A sweep shows each variant on the dashboard in turn: q once
			// a variant has ended goes on to the next, ctrl+c then or q
			// before stops.
			sweep := dash.Sweep{Variant: st.N, Variants: st.Of, Label: st.Variant.Label}
			rep, stopped, quit, err := runOne(ctx, st.Variant, sweep, f, log, interactive, stdout, judged)
			return rep, stopped || quit, err
		},
		Judged: func(reps []*result.Report) error {
			return writeReports(f.report, report.Judge(reps, nil, report.Options{}))
		},
	}
}

// runOne runs one variant, sweep says which, and calls save with its
// report once it is judged (not for a run that was stopped or failed
// part-way). stopped reports that the run was stopped before it was
// judged (the dashboard's q, or ctx: SIGINT, SIGTERM, SIGHUP); its report
// is then partial, its Err says so. quit reports that the user left the
// dashboard with q before the end, or stopped the sweep after it.
func runOne(ctx context.Context, v scenario.Variant, sweep dash.Sweep, f *runFlags, log *slog.Logger, interactive bool, stdout io.Writer, save func(*result.Report)) (rep *result.Report, stopped, quit bool, err error) {
	o := runner.RunOptions{Logger: log, Variant: v.Name, Speed: f.ceiling(v.Scenario, interactive)}
	var logFile *os.File
	logs := dash.NewLogBuffer(500)
	if interactive {
		// Logs must not scribble behind the dashboard: they go to a file,
		// and the warnings to the dashboard's event pane too.
		var err error
		if logFile, err = os.CreateTemp("", "fleetsim-*.log"); err != nil {
			return nil, false, false, cli.Runtime(err)
		}
		defer logFile.Close()
		o.Logger = slog.New(slog.NewMultiHandler(
			slog.NewTextHandler(logFile, nil),
			slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}),
		))
	}
	r, err := runner.NewRunner(v.Scenario, o)
	if err != nil {
		return nil, false, false, cli.Runtime(fmt.Errorf("%s: %w", v.Scenario.File, err))
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		rep *result.Report
		err error
	}
	done := make(chan outcome, 1)
	finished := make(chan struct{})
	if f.heap != "" {
		profiled := make(chan struct{})
		defer func() { <-profiled }()
		go func() {
			defer close(profiled)
			if err := heapProfile(runCtx, r, f.heap, finished); err != nil {
				log.Error("heap profile", "err", err)
			}
		}()
	}
	go func() {
		defer close(finished)
		rep, err := r.Run(runCtx)
		if err == nil && rep != nil && rep.Err == "" {
			// Judged: its results are safe from here on, whatever ends
			// the process next.
			save(rep)
		}
		done <- outcome{rep, err}
	}()
	if interactive {
		err := dash.Run(runCtx, r, r, dash.Options{Logs: logs, Sweep: sweep})
		switch {
		case errors.Is(err, dash.ErrStopSweep):
			quit = true // no more variants
		case err != nil && ctx.Err() == nil:
			log.Warn("dashboard", "err", err)
		}
		select {
		case <-finished:
		default:
			// The user quit before the end: a stop they asked for, like
			// SIGINT, not a failed scenario.
			quit = ctx.Err() == nil
			cancel()
		}
	} else {
		headless(runCtx, r, f.progress, stdout, finished)
	}
	res := <-done
	if errors.Is(res.err, outbox.ErrLocked) || errors.Is(res.err, outbox.ErrCorrupt) || errors.Is(res.err, outbox.ErrNotOutbox) {
		// The file the scenario names, not the run: exit code 3.
		return nil, false, false, cli.Outbox(fmt.Errorf("%s: %w", v.Scenario.File, res.err))
	}
	if res.err != nil && res.rep == nil {
		return nil, false, false, cli.Runtime(fmt.Errorf("%s: %w", v.Scenario.File, res.err))
	}
	rep = res.rep
	// Stopped only if it ended because the run was cancelled: a run
	// judged before the q or the signal keeps its verdict. A stopped run
	// was not judged, which is not a failure: its report says what
	// stopped it instead of an error.
	stopped = res.err != nil && runCtx.Err() != nil
	switch {
	case stopped:
		by := "a signal"
		if quit {
			by = "a key on the dashboard"
		}
		rep.Stopped = fmt.Sprintf("%s at %.1fs of %v (simulated)", by, float64(rep.Result.Run.SimSeconds), v.Scenario.Duration)
		rep.Err = ""
	case res.err != nil && rep.Err == "":
		rep.Err = res.err.Error()
	}
	if logFile != nil {
		fmt.Fprintf(stdout, "logs: %s\n", logFile.Name())
	}
	return rep, stopped, quit, nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeReports writes the report files (nothing without a directory).
func writeReports(dir string, runs []report.Run) error {
	if dir == "" || len(runs) == 0 {
		return nil
	}
	if err := report.WriteDir(dir, runs); err != nil {
		return cli.Runtime(fmt.Errorf("--report %s: %w", dir, err))
	}
	return nil
}

// printReportPaths says where the reports are: the summary, and each
// run's HTML page when there are few.
func printReportPaths(w io.Writer, dir string, reps []*result.Report, written bool) {
	if dir == "" || len(reps) == 0 || !written {
		return
	}
	if len(reps) <= 3 {
		for _, r := range reps {
			fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, report.FileName(r.Scenario, r.Variant)+".html"))
		}
	}
	fmt.Fprintf(w, "reports: %s\n", filepath.Join(dir, "summary.md"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
