package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/scenarios"
)

// source is a scenario file to load: a path on disk (read when its turn
// comes, so that one file at a time is held), or a shipped one.
type source struct {
	path    string // as shown in messages
	data    []byte
	shipped bool
	err     error // it names nothing: reported with the other files' problems
}

// fileFlags are the flags of the commands that read scenario files.
type fileFlags struct{ maxSize byteSize }

func (f *fileFlags) add(c *cobra.Command) {
	f.maxSize = scenario.DefaultMaxFileSize
	c.Flags().Var(&f.maxSize, "max-file-size", "largest scenario file to read, in bytes or with a unit (512KiB, 2MiB): a larger file is refused before it is read; at most "+byteSize(maxByteSize).String()+", which keeps one load within 256 MB (at its peak a load takes up to 45 bytes of memory per byte of file)")
}

// resolve turns the command line's arguments into scenario files: a file,
// every *.yaml in a directory (sorted), or the name of a shipped scenario.
// An argument that names none (or a directory without scenarios) is a
// source with its error, so that the other files are still loaded and
// every problem is reported at once.
func resolve(args []string) []source {
	var out []source
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			entries, err := os.ReadDir(a) // sorted by name
			if err != nil {
				out = append(out, source{path: a, err: err})
				continue
			}
			n := len(out)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".yaml") {
					out = append(out, source{path: filepath.Join(a, e.Name())})
				}
			}
			if len(out) == n {
				out = append(out, source{path: a, err: fmt.Errorf("%s: the directory has no *.yaml scenario files", a)})
			}
		case err == nil:
			out = append(out, source{path: a})
		case errors.Is(err, fs.ErrNotExist):
			s, ok := shipped(a)
			if !ok {
				names := shippedNames()
				name := strings.TrimSuffix(filepath.Base(a), ".yaml")
				s = source{path: a, err: fmt.Errorf("%s: no such file or directory, and not a shipped scenario%s; the shipped ones are %s", a, scenario.DidYouMean(name, names), strings.Join(names, ", "))}
			}
			out = append(out, s)
		default:
			out = append(out, source{path: a, err: err})
		}
	}
	return out
}

// read reads a file source of at most maxSize bytes. A file too large, a
// named pipe, a device or a directory named x.yaml is refused unread.
func (s source) read(maxSize int64) ([]byte, error) {
	if s.shipped || s.err != nil {
		return s.data, s.err
	}
	b, err := scenario.ReadFile(s.path, maxSize)
	var pe *fs.PathError
	switch {
	case errors.Is(err, scenario.ErrTooLarge) && maxSize < maxByteSize:
		err = fmt.Errorf("%w: raise the limit with --max-file-size, up to %v (what one load may cost)", err, byteSize(maxByteSize))
	case errors.Is(err, scenario.ErrTooLarge):
		err = fmt.Errorf("%w: %v is the most --max-file-size allows (what one load may cost): split the file", err, byteSize(maxByteSize))
	case errors.As(err, &pe):
		err = pe // "open x.yaml: permission denied"
	}
	return b, err
}

// shipped finds a built-in scenario by name, with or without ".yaml".
func shipped(name string) (source, bool) {
	name = strings.TrimSuffix(filepath.Base(name), ".yaml")
	b, err := scenarios.FS.ReadFile(name + ".yaml")
	if err != nil {
		return source{}, false
	}
	return source{path: "scenarios/" + name + ".yaml", data: b, shipped: true}, true
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

// loadError is every file that did not load, in the order of the command
// line (exit code 2).
type loadError []report.LoadFailure

func (e loadError) Error() string {
	msgs := make([]string, len(e))
	for i, f := range e {
		msgs[i] = f.Err
	}
	return strings.Join(msgs, "\n")
}

// load reads and parses every source, files of at most maxSize bytes.
// Every file's problems are reported together, as a loadError (exit code
// 2), so that a user fixes them in one pass. warnings are those of the
// files that load (an expectation that cannot depend on the run): they do
// not change the exit code. It stops between files once ctx has ended.
func load(ctx context.Context, srcs []source, maxSize int64) (scs []*scenario.Scenario, warnings []string, err error) {
	var failed loadError
	for _, s := range srcs {
		if ctx.Err() != nil {
			return nil, nil, errStopped
		}
		data, err := s.read(maxSize)
		if err != nil {
			failed = append(failed, report.LoadFailure{File: s.path, Err: err.Error()})
			continue
		}
		sc, err := scenario.Parse(s.path, data)
		if err != nil {
			failed = append(failed, report.LoadFailure{File: s.path, Err: err.Error()})
			continue
		}
		if len(sc.Warnings) > 0 {
			warnings = append(warnings, sc.Warnings.Error())
		}
		scs = append(scs, sc)
	}
	if len(failed) > 0 {
		return nil, warnings, &cli.Error{Code: cli.ExitUsage, Err: failed}
	}
	return scs, warnings, nil
}

// errStopped is SIGINT or SIGTERM (the command's context ending) before
// the scenario files were loaded.
var errStopped = errors.New("stopped by SIGINT/SIGTERM while loading the scenario files")

// loadFiles resolves and loads the scenario files args name (files larger
// than maxSize are refused), then runs then on them (the overrides of run
// and check, the variants of validate) and prints the files' warnings to
// stderr. It returns errStopped as soon as ctx ends: a signal stops sim at
// once in this phase too. The parse under way is left to finish in the
// background, bounded by the scenario limits, as the process exits.
func loadFiles(ctx context.Context, args []string, maxSize int64, log *slog.Logger, stderr io.Writer, then func([]*scenario.Scenario) error) ([]*scenario.Scenario, error) {
	type result struct {
		scs      []*scenario.Scenario
		warnings []string
		err      error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		srcs := resolve(args)
		log.Debug("loading scenario files", "files", len(srcs))
		r.scs, r.warnings, r.err = load(ctx, srcs, maxSize)
		if r.err == nil && then != nil {
			r.err = then(r.scs)
		}
		done <- r
	}()
	select {
	case r := <-done:
		for _, w := range r.warnings {
			fmt.Fprintln(stderr, w)
		}
		return r.scs, r.err
	case <-ctx.Done():
		return nil, errStopped
	}
}

// needScenarios is the argument check of run, check and validate: at least
// one scenario, or a usage error saying what one is.
func needScenarios(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("%s needs a scenario: a file, a directory of *.yaml files, or a shipped scenario's name (see sim list)", c.CommandPath())
	}
	return nil
}
