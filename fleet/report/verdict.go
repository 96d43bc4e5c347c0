package report

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Status is a run's verdict in one word: the word the terminal, the JSON
// report ("status"), JUnit (the suite's "status" property), the Markdown
// summary and the HTML pages all show for the run.
type Status string

const (
	// Passed: the run completed, no check failed, at least one was judged
	// (if it has any), and its baseline, when it was compared with one,
	// did not regress.
	Passed Status = "passed"
	// Failed: the run did not complete, a check failed, or its baseline
	// regressed or could not be compared; or (Options.RequireKeptUp) it
	// fell behind its schedule.
	Failed Status = "failed"
	// Stopped: stopped before its end by whoever ran it (q on the
	// dashboard, a signal): not judged, and not a failure.
	Stopped Status = "stopped"
	// NotJudged: the run has checks and not one could be judged (each
	// divided by zero, or read a timing on a run that fell behind): it has
	// shown nothing, and does not pass.
	NotJudged Status = "not_judged"
)

// Word is the status in a sentence: passed, failed, stopped, not judged.
func (s Status) Word() string { return strings.ReplaceAll(string(s), "_", " ") }

// Label is the status at the head of a run's line on a terminal: PASS,
// FAIL, STOPPED, NOT JUDGED.
func (s Status) Label() string {
	switch s {
	case Passed:
		return "PASS"
	case Failed:
		return "FAIL"
	}
	return strings.ToUpper(s.Word())
}

// Icon is the status's mark in Markdown: ✅ passed, ❌ failed or not
// judged (neither passes a gate), ⏹️ stopped.
func (s Status) Icon() string {
	switch s {
	case Passed:
		return "✅"
	case Stopped:
		return "⏹️"
	}
	return "❌"
}

// Fails reports whether the status fails a gate (exit code 4): failed or
// not judged. A stopped run was not judged at all: it neither passes nor
// fails.
func (s Status) Fails() bool { return s == Failed || s == NotJudged }

// Verdict is a run's status and why, judged once (Judge) and shown alike
// by every report.
type Verdict struct {
	Status Status `json:"status"`
	// Reasons are short clauses, the weightiest first: why the run failed,
	// was stopped or not judged ("1 of 4 expectations failed", "1 baseline
	// regression"); for a run that passed, what held.
	Reasons []string `json:"reasons"`
	// Behind names the lag that passed its threshold when the run failed
	// for falling behind its schedule (Options.RequireKeptUp); "" otherwise.
	Behind string `json:"-"`
	// BaselineFailed is set when the baseline comparison fails the run: a
	// regression, or a baseline it could not be compared with.
	BaselineFailed bool `json:"-"`
}

// Text is the reasons as one sentence.
func (v Verdict) Text() string { return strings.Join(v.Reasons, "; ") }

// Options are what a command holds its runs to beyond their own checks.
type Options struct {
	// RequireKeptUp fails a run that fell behind its schedule (run.kept_up
	// false), naming the lag (sim check --require-kept-up). Without it
	// such a run passes on its counts, its timing checks not judged.
	RequireKeptUp bool
}

// Run is one run as every report shows it: its report, its comparison with
// its baseline, and its verdict.
type Run struct {
	Report *result.Report
	// Baseline is the run's comparison with its baseline; nil when it was
	// not compared with one (sim run compares none).
	Baseline *Comparison
	Verdict  Verdict
}

// Judge judges each report once: its own checks (result.Report.Outcome),
// its comparison in cmp (matched by scenario and variant; a report without
// one was not compared) and o. Every report of this package renders the
// Runs it returns, so none can say another word than the others.
func Judge(reps []*result.Report, cmp []Comparison, o Options) []Run {
	runs := make([]Run, len(reps))
	for i, r := range reps {
		if r == nil {
			continue // the reports refuse it (no report)
		}
		c := find(cmp, r)
		runs[i] = Run{Report: r, Baseline: c, Verdict: judge(r, c, o)}
	}
	return runs
}

