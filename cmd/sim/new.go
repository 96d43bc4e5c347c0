package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// newTemplate is the scenario `sim new` writes, named my-scenario: a valid
// scenario itself (TestNewScenario runs it, and runs it with its mechanism
// switched off).
//
//go:embed new.yaml
var newTemplate string

const templateName = "my-scenario"

// newScenario returns the template named name.
func newScenario(name string) string {
	return strings.ReplaceAll(newTemplate, templateName, name)
}

func newNewCmd(stdout, stderr io.Writer) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Write a commented scenario to start from",
		Long: `new writes NAME.yaml (or --output), a commented scenario named NAME to start
from: a small fleet, a leader, a timeline, expectations that read what the
mechanisms buy, and a sweep to uncomment that switches one off and makes
its expectation fail. It validates as it is and runs in a few seconds.
It prints the next steps, each a command that works as printed, in order:

  sim run my-rollout.yaml                                  # watch it run
  sim check my-rollout.yaml --update-baseline --repeat 10  # capture its baseline
  sim check my-rollout.yaml                                # check it, as a CI would

NAME is a scenario name: lower-case letters, digits and single dashes
between them, at most 64 characters. new never overwrites a file: if the
file exists it exits 2 and writes nothing.

` + exitCodesOf("new"),
		Example: "  sim new my-rollout\n  sim new edge-storm --output scenarios/edge-storm.yaml",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("%s takes one argument, the scenario's name (as in my-rollout), got %d", c.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if err := scenario.CheckName(name); err != nil {
				return cli.Usagef("%v", err)
			}
			path := output
			if path == "" {
				path = name + ".yaml"
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return cli.Usagef("%s exists: sim new does not overwrite a file; choose another name or --output, or remove it", path)
			}
			if err != nil {
				return cli.Usagef("--output %s: %v", path, err)
			}
			if _, err := f.WriteString(newScenario(name)); err != nil {
				f.Close()
				return cli.Runtime(err)
			}
			if err := f.Close(); err != nil {
				return cli.Runtime(err)
			}
			fmt.Fprint(stdout, nextSteps(path, name))
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "file to write (default NAME.yaml in the current directory)")
	return c
}

// nextSteps is what sim new prints after writing path: the commands that
// take a new scenario from its first run to a passing check, in order,
// each as it works when typed in the current directory. A check compares
// with a baseline, and refuses to run without one: capturing it comes
// first.
func nextSteps(path, name string) string {
	return fmt.Sprintf(`wrote %[1]s. Next, in this directory:
  watch it run (the live dashboard, on a terminal):
    sim run %[1]s
  capture its baseline, %[2]s (commit it with the scenario):
    sim check %[1]s --update-baseline --repeat 10
  check it against that baseline, as a CI would (exit 4 if it fails):
    sim check %[1]s
`, path, report.BaselinePath(defaultBaselines, name, ""))
}
