// Package report turns scenario run reports (result.Report) into the files
// a person or a CI system reads: the JSON report, a Markdown summary that
// fits a CI job summary, a self-contained HTML page with charts over
// simulated time, JUnit XML, and baselines that later runs are compared
// with.
//
//	b, err := report.LoadBaseline(report.BaselinePath("testdata/baselines", rep.Scenario, rep.Variant))
//	if errors.Is(err, report.ErrNoBaseline) { ... } // capture one: report.UpdateBaseline(path, reps...) (repeats of rep: the bands are sized from their spread)
//	cmp := []report.Comparison{report.Compare(b, rep)}
//	runs := report.Judge([]*result.Report{rep}, cmp, report.Options{}) // each run's verdict, once
//	err = report.WriteDir("reports", runs) // <name>.json, <name>.html, index.html, summary.md
//	err = report.JUnit(f, runs)
//	err = report.Text(os.Stdout, runs)
//
// Every output reads the same Report and shows the same verdict (Judge:
// passed, failed, stopped or not judged, with its reasons): nothing here
// measures or recomputes a result, except rates per second in the charts,
// which are differences of the cumulative counters between samples.
//
// docs/REPORTS.md describes each file, the baseline format and its rules.
package report
