package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/scenarios"
)

// source is a scenario file to load: a path on disk, or a shipped one.
type source struct {
	path string // as shown in messages
	data []byte
}

// resolve turns the command line's arguments into scenario files: a file,
// every *.yaml in a directory (sorted), or the name of a shipped scenario.
// Anything else is a usage error that says what would be valid.
func resolve(args []string) ([]source, error) {
	var out []source
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			files, err := filepath.Glob(filepath.Join(a, "*.yaml"))
			if err != nil {
				return nil, cli.Usagef("%s: %v", a, err)
			}
			if len(files) == 0 {
				return nil, cli.Usagef("%s: the directory has no *.yaml scenario files", a)
			}
			slices.Sort(files)
			for _, f := range files {
				s, err := readSource(f)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
		case err == nil:
			s, err := readSource(a)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		case errors.Is(err, fs.ErrNotExist):
			s, ok := shipped(a)
			if !ok {
				return nil, cli.Usagef("%s: no such file or directory, and not a shipped scenario (shipped: %s)", a, strings.Join(shippedNames(), ", "))
			}
			out = append(out, s)
		default:
			return nil, cli.Usagef("%s: %v", a, err)
		}
	}
	return out, nil
}

func readSource(path string) (source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return source{}, cli.Usagef("%v", err)
	}
	return source{path: path, data: b}, nil
}

// shipped finds a built-in scenario by name, with or without ".yaml".
func shipped(name string) (source, bool) {
	name = strings.TrimSuffix(filepath.Base(name), ".yaml")
	b, err := scenarios.FS.ReadFile(name + ".yaml")
	if err != nil {
		return source{}, false
	}
	return source{path: "scenarios/" + name + ".yaml", data: b}, true
}

func shippedNames() []string {
	entries, _ := scenarios.FS.ReadDir(".")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	return names
}

// load parses every source; all files' errors are reported together (exit
// code 2) so a user fixes them in one pass. The warnings of the files that
// load (an expectation that cannot depend on the run) go to warn; they do
// not change the exit code.
func load(srcs []source, warn io.Writer) ([]*scenario.Scenario, error) {
	var out []*scenario.Scenario
	var errs []error
	for _, s := range srcs {
		sc, err := scenario.Parse(s.path, s.data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(sc.Warnings) > 0 {
			fmt.Fprintln(warn, sc.Warnings.Error())
		}
		out = append(out, sc)
	}
	if len(errs) > 0 {
		return nil, &cli.Error{Code: cli.ExitUsage, Err: fmt.Errorf("%w", errors.Join(errs...))}
	}
	return out, nil
}

// needScenarios is the argument check of run, check and validate: at least
// one scenario, or a usage error saying what one is.
func needScenarios(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("%s needs a scenario: a file, a directory of *.yaml files, or a shipped scenario's name (see sim list)", c.CommandPath())
	}
	return nil
}
