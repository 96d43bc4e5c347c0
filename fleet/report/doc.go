// Package report turns scenario run reports (result.Report) into the files
// a person or a CI system reads: the JSON report, a Markdown summary that
// fits a CI job summary, a self-contained HTML page with charts over
// simulated time, JUnit XML, and baselines that later runs are compared
// with.
//
//	b, err := report.LoadBaseline(report.BaselinePath("testdata/baselines", rep.Scenario, rep.Variant))
//	if errors.Is(err, report.ErrNoBaseline) { ... } // capture one: report.UpdateBaseline(path, reps...) (repeats of rep: the bands are sized from their spread)
//	cmp := []report.Comparison{report.Compare(b, rep)}
//	err = report.WriteDir("reports", []*result.Report{rep}, cmp) // <name>.json, <name>.html, index.html, summary.md
//	err = report.JUnit(f, []*result.Report{rep}, cmp)
//
// Every output reads the same Report: nothing here measures or recomputes a
// result, except rates per second in the charts, which are differences of
// the cumulative counters between samples.
//
// docs/REPORTS.md describes each file, the baseline format and its rules.
package report
