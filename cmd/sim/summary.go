package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// printSummary prints one block per report: the verdict, the expectations
// and the baseline's differences. With stopped, the last run was stopped
// by the user and is marked so rather than failed.
func printSummary(w io.Writer, reps []*result.Report, cmps []report.Comparison, stopped bool) {
	for i, r := range reps {
		name := r.Scenario
		if r.Variant != "" {
			name += " [" + r.Variant + "]"
		}
		ok := r.Passed() && (cmps == nil || compared(cmps[i]))
		mark := "PASS"
		switch {
		case stopped && i == len(reps)-1:
			mark = "STOPPED"
		case r.Outcome() == result.NotJudged && (cmps == nil || compared(cmps[i])):
			mark = "NOT JUDGED"
		case !ok:
			mark = "FAIL"
		}
		res := r.Result
		fmt.Fprintf(w, "%s %s: lost %d, %.0fs simulated in %.1fs wall, lag p99 %.2fs\n",
			mark, name, res.Lost, float64(res.Run.SimSeconds), res.Run.WallSeconds, float64(res.Run.LagP99))
		if r.Err != "" {
			fmt.Fprintf(w, "  run error: %s\n", r.Err)
		} else if why := res.Run.Behind(); why != "" {
			fmt.Fprintf(w, "  fell behind: %s: timing checks not judged\n", why)
		}
		if mark == "NOT JUDGED" {
			fmt.Fprintf(w, "  not one of its checks could be judged: the run has shown nothing, and does not pass\n")
		}
		report.Terminal(w, r)
		printVerdicts(w, "  ", r.Verdicts)
		if len(r.Comparisons) > 0 {
			fmt.Fprintf(w, "  comparisons across %s's variants:\n", r.Scenario)
			printVerdicts(w, "    ", r.Comparisons)
		}
		if cmps != nil {
			fmt.Fprint(w, comparisonText(cmps[i]))
		}
	}
}

// printVerdicts prints one line per verdict, with the values a failed
// check read.
func printVerdicts(w io.Writer, indent string, vs []result.Verdict) {
	for _, v := range vs {
		sym := v.Status.Mark()
		line := fmt.Sprintf("%s%s %s", indent, sym, v.Check)
		if v.Name != "" && v.Name != v.Check {
			line = fmt.Sprintf("%s%s %s: %s", indent, sym, v.Name, v.Check)
		}
		if v.Detail != "" && v.Status != result.Pass {
			line += "  (" + v.Detail + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// compared reports whether a run was compared with its baseline and did
// not regress. A missing baseline or one of another size fails: a CI gate
// that compares nothing must not pass quietly.
func compared(c report.Comparison) bool { return c.Skipped == "" && !c.Regressed() }

// comparisonText is the baseline comparison, indented under its run.
func comparisonText(c report.Comparison) string {
	var b strings.Builder
	switch {
	case c.Skipped != "":
		fmt.Fprintf(&b, "  ✗ baseline: %s\n", c.Skipped)
	case !c.Regressed():
		fmt.Fprintf(&b, "  ✓ baseline: %d metrics within their rules\n", c.Compared)
	default:
		fmt.Fprintf(&b, "  ✗ baseline: %d of %d metrics regressed\n", len(c.Regressions()), c.Compared)
	}
	for _, d := range c.Diffs {
		if d.Outcome == report.Regression {
			fmt.Fprintf(&b, "      %s: %g, baseline %g (%s): %s\n", d.Metric, d.Got, d.Baseline, d.Rule, d.Why)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "      note: %s\n", n)
	}
	return b.String()
}

// verdict is the command's error: nil when every run passed, else exit
// code 4 naming the runs that failed and those not judged (whose every
// check was not judged: they have shown nothing, and do not pass).
func verdict(reps []*result.Report, cmps []report.Comparison) error {
	var failed, unjudged []string
	for i, r := range reps {
		if r.Passed() && (cmps == nil || compared(cmps[i])) {
			continue
		}
		name := r.Scenario
		if r.Variant != "" {
			name += " [" + r.Variant + "]"
		}
		if r.Outcome() == result.NotJudged && (cmps == nil || compared(cmps[i])) {
			unjudged = append(unjudged, name)
		} else {
			failed = append(failed, name)
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d runs failed: %s", len(failed), len(reps), strings.Join(failed, ", ")))
	}
	if len(unjudged) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d runs not judged (no check could be judged): %s", len(unjudged), len(reps), strings.Join(unjudged, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	return &cli.Error{Code: cli.ExitFailed, Err: errors.New(strings.Join(parts, "; "))}
}
