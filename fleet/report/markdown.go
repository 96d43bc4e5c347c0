package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// maxNew bounds the list of metrics missing from a baseline that a summary
// names: a baseline captured before a Result grew would list dozens.
const maxNew = 10

// Markdown writes a summary of runs that fits a CI job summary (GitHub's
// $GITHUB_STEP_SUMMARY): the totals (Totals) and an overview table of the
// runs' verdicts; for every sweep, a table of the leader mailbox over its
// variants (offered, served, rejected, dropped, the run's lost, max depth,
// wait p50/p99) and the comparisons across them; then per run its verdict
// and why, the key numbers, the expectations (✓ pass, ✗ fail, – not
// judged) and its baseline comparison, if it was compared with one. All
// text from the reports is escaped.
func Markdown(w io.Writer, runs []Run) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("# fleetsim scenarios\n\n")
	if len(runs) == 0 {
		p("No scenario ran.\n")
		return bw.Flush()
	}
	p("**%s.**\n\n", mdText(Totals(runs)))
	p("| scenario | variant | result | expectations | baseline |\n|---|---|---|---|---|\n")
	for _, run := range runs {
		r, st := run.Report, run.Verdict.Status
		pass, fail, nj := result.Tally(r.Verdicts)
		p("| %s | %s | %s %s | %d ✓ %d ✗ %d – | %s |\n", mdText(r.Scenario), mdText(r.Variant), st.Icon(), st.Word(), pass, fail, nj, mdText(baselineCell(run.Baseline)))
	}
	p("\n")

	// A scenario's description is said once: in its sweep's section, or
	// under its first run.
	told := map[string]bool{}
	for _, s := range sweeps(runs) {
		p("## Sweep: %s\n\n", mdText(s.Scenario))
		if s.Description != "" {
			p("%s\n\n", mdText(s.Description))
		}
		told[s.Scenario] = true
		p("Leader mailbox per variant: requests and telemetry offered to it, served, refused with \"full\" (rejected), dropped by its policy; lost is the run's unaccounted messages.\n\n")
		p("| variant | offered | served | rejected | dropped | lost | max depth | wait p50 | wait p99 | |\n")
		p("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, row := range sweepRows(s) {
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s %s |\n", mdText(row.Variant), row.Offered, row.Served, row.Rejected, row.Dropped, row.Lost, row.Depth, row.P50, row.P99, row.Status.Icon(), row.Status.Word())
		}
		p("\n")
		markdownChecks(p, "Comparisons across the variants:", "comparison", s.Comparisons)
	}

	for _, run := range runs {
		markdownRun(p, run, !told[run.Report.Scenario])
		told[run.Report.Scenario] = true
	}
	return bw.Flush()
}

// baselineCell is the overview's baseline column.
func baselineCell(c *Comparison) string {
	switch {
	case c == nil:
		return "–"
	case c.Skipped != "":
		return "not compared"
	case c.Regressed():
		return plural(len(c.Regressions()), "regression", "regressions")
	}
	return "✓"
}

// markdownChecks writes a table of checks under a title line.
func markdownChecks(p func(string, ...any), title, kind string, vs []result.Verdict) {
	if len(vs) == 0 {
		return
	}
	p("%s\n\n| | %s | check | detail |\n|---|---|---|---|\n", title, kind)
	for _, v := range vs {
		p("| %s | %s | %s | %s |\n", v.Status.Mark(), mdText(v.Name), mdCode(v.Check, true), mdText(v.Detail))
	}
	p("\n")
}

// markdownRun writes one run's section; describe adds its scenario's
// description.
func markdownRun(p func(string, ...any), run Run, describe bool) {
	r, v := run.Report, run.Verdict
	p("## %s %s\n\n", v.Status.Icon(), mdText(name(r)))
	if describe && r.Description != "" {
		p("%s\n\n", mdText(r.Description))
	}
	p("%s\n\n", mdText(runLine(r)))
	p("**%s**: %s\n\n", v.Status.Word(), mdText(v.Text()))
	if run := r.Result.Run; !run.KeptUp && r.Err == "" {
		why := "(" + run.Behind() + ")"
		if why == "()" { // a report without its lags
			why = fmt.Sprintf("at speed %s (lag max %s)", num(run.Speed), secs(run.LagMax))
		}
		p("> ⚠️ The machine could not keep up %s: timing expectations were not judged and timings not compared with the baseline.\n\n", mdText(why))
	}

	if r.Err == "" {
		// A sweep's comparison table carries its variants' main numbers;
		// each variant's full list is folded away to keep the summary short.
		if r.Variant != "" {
			p("<details><summary>Key numbers</summary>\n\n")
		}
		p("| | value | in expect: |\n|---|---|---|\n")
		for _, k := range keyNumbers(r) {
			names := make([]string, len(k.Names))
			for i, n := range k.Names {
				names[i] = mdCode(n, true)
			}
			p("| %s | %s | %s |\n", mdText(k.Label), mdText(k.Value), strings.Join(names, " "))
		}
		p("\n")
		if r.Variant != "" {
			p("</details>\n\n")
		}
	}

	if len(r.Verdicts) > 0 {
		p("| | expectation | check | detail |\n|---|---|---|---|\n")
		for _, v := range r.Verdicts {
			p("| %s | %s | %s | %s |\n", v.Status.Mark(), mdText(v.Name), mdCode(v.Check, true), mdText(v.Detail))
		}
		p("\n")
	}
	if r.Variant == "" {
		// A sweep's are in its section.
		markdownChecks(p, "Comparisons across the sweep's variants:", "comparison", r.Comparisons)
	}

	if run.Baseline != nil {
		markdownBaseline(p, run.Baseline)
	}
}

func markdownBaseline(p func(string, ...any), c *Comparison) {
	if c.Skipped != "" {
		p("**Baseline**: not compared: %s\n\n", mdText(c.Skipped))
		return
	}
	p("**Baseline**: %s, %d better, %d not compared (%s compared).\n\n",
		plural(len(c.Regressions()), "regression", "regressions"), c.count(Better), c.count(NotCompared), plural(c.Compared, "metric", "metrics"))
	if len(c.Diffs) > 0 {
		p("| | metric | baseline | got | rule | why |\n|---|---|--:|--:|---|---|\n")
		for _, d := range c.Diffs {
			got := num(d.Got)
			if d.Absent {
				got = "–"
			}
			p("| %s | %s | %s | %s | %s | %s |\n", outcomeText(d.Outcome), mdCode(d.Metric, true), num(d.Baseline), got, mdText(d.Rule.String()), mdText(d.Why))
		}
		p("\n")
	}
	if len(c.New) > 0 {
		names := make([]string, 0, maxNew)
		for _, n := range c.New[:min(len(c.New), maxNew)] {
			names = append(names, mdCode(n, false))
		}
		more := ""
		if len(c.New) > maxNew {
			more = fmt.Sprintf(" and %d more", len(c.New)-maxNew)
		}
		p("Not in the baseline, so not compared: %s%s.\n\n", strings.Join(names, ", "), more)
	}
	for _, n := range c.Notes {
		p("Note: %s.\n\n", mdText(n))
	}
}

// mdText escapes text for Markdown: every ASCII punctuation character that
// could start markup (emphasis, links, HTML, table cells) is backslash-
// escaped, and line breaks become spaces so a table row stays one row.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '~', '!', '&':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mdCode puts s in a code span, fenced with more backticks than s holds.
// In a table cell a | must still be escaped (GitHub splits cells first).
func mdCode(s string, inTable bool) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