// judge is one run's verdict: stopped, did not complete, failed checks, a
// baseline that regressed or compared nothing, a run that fell behind
// against o, not judged, or passed, in that order.
func judge(r *result.Report, c *Comparison, o Options) Verdict {
	switch {
	case r.Stopped != "":
		return Verdict{Status: Stopped, Reasons: []string{"by " + r.Stopped + ", before its end: not judged"}}
	case r.Err != "":
		return Verdict{Status: Failed, Reasons: []string{"the run did not complete: " + r.Err}}
	}
	var v Verdict
	pass, fail, nj := result.Tally(r.Verdicts)
	cpass, cfail, cnj := result.Tally(r.Comparisons)
	if fail > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%d of %s failed", fail, plural(len(r.Verdicts), "expectation", "expectations")))
	}
	if cfail > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%d of %s across the sweep's variants failed", cfail, plural(len(r.Comparisons), "comparison", "comparisons")))
	}
	if c != nil {
		switch {
		case c.Skipped != "":
			v.BaselineFailed = true
			v.Reasons = append(v.Reasons, "baseline not compared: "+c.Skipped)
		case c.Regressed():
			v.BaselineFailed = true
			v.Reasons = append(v.Reasons, plural(len(c.Regressions()), "baseline regression", "baseline regressions"))
		}
	}
	if run := r.Result.Run; o.RequireKeptUp && !run.KeptUp {
		v.Behind = run.Behind()
		if v.Behind == "" { // a report without its lags
			v.Behind = "could not keep up at speed " + num(run.Speed)
		}
		v.Reasons = append(v.Reasons, "fell behind its schedule: "+v.Behind+" (--require-kept-up)")
	}
	if len(v.Reasons) > 0 {
		v.Status = Failed
		return v
	}
	if r.Outcome() == result.NotJudged {
		v.Status = NotJudged
		v.Reasons = []string{fmt.Sprintf("no check could be judged (%d not judged), so the run has shown nothing", nj+cnj)}
		return v
	}
	v.Status = Passed
	switch {
	case len(r.Verdicts)+len(r.Comparisons) == 0:
		v.Reasons = append(v.Reasons, "it completed; it has no checks")
	default:
		held := plural(pass, "expectation held", "expectations held")
		if nj > 0 {
			held += fmt.Sprintf(", %d not judged", nj)
		}
		v.Reasons = append(v.Reasons, held)
	}
	if len(r.Comparisons) > 0 {
		held := plural(cpass, "comparison across the sweep's variants held", "comparisons across the sweep's variants held")
		if cnj > 0 {
			held += fmt.Sprintf(", %d not judged", cnj)
		}
		v.Reasons = append(v.Reasons, held)
	}
	if c != nil {
		v.Reasons = append(v.Reasons, "no baseline regression")
	}
	return v
}

// Totals counts the runs by status and the sweeps' comparisons by
// outcome, as the headline of the terminal's summary, summary.md and
// index.html says it: "2 of 3 runs passed, 1 failed; 1 of 2 comparisons
// across a sweep's variants failed". A stopped run is not judged, so it is
// counted apart from those that were.
func Totals(runs []Run) string {
	n := map[Status]int{}
	var cpass, cfail, cnj int
	for _, r := range runs {
		n[r.Verdict.Status]++
		p, f, nj := result.Tally(r.Report.Comparisons)
		cpass, cfail, cnj = cpass+p, cfail+f, cnj+nj
	}
	var parts []string
	if judged := len(runs) - n[Stopped]; judged > 0 || len(runs) == 0 {
		s := fmt.Sprintf("%d of %s passed", n[Passed], plural(judged, "run", "runs"))
		for _, st := range []Status{Failed, NotJudged} {
			if n[st] > 0 {
				s += fmt.Sprintf(", %d %s", n[st], st.Word())
			}
		}
		parts = append(parts, s)
	}
	switch n[Stopped] {
	case 0:
	case 1:
		parts = append(parts, "1 run stopped before its end, not judged")
	default:
		parts = append(parts, fmt.Sprintf("%d runs stopped before their end, not judged", n[Stopped]))
	}
	const across = " across a sweep's variants"
	switch cmp := cpass + cfail + cnj; {
	case cmp == 0:
	case cfail > 0:
		parts = append(parts, fmt.Sprintf("%d of %s%s failed", cfail, plural(cmp, "comparison", "comparisons"), across))
	case cpass == cmp:
		parts = append(parts, plural(cmp, "comparison", "comparisons")+across+" held")
	default:
		parts = append(parts, fmt.Sprintf("%d of %s%s held, %d not judged", cpass, plural(cmp, "comparison", "comparisons"), across, cnj))
	}
	return strings.Join(parts, "; ")
}
