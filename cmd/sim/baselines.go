package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// defaultBaselines is check's --baseline when it is left out.
const defaultBaselines = "testdata/baselines"

// baselines are the baselines of a check's runs, loaded before any run, by
// path.
type baselines map[string]report.Baseline

// loadBaselines loads the baseline of every variant of every scenario
// before anything runs. What makes a comparison impossible is known now: a
// baseline that is missing, unreadable, of another scenario or variant, of
// a run that did not complete, or captured at another fleet size or
// gateway layout than the check's (--workers, --gateway-size). All of
// them are returned as one Refusal, each naming its file and the command
// that fixes it, so that nothing runs for minutes to fail on what was
// known at the start.
func loadBaselines(scs []*scenario.Scenario, dir string, f *runFlags) (baselines, *report.Refusal, error) {
	bs := baselines{}
	rf := &report.Refusal{Phase: report.RefusedBaseline}
	for _, sc := range scs {
		vs, err := sc.Variants()
		if err != nil {
			return nil, nil, cli.Usagef("%v", err)
		}
		for _, v := range vs {
			path := report.BaselinePath(dir, sc.Name, v.Name)
			why, err := baselineProblem(bs, path, v, dir, f)
			if err != nil {
				return nil, nil, err
			}
			if why != "" {
				rf.Problems = append(rf.Problems, report.LoadFailure{File: path, Err: why})
			}
		}
	}
	if len(rf.Problems) == 0 {
		return bs, nil, nil
	}
	return nil, rf, nil
}

// baselineProblem loads the baseline at path into bs and says why variant
// v cannot be compared with it, "" when it can.
func baselineProblem(bs baselines, path string, v scenario.Variant, dir string, f *runFlags) (string, error) {
	sc := v.Scenario
	capture := captureCommand(sc.File, dir, f)
	b, err := report.LoadBaseline(path)
	switch {
	case errors.Is(err, report.ErrNoBaseline):
		what := fmt.Sprintf("%q", sc.Name)
		if v.Name != "" {
			what += fmt.Sprintf(" variant %q", v.Name)
		}
		return fmt.Sprintf("%s: no baseline of %s to compare with: capture one with %s", path, what, capture), nil
	case err != nil:
		return fmt.Sprintf("%v: fix the file, or capture it afresh with %s", err, capture), nil
	case b.Scenario != sc.Name || b.Variant != v.Name:
		return fmt.Sprintf("%s: the file is the baseline of scenario %q variant %q, not of %q variant %q: capture it afresh with %s", path, b.Scenario, b.Variant, sc.Name, v.Name, capture), nil
	case b.Err != "":
		return fmt.Sprintf("%s: the baseline's run did not complete (%s): capture it again with %s", path, b.Err, capture), nil
	}
	ws, err := sc.Workers()
	if err != nil {
		return "", cli.Usagef("%s: %v", sc.File, err)
	}
	gateways, size := scenario.GatewayShape(ws)
	if why := b.Mismatch(report.Shape{Workers: len(ws), Gateways: gateways, GatewaySize: size}); why != "" {
		// --workers scales the file's gateways too: the fleet's size is
		// the one to name when it differs.
		at := fmt.Sprintf("--workers %d", b.FleetCount)
		switch {
		case b.FleetCount != len(ws):
		case b.GatewaySize > 0:
			at = fmt.Sprintf("--gateway-size %d", b.GatewaySize)
		default:
			at = "a session per worker, without --gateway-size"
		}
		return fmt.Sprintf("%s: %s; check at the baseline's size (%s), or capture a baseline at this one with %s", path, why, at, capture), nil
	}
	bs[path] = b
	return "", nil
}

// captureCommand is the sim check line that captures the baseline of file
// with the check's own sizes and baseline directory.
func captureCommand(file, dir string, f *runFlags) string {
	args := []string{"sim check", file}
	if f.workers > 0 {
		args = append(args, fmt.Sprintf("--workers %d", f.workers))
	}
	if f.gateway.set {
		args = append(args, fmt.Sprintf("--gateway-size %d", f.gateway.v))
	}
	if dir != defaultBaselines {
		args = append(args, "--baseline "+dir)
	}
	return "'" + strings.Join(append(args, "--update-baseline"), " ") + "'"
}

// refusalError is a Refusal as the command's error (exit code 2): the
// headline, then each problem on its own line.
type refusalError struct{ rf report.Refusal }

func (e refusalError) Error() string {
	lines := []string{e.rf.Headline() + ":"}
	for _, p := range e.rf.Problems {
		lines = append(lines, "  "+strings.ReplaceAll(p.Err, "\n", "\n  "))
	}
	return strings.Join(lines, "\n")
}

// refuse writes a check that ran nothing to every output it was asked
// for (--junit, --summary, --report), each saying what the command's
// error says, and returns that error (exit code 2).
func refuse(rf report.Refusal, junit, summary, reportDir string, stderr io.Writer) error {
	outputs := []struct {
		flag, path string
		write      func(io.Writer, report.Refusal) error
	}{
		{"--junit", junit, report.JUnitRefusal},
		{"--summary", summary, report.MarkdownRefusal},
	}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		if err := writeFile(o.path, func(w io.Writer) error { return o.write(w, rf) }); err != nil {
			fmt.Fprintf(stderr, "sim check: %s %s: %v\n", o.flag, o.path, err)
		}
	}
	if reportDir != "" {
		if err := report.WriteDirRefusal(reportDir, rf); err != nil {
			fmt.Fprintf(stderr, "sim check: --report %s: %v\n", reportDir, err)
		}
	}
	return &cli.Error{Code: cli.ExitUsage, Err: refusalError{rf}}
}

// compareAll compares each report with its baseline in bs, loaded before
// the runs; with update it records the baselines instead, each from its
// runs over all rounds, and compares with them. A run that could not
// complete is not recorded.
func compareAll(reps []*result.Report, rounds [][]*result.Report, bs baselines, dir string, update bool, stdout io.Writer) ([]report.Comparison, error) {
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
			if old, err := report.LoadBaseline(path); err == nil {
				if why := old.Mismatch(report.ShapeOf(&r.Result)); why != "" {
					fmt.Fprintf(stdout, "replacing %s: %s\n", path, why)
				}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, cli.Runtime(err)
			}
			if err := report.UpdateBaseline(path, runs...); err != nil {
				return nil, cli.Runtime(err)
			}
			fmt.Fprintf(stdout, "baseline written: %s\n", path)
			b, err := report.LoadBaseline(path)
			if err != nil {
				return nil, cli.Runtime(err)
			}
			for _, w := range b.Warnings() {
				fmt.Fprintf(stdout, "  warning: %s\n", w)
			}
			bs[path] = b
		}
		b, ok := bs[path]
		if !ok {
			// loadBaselines refused the check before it ran otherwise.
			return nil, cli.Runtime(fmt.Errorf("%s: no baseline was loaded for %s", path, r.Scenario))
		}
		cmps[i] = report.Compare(b, r)
	}
	return cmps, nil
}
