package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Text writes runs for a terminal, as sim prints them when they end: per
// run a line headed by its status's Label (PASS, FAIL, STOPPED, NOT
// JUDGED) with what it lost and how long it took, the status's word and
// the verdict's reasons, the end summary (Terminal), its checks with their
// marks and, when it was compared with a baseline, the comparison; then
// the totals (Totals).
func Text(w io.Writer, runs []Run) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, run := range runs {
		textRun(bw, run)
	}
	if len(runs) > 0 {
		fmt.Fprintf(bw, "%s\n", Totals(runs))
	}
	return bw.Flush()
}

func textRun(w *bufio.Writer, run Run) {
	r, v := run.Report, run.Verdict
	res := r.Result
	fmt.Fprintf(w, "%s %s: lost %d, %.0fs simulated in %.1fs wall, lag p99 %.2fs\n",
		v.Status.Label(), name(r), res.Lost, float64(res.Run.SimSeconds), res.Run.WallSeconds, float64(res.Run.LagP99))
	fmt.Fprintf(w, "  %s: %s\n", v.Status.Word(), v.Text())
	if why := res.Run.Behind(); why != "" && r.Err == "" && r.Stopped == "" && v.Behind == "" {
		fmt.Fprintf(w, "  fell behind: %s: timing checks not judged\n", why)
	}
	Terminal(w, r)
	textChecks(w, "  ", r.Verdicts)
	if len(r.Comparisons) > 0 {
		fmt.Fprintf(w, "  comparisons across %s's variants:\n", r.Scenario)
		textChecks(w, "    ", r.Comparisons)
	}
	if run.Baseline != nil {
		textBaseline(w, run)
	}
}

// textChecks writes one line per check, with the values a failed check
// read.
func textChecks(w *bufio.Writer, indent string, vs []result.Verdict) {
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

// textBaseline is the baseline comparison, indented under its run.
func textBaseline(w *bufio.Writer, run Run) {
	c := run.Baseline
	switch {
	case c.Skipped != "" && run.Verdict.BaselineFailed:
		fmt.Fprintf(w, "  ✗ baseline: not compared: %s\n", c.Skipped)
	case c.Skipped != "":
		fmt.Fprintf(w, "  – baseline: not compared: %s\n", c.Skipped)
	case !c.Regressed():
		fmt.Fprintf(w, "  ✓ baseline: %s within their rules\n", plural(c.Compared, "metric", "metrics"))
	default:
		fmt.Fprintf(w, "  ✗ baseline: %d of %s regressed\n", len(c.Regressions()), plural(c.Compared, "metric", "metrics"))
	}
	for _, d := range c.Diffs {
		if d.Outcome == Regression {
			fmt.Fprintf(w, "      %s: %g, baseline %g (%s): %s\n", d.Metric, d.Got, d.Baseline, d.Rule, d.Why)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "      note: %s\n", n)
	}
}
