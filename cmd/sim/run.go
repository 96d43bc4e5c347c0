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
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// runFlags are the flags run and check share.
type runFlags struct {
	fileFlags
	speed    float64
	seed     uint64
	workers  int
	gateway  optionalInt
	report   string
	headless bool
	progress time.Duration
}

func (f *runFlags) add(c *cobra.Command, reportDefault string) {
	c.Flags().Float64Var(&f.speed, "speed", 0, fmt.Sprintf("simulated seconds per wall second, above 0 and at most %d, overriding the scenario's speed (0: the scenario's)", scenario.MaxSpeed))
	c.Flags().Uint64Var(&f.seed, "seed", 0, "seed for every random choice, overriding the scenario's (0: the scenario's)")
	c.Flags().IntVar(&f.workers, "workers", 0, fmt.Sprintf("run with this many workers (1 to %d), scaling the groups, ranges and wave sizes in proportion (0: the scenario's fleet.count)", scenario.MaxWorkers))
	c.Flags().Var(&f.gateway, "gateway-size", "put the workers of every group behind gateways of N, one MQTT session each: sets fleet.gateway_size (1 to fleet.count, after --workers) and drops the groups' own (left out: the scenario's)")
	c.Flags().StringVar(&f.report, "report", reportDefault, "directory for the reports: <scenario>.json, <scenario>.html and summary.md (empty: none)")
	c.Flags().DurationVar(&f.progress, "progress", 5*time.Second, "wall time between headless progress lines (0: none)")
	f.fileFlags.add(c)
}

// validate checks the flags before any file is read: the same range as
// the scenario's keys, and NaN or Inf named as the flag's fault.
func (f *runFlags) validate() error {
	switch {
	case f.speed != 0 && !(f.speed > 0 && f.speed <= scenario.MaxSpeed):
		return cli.Usagef("--speed %g: want above 0 and at most %d (simulated seconds per wall second), or 0 for the scenario's speed", f.speed, scenario.MaxSpeed)
	case f.workers < 0 || f.workers > scenario.MaxWorkers:
		return cli.Usagef("--workers %d: want 1 to %d, or 0 for the scenario's fleet.count", f.workers, scenario.MaxWorkers)
	case f.gateway.set && f.gateway.n < 1:
		return cli.Usagef("--gateway-size %d: want 1 to fleet.count workers per gateway, or leave the flag out for the scenario's fleet.gateway_size", f.gateway.n)
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
			return nil, cli.Usagef("--workers %d: %s: %v", f.workers, sc.File, err)
		}
		sc = s
	}
	if n := f.gateway.n; f.gateway.set {
		if n > sc.Fleet.Count {
			scaled := ""
			if f.workers > 0 {
				scaled = " (with --workers)"
			}
			return nil, cli.Usagef("--gateway-size %d: %s has %d workers%s: want 1 to %d workers per gateway", n, sc.File, sc.Fleet.Count, scaled, sc.Fleet.Count)
		}
		s, err := sc.WithGatewaySize(n)
		if err != nil {
			return nil, cli.Usagef("--gateway-size %d: %s: %v", n, sc.File, err)
		}
		sc = s
	}
	if f.speed > 0 {
		sc.Speed = f.speed
	}
	if f.seed != 0 {
		sc.Seed = f.seed
	}
	return sc, nil
}

// optionalInt is an integer flag that knows whether it was given, so that
// an explicit 0 is refused rather than read as "left out".
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) String() string {
	if !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optionalInt) Type() string { return "int" }

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	o.n, o.set = n, true
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
variant in turn: q once a variant has ended starts the next, q before it
ends stops the run. Elsewhere, or with --headless, it prints a progress
line every few seconds.

A file's warnings (an expectation that cannot depend on this scenario's run;
see 'sim validate') go to stderr before the run.

