package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

func newValidateCmd(ctx context.Context, stdout, stderr io.Writer, logs *cli.LogOptions) *cobra.Command {
	var (
		f        runFlags
		resolved bool
	)
	c := &cobra.Command{
		Use:   "validate FILE|DIR|NAME...",
		Short: "Check scenario files without running them",
		Long: `validate loads each scenario file as 'sim run' would — strict YAML, every
value in range, every selector resolvable, every expectation type-checked
against the result's schema and able to depend on the run (not true or
false whatever the run measures, as lost >= 0) — and prints what is wrong
with file:line:col. It runs nothing.

An expectation that reads only counts the scenario cannot produce (lost
== 0 in a scenario with no deploy, no poison and no telemetry) is a
warning on stderr, as 'sim run' and 'sim check' print it; warnings do not
change the exit code.

A file larger than --max-file-size, not UTF-8, or nested or keyed past the
limits of docs/SCENARIOS.md, is refused before it is parsed; one whose
aliases, checks or sweep would make more work than those limits allow, before
that work. Only regular files are read (not a named pipe or a device).

` + exitCodesOf("validate"),
		Example: "  sim validate scenarios/\n  sim validate my-scenario.yaml",
		Args:    needScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			if resolved && len(args) != 1 {
				return cli.Usagef("--resolved prints one scenario: give one file or name, got %d", len(args))
			}
			var lines []string
			_, err = loadFiles(ctx, args, int64(f.maxSize), log, stderr, func(scs []*scenario.Scenario) error {
				var failed loadError
				for _, loaded := range scs {
					sc, err := f.prepare(loaded)
					if err != nil {
						failed = append(failed, report.LoadFailure{File: loaded.File, Err: err.Error()})
						continue
					}
					if resolved {
						b, err := scenario.Resolved(sc)
						if err != nil {
							return cli.Usagef("%s: %v", sc.File, err)
						}
						lines = append(lines, strings.TrimSuffix(string(b), "\n"))
						continue
					}
					vs, err := sc.Variants()
					if err != nil {
						return cli.Usagef("%v", err)
					}
					line := fmt.Sprintf("ok  %s: %s, %d workers, %v at speed %g, %d events, %d expectations, %d variant(s)",
						sc.File, sc.Name, sc.Fleet.Count, sc.Duration, sc.Speed, len(sc.Timeline), len(sc.Expect), len(vs))
					if len(sc.Compare) > 0 {
						line += fmt.Sprintf(", %d comparisons", len(sc.Compare))
					}
					lines = append(lines, line)
				}
				if len(failed) > 0 {
					return &cli.Error{Code: cli.ExitUsage, Err: failed}
				}
				return nil
			})
			if errors.Is(err, errStopped) {
				// A check must not pass on files it did not read.
				return cli.Runtime(fmt.Errorf("%w: nothing was validated", err))
			}
			if err != nil {
				return err
			}
			for _, l := range lines {
				fmt.Fprintln(stdout, l)
			}
			return nil
		},
	}
	// The file flag and the overrides of run and check, as they define
	// them; validate has no reports to write.
	tmp := &cobra.Command{}
	f.add(tmp, "")
	for _, name := range []string{"max-file-size", "workers", "gateway-size", "speed", "seed"} {
		c.Flags().AddFlag(tmp.Flags().Lookup(name))
	}
	c.Flags().BoolVar(&resolved, "resolved", false, "print the scenario as it would run (defaults filled in, the overrides applied) as YAML that loads back to the same run")
	return c
}

func newListCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the shipped scenarios with what each demonstrates",
		Long: `list prints the scenarios built into sim. Run one by name
('sim run wave-deploy') or by its path in the repository.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for _, name := range shippedNames() {
				s, _ := shipped(name)
				scs, _, err := load(context.Background(), []source{s}, scenario.DefaultMaxFileSize)
				if err != nil {
					return cli.Runtime(fmt.Errorf("shipped scenario %s does not load: %w", name, err))
				}
				fmt.Fprintf(stdout, "%-22s %s\n", name, firstSentence(scs[0].Description))
			}
			return nil
		},
	}
}

// firstSentence returns the description up to its first full stop, on one
// line.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
