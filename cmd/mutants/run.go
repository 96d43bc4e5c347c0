package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// Status of a mutant after its run.
type Status string

const (
	Caught   Status = "caught"   // a scenario's expectation or comparison failed, or its unit test
	Crashed  Status = "crashed"  // a run could not complete (exit 1, a panic) or passed its time limit
	Survived Status = "survived" // every check passed with the bug in
	Broken   Status = "broken"   // the mutant did not build: the suite's fault, not the code's
)

// Outcome is what one mutant's run found.
type Outcome struct {
	Mutant Mutant
	Status Status
	By     string // the failing checks, "scenario: check", or the test
	// NotJudged: the runs that caught it were not judged (each of their
	// checks divided by zero, or read a timing on a run that fell
	// behind) rather than failed: the gate goes red on them (exit 4), but
	// no check named what broke.
	NotJudged bool
	Elapsed   time.Duration
}

// suite runs mutants in scratch copies of a tree.
type suite struct {
	root    string        // the tree the scratch copies are made from
	workers int           // --workers for every scenario run
	timeout time.Duration // the longest one scenario run may take
	log     io.Writer     // progress, one line per run
}

// scratch copies the tree's tracked and untracked-but-not-ignored files
// (what a commit of the working tree would hold) to a new directory under
// parent.
func (s *suite) scratch(ctx context.Context, parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "tree-")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = s.root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("listing the tree's files with git ls-files in %s: %w", s.root, err)
	}
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(s.root, name)
		data, err := os.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return "", err
		}
		info, err := os.Stat(src)
		if err != nil {
			return "", err
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// build compiles sim in the tree at dir into dir/.mutants/sim.
func (s *suite) build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, ".mutants", "sim")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sim")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/sim: %v\n%s", err, out)
	}
	return bin, nil
}

// play is what one scenario run with a mutant in showed: the checks that
// failed, the runs not judged, or why the run gave no verdict (crash);
// none of them when it passed.
type play struct {
	failed   []string
	unjudged []string
	crash    string
}

func (p play) passed() bool { return len(p.failed) == 0 && len(p.unjudged) == 0 && p.crash == "" }

// runScenario plays one shipped scenario with sim in the tree at dir. A
// run that exits 4 failed checks, named from its reports; one that exits
// otherwise, or gives no verdict within the timeout, crashed. err is the
// suite's own failure (a scratch directory, a report it cannot read, a
// binary it cannot start), never the mutant's.
func (s *suite) runScenario(ctx context.Context, dir, bin, name string) (play, error) {
	reports, err := os.MkdirTemp(dir, "report-")
	if err != nil {
		return play{}, err
	}
	defer os.RemoveAll(reports)
	runCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, "run", "--headless", "--workers", strconv.Itoa(s.workers),
		"--report", reports, "--progress", "0", "--log-level", "error", filepath.Join("scenarios", name+".yaml"))
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return play{}, ctx.Err()
	case runCtx.Err() != nil:
		return play{crash: fmt.Sprintf("%s: no verdict within %v", name, s.timeout)}, nil
	}
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		return play{}, nil
	case !errors.As(runErr, &exit):
		return play{}, fmt.Errorf("running sim for %s: %w", name, runErr)
	case exit.ExitCode() == 4:
		return judged(reports, name)
	}
	return play{crash: fmt.Sprintf("%s: exit %d: %s", name, exit.ExitCode(), lastLine(stderr.String()))}, nil
}

// judged reads the JSON reports in dir, each with the verdict sim gave
// it, and names every check that failed, as "scenario: check" or
// "scenario [variant]: check", and every run that was not judged (sim
// exits 4 for it too), with why.
func judged(dir, scenario string) (play, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return play{}, err
	}
	var p play
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return play{}, err
		}
		run, err := report.ReadRun(fh)
		fh.Close()
		if err != nil {
			return play{}, fmt.Errorf("%s: %w", f, err)
		}
		rep := run.Report
		where := scenario
		if rep.Variant != "" {
			where += " [" + rep.Variant + "]"
		}
		if run.Verdict.Status == report.NotJudged {
			p.unjudged = append(p.unjudged, where+": "+run.Verdict.Text())
			continue
		}
		if rep.Err != "" {
			p.failed = append(p.failed, where+": run failed: "+rep.Err)
		}
		for _, v := range rep.Verdicts {
			if v.Status == result.Fail {
				p.failed = append(p.failed, where+": "+v.Name)
			}
		}
		for _, v := range rep.Comparisons {
			if v.Status == result.Fail {
				p.failed = append(p.failed, scenario+": "+v.Name)
			}
		}
	}
	if len(p.failed) == 0 && len(p.unjudged) == 0 {
		p.failed = []string{scenario + ": failed (no failing check in its reports)"}
	}
	return p, nil
}

