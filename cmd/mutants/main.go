// Command mutants checks that every mechanism fleetsim claims is proved by
// a scenario: it puts one small bug (a mutant) at a time into a scratch copy
// of the tree, runs the shipped scenarios that exist to show that mechanism,
// and prints which check caught it, or that it survived.
//
//	go run ./cmd/mutants                    # every mutant in testdata/mutants/mutants.yaml
//	go run ./cmd/mutants --ci               # the ones marked ci: quick scenarios, for .ci/run
//	go run ./cmd/mutants --only aimd-never-halves
//
// A scenario is judged on its own expectations and comparisons (sim run
// --headless), never on a baseline: a band is a second line of defence,
// not the proof. Before the mutants, each scenario they name runs once on
// the unchanged tree and must pass.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(newRoot(ctx, os.Stdout, os.Stderr), os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	file    string
	only    []string
	ci      bool
	workers int
	jobs    int
	timeout time.Duration
	keep    bool
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var f flags
	c := &cobra.Command{
		Use:   "mutants",
		Short: "Put one bug at a time into a mechanism and check that its scenarios catch it",
		Long: `mutants reads the mutants file: each mutant replaces one piece of text in
one file of the tree (find, replace), says which mechanism's claim that
breaks, and names the shipped scenarios that must catch it (or, where no
scenario can, the unit test that does, and why). For each mutant it applies
the change to a scratch copy of the tree (the working tree's files as git
sees them), builds sim there, and runs the scenarios with 'sim run
--headless' one after another until one fails. A scenario passes or fails
on its own expectations and comparisons; baselines are not read.

It prints a Markdown table to stdout: mutant, mechanism, claim, and the
failing checks that caught it (read from each run's report and the verdict
sim gave it), "caught: not judged" when the runs that caught it judged
none of their checks, or "SURVIVED". Progress goes to stderr.

Exit codes:
  0  every mutant was caught
  1  runtime failure: a mutant did not build, a scenario or test failed
     on the unchanged tree, the suite itself failed (a scratch tree it
     could not write), or SIGINT/SIGTERM stopped it
  (a run or test that crashes or passes --timeout with a mutant in counts
  as caught: a CI would go red; the table says "the run failed"; so does a
  run NOT JUDGED, none of its checks judged, which sim exits 4 for: the
  table says "caught: not judged" with why)
  2  bad flags, or a mutants file with errors (each named)
  4  a mutant survived: a mechanism can break and its scenarios still pass`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return run(ctx, f, stdout, stderr) },
	}
	c.Flags().StringVar(&f.file, "file", "testdata/mutants/mutants.yaml", "the mutants file")
	c.Flags().StringSliceVar(&f.only, "only", nil, "run only these mutants (comma-separated names)")
	c.Flags().BoolVar(&f.ci, "ci", false, "run only the mutants marked ci: true (quick scenarios)")
	c.Flags().IntVar(&f.workers, "workers", 300, "fleet size of every scenario run")
	c.Flags().IntVar(&f.jobs, "jobs", runtime.NumCPU(), "mutants run at once, each in its own scratch tree")
	c.Flags().DurationVar(&f.timeout, "timeout", 10*time.Minute, "the longest one scenario run may take")
	c.Flags().BoolVar(&f.keep, "keep", false, "keep the scratch trees (their paths are printed)")
	return c
}

func run(ctx context.Context, f flags, stdout, stderr io.Writer) error {
	switch {
	case f.workers < 1:
		return cli.Usagef("--workers %d: want 1 or more", f.workers)
	case f.jobs < 1:
		return cli.Usagef("--jobs %d: want 1 or more", f.jobs)
	case f.timeout <= 0:
		return cli.Usagef("--timeout %v: want a positive duration", f.timeout)
	}
	root, err := os.Getwd()
	if err != nil {
		return cli.Runtime(err)
	}
	all, err := loadMutants(f.file, root)
	if err != nil {
		return &cli.Error{Code: cli.ExitUsage, Err: err}
	}
	ms, err := selectMutants(all, f.only, f.ci)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	s := &suite{root: root, workers: f.workers, timeout: f.timeout, log: stderr}
	parent, err := os.MkdirTemp("", "fleetsim-mutants-")
	if err != nil {
		return cli.Runtime(err)
	}
	if f.keep {
		fmt.Fprintf(stderr, "scratch trees under %s\n", parent)
	} else {
		defer os.RemoveAll(parent)
	}
	jobs := min(f.jobs, len(ms))
	trees := make([]string, jobs)
	for i := range trees {
		if trees[i], err = s.scratch(ctx, parent); err != nil {
			return cli.Runtime(err)
		}
	}
	if err := s.control(ctx, trees[0], ms); err != nil {
		return cli.Runtime(err)
	}

	outcomes, err := s.judgeAll(ctx, trees, ms)
	writeTable(stdout, outcomes) // after a stop, what was judged before it
	if err != nil {
		return cli.Runtime(err)
	}
	return verdict(outcomes)
}