` + exitCodes,
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
			reps, quit, err := runAll(ctx, scs, &f, log, interactive, stdout)
			if err != nil {
				return err
			}
			if err := writeReports(f.report, reps, nil, stdout); err != nil {
				return err
			}
			stopped := quit || ctx.Err() != nil // q on the dashboard, or SIGINT/SIGTERM
			printSummary(stdout, reps, nil, stopped)
			if stopped {
				return nil // the user stopped it: a graceful stop, exit 0
			}
			return verdict(reps, nil)
		},
	}
	f.add(c, "fleetsim-report")
	c.Flags().BoolVar(&f.headless, "headless", false, "no dashboard even on a terminal: progress lines on stdout")
	return c
}

// loadAll resolves, loads and prepares every scenario named by args,
// printing the files' warnings to warn; errStopped when ctx ends first.
func loadAll(ctx context.Context, args []string, f *runFlags, log *slog.Logger, warn io.Writer) ([]*scenario.Scenario, error) {
	return loadFiles(ctx, args, int64(f.maxSize), log, warn, func(scs []*scenario.Scenario) error {
		for i, sc := range scs {
			var err error
			if scs[i], err = f.prepare(sc); err != nil {
				return err
			}
		}
		return nil
	})
}

// runAll runs every variant of every scenario in turn and judges it. A run
// that cannot start is a runtime error; a run that fails part-way yields a
// report with Err set, and the others still run.
func runAll(ctx context.Context, scs []*scenario.Scenario, f *runFlags, log *slog.Logger, interactive bool, stdout io.Writer) (reps []*scenario.Report, quit bool, err error) {
	for _, sc := range scs {
		vs, err := sc.Variants()
		if err != nil {
			return nil, false, cli.Usagef("%v", err)
		}
		var mine []*scenario.Report
		for _, v := range vs {
			if ctx.Err() != nil {
				return reps, false, nil
			}
			// A sweep shows each variant on the dashboard in turn: q once
			// a variant has ended goes on to the next, q before stops.
			rep, quit, err := runOne(ctx, v, f, log, interactive, stdout)
			if err != nil {
				return nil, false, err
			}
			reps = append(reps, rep)
			mine = append(mine, rep)
			if quit {
				return reps, true, nil
			}
		}
		if len(mine) > 0 {
			mine[len(mine)-1].Comparisons = scenario.JudgeComparisons(sc, vs, mine)
		}
	}
	return reps, false, nil
}

// runOne runs one variant. quit reports that the user left the dashboard
// before the run ended (the report is then partial, its Err says so).
func runOne(ctx context.Context, v scenario.Variant, f *runFlags, log *slog.Logger, interactive bool, stdout io.Writer) (rep *scenario.Report, quit bool, err error) {
	o := scenario.RunOptions{Logger: log, Variant: v.Name}
	var logFile *os.File
	logs := dash.NewLogBuffer(500)
	if interactive {
		// Logs must not scribble behind the dashboard: they go to a file,
		// and the warnings to the dashboard's event pane too.
		var err error
		if logFile, err = os.CreateTemp("", "fleetsim-*.log"); err != nil {
			return nil, false, cli.Runtime(err)
		}
		defer logFile.Close()
		o.Logger = slog.New(slog.NewMultiHandler(
			slog.NewTextHandler(logFile, nil),
			slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}),
		))
	}
	r, err := scenario.NewRunner(v.Scenario, o)
	if err != nil {
		return nil, false, cli.Runtime(fmt.Errorf("%s: %w", v.Scenario.File, err))
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		rep *scenario.Report
		err error
	}
	done := make(chan result, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		rep, err := r.Run(runCtx)
		done <- result{rep, err}
	}()
	if interactive {
		if err := dash.Run(runCtx, r, r, dash.Options{Logs: logs}); err != nil {
			log.Warn("dashboard", "err", err)
		}
		select {
		case <-finished:
		default:
			// The user quit before the end: a stop they asked for, like
			// SIGINT, not a failed scenario.
			quit = true
			cancel()
		}
	} else {
		headless(runCtx, r, f.progress, stdout, finished)
	}
	res := <-done
	if res.err != nil && res.rep == nil {
		return nil, false, cli.Runtime(fmt.Errorf("%s: %w", v.Scenario.File, res.err))
	}
	rep = res.rep
	if quit {
		rep.Err = fmt.Sprintf("stopped from the dashboard at %.1fs of %v (simulated): not judged", float64(rep.Result.Run.SimSeconds), v.Scenario.Duration)
	}
	if res.err != nil && rep.Err == "" {
		rep.Err = res.err.Error()
	}
	if logFile != nil {
		fmt.Fprintf(stdout, "logs: %s\n", logFile.Name())
	}
	return rep, quit, nil
}

// headless prints a progress line every interval until the run has
// finished. It reads the run's own snapshot, as the dashboard does.
func headless(ctx context.Context, r *scenario.Runner, every time.Duration, w io.Writer, finished <-chan struct{}) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-finished:
			return
		case <-t.C:
			fmt.Fprintln(w, progressLine(r.Snapshot()))
		}
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeReports writes the report files and says where they are.
func writeReports(dir string, reps []*scenario.Report, cmp []report.Comparison, stdout io.Writer) error {
	if dir == "" || len(reps) == 0 {
		return nil
	}
	if err := report.WriteDir(dir, reps, cmp); err != nil {
		return cli.Runtime(fmt.Errorf("--report %s: %w", dir, err))
	}
	fmt.Fprintf(stdout, "reports: %s\n", filepath.Join(dir, "summary.md"))
	return nil
}