// runTest runs a unit test in the tree at dir and reports whether it
// failed (caught), or why it gave no verdict (crash: it passed the
// timeout). A pattern that matches no test is the suite's error.
func (s *suite) runTest(ctx context.Context, dir string, t *Test) (caught bool, crash string, err error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-timeout", s.timeout.String(), "-run", t.Run, "-v", t.Package)
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	out, runErr := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return false, "", ctx.Err()
	case bytes.Contains(out, []byte("panic: test timed out")):
		return false, fmt.Sprintf("go test %s -run %s: no verdict within %v", t.Package, t.Run, s.timeout), nil
	case bytes.Contains(out, []byte("--- FAIL")):
		return true, "", nil
	case runErr != nil:
		return false, "", fmt.Errorf("go test %s -run %s: %v: %s", t.Package, t.Run, runErr, lastLine(string(out)))
	case !bytes.Contains(out, []byte("--- PASS")):
		return false, "", fmt.Errorf("go test %s -run %s: the pattern matches no test", t.Package, t.Run)
	}
	return false, "", nil
}

// control runs each scenario and unit test the mutants name once, without
// a mutant in: one that fails on the unchanged code would "catch" every
// mutant.
func (s *suite) control(ctx context.Context, dir string, ms []Mutant) error {
	bin, err := s.build(ctx, dir)
	if err != nil {
		return fmt.Errorf("the unchanged tree: %w", err)
	}
	for _, name := range scenariosOf(ms) {
		start := time.Now()
		p, err := s.runScenario(ctx, dir, bin, name)
		if err != nil {
			return fmt.Errorf("the unchanged tree: %w", err)
		}
		if !p.passed() {
			return fmt.Errorf("the unchanged tree fails %s (%s%s): fix that before judging mutants", name, strings.Join(append(p.failed, p.unjudged...), "; "), p.crash)
		}
		fmt.Fprintf(s.log, "control   %-28s passes (%.0fs)\n", name, time.Since(start).Seconds())
	}
	for _, m := range ms {
		if m.Test == nil {
			continue
		}
		failed, crash, err := s.runTest(ctx, dir, m.Test)
		if err != nil {
			return fmt.Errorf("the unchanged tree: %w", err)
		}
		if failed || crash != "" {
			return fmt.Errorf("the unchanged tree fails go test %s -run %s%s: fix that before judging mutants", m.Test.Package, m.Test.Run, crash)
		}
	}
	return nil
}

// mutate puts m into the tree at dir, runs what must catch it, and takes
// it out again.
func (s *suite) mutate(ctx context.Context, dir string, m Mutant) (o Outcome, err error) {
	start := time.Now()
	o.Mutant = m
	defer func() { o.Elapsed = time.Since(start) }()
	restore, err := m.apply(dir)
	if err != nil {
		return o, err
	}
	defer func() {
		if rerr := restore(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if m.Test != nil {
		caught, crash, err := s.runTest(ctx, dir, m.Test)
		switch {
		case err != nil:
			return o, err
		case crash != "":
			o.Status, o.By = Crashed, crash
		case caught:
			o.Status, o.By = Caught, "unit test "+m.Test.Package+" -run "+m.Test.Run
		default:
			o.Status = Survived
		}
		return o, nil
	}
	bin, err := s.build(ctx, dir)
	if err != nil {
		o.Status, o.By = Broken, lastLine(err.Error())
		return o, ctx.Err()
	}
	o.Status = Survived
	for _, name := range m.Scenarios {
		p, err := s.runScenario(ctx, dir, bin, name)
		switch {
		case err != nil:
			return o, err
		case p.crash != "":
			o.Status, o.By = Crashed, p.crash
			return o, nil
		case !p.passed():
			// A run not judged fails the gate as a failed one does.
			o.Status, o.By = Caught, strings.Join(append(p.failed, p.unjudged...), "; ")
			o.NotJudged = len(p.failed) == 0
			return o, nil
		}
	}
	return o, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