// judgeAll judges the mutants ms, one job per scratch tree, logging each
// outcome as it comes, and returns the outcomes in the order of ms. A job
// that meets an error of the suite's own (a tree it could not restore, a
// report it could not read) retires its tree and stops the rest: what it
// would judge next could not be trusted. The outcomes judged before the
// stop are returned with its error.
func (s *suite) judgeAll(ctx context.Context, trees []string, ms []Mutant) ([]Outcome, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	outcomes := make([]Outcome, len(ms))
	next := make(chan int)
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, dir := range trees {
		wg.Go(func() {
			for i := range next {
				o, err := s.mutate(ctx, dir, ms[i])
				if err != nil {
					stop(fmt.Errorf("mutant %s: %w", ms[i].Name, err))
					return
				}
				mu.Lock()
				outcomes[i] = o
				st := string(o.Status)
				if o.NotJudged {
					st += " (not judged)"
				}
				fmt.Fprintf(s.log, "%-9s %-28s %s (%.0fs)\n", st, ms[i].Name, o.By, o.Elapsed.Seconds())
				mu.Unlock()
			}
		})
	}
feed:
	for i := range ms {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return outcomes, context.Cause(ctx)
}

// scenariosOf lists the scenarios the mutants name, each once, in order.
func scenariosOf(ms []Mutant) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, s := range m.Scenarios {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func writeTable(w io.Writer, outcomes []Outcome) {
	fmt.Fprintln(w, "| mutant | mechanism | claim it breaks | caught by |")
	fmt.Fprintln(w, "|---|---|---|---|")
	outcomes = slices.DeleteFunc(slices.Clone(outcomes), func(o Outcome) bool { return o.Status == "" }) // not judged: stopped first
	for _, o := range outcomes {
		by := o.By
		switch o.Status {
		case Survived:
			by = "**SURVIVED**"
			if o.Mutant.Survives != "" {
				by += ": " + o.Mutant.Survives
			}
		case Crashed:
			by = "the run failed: " + by
		case Caught:
			if o.NotJudged {
				by = "caught: not judged: " + by
			}
		case Broken:
			by = "**did not build**: " + by
		}
		if o.Mutant.Why != "" {
			by += " (no scenario: " + o.Mutant.Why + ")"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", o.Mutant.Name, o.Mutant.Mechanism, o.Mutant.Claim, cell(by))
	}
	caught, total := 0, len(outcomes)
	for _, o := range outcomes {
		if o.Status == Caught || o.Status == Crashed {
			caught++
		}
	}
	fmt.Fprintf(w, "\n%d of %d mutants caught.\n", caught, total)
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// verdict is the exit: a mutant that did not build is the suite's own
// fault (1); one that survived is the code's (4).
func verdict(outcomes []Outcome) error {
	var broken, survived []string
	for _, o := range outcomes {
		switch o.Status {
		case Broken:
			broken = append(broken, o.Mutant.Name)
		case Survived:
			survived = append(survived, o.Mutant.Name)
		}
	}
	if len(broken) > 0 {
		return cli.Runtime(fmt.Errorf("%d mutants did not build or run: %s", len(broken), strings.Join(broken, ", ")))
	}
	if len(survived) > 0 {
		return &cli.Error{Code: cli.ExitFailed, Err: fmt.Errorf("%d mutants survived: %s", len(survived), strings.Join(survived, ", "))}
	}
	return nil
}
