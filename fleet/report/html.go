package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// HTML writes run as one self-contained page (no scripts, no external
// assets): its verdict, the summary and key numbers, the expectations and
// comparisons, its baseline comparison when it was compared with one,
// charts over simulated time (inline SVG drawn with gonum/plot: the
// relay's limit per partition, titled AIMD or static, leader mailbox depth
// against capacity, outbox depth and oldest age, workers online and at the
// target version, throughput, rejections and backpressure per second, with
// the timeline's events as numbered markers), the timeline, and the full
// result. All text from the report is escaped.
func HTML(w io.Writer, run Run) error {
	if err := checkRun(run); err != nil {
		return fmt.Errorf("report: HTML: %w", err)
	}
	r := run.Report
	cs, err := charts(r)
	if err != nil {
		return err
	}
	res, err := json.MarshalIndent(r.Result, "", "  ")
	if err != nil {
		return fmt.Errorf("report: HTML of %s: result: %w", name(r), err)
	}
	d := pageData{
		Title: name(r), R: r, V: run.Verdict, Class: class(run.Verdict.Status), RunLine: runLine(r),
		Charts: cs, Result: string(res), Baseline: baselinePart(run),
	}
	if r.Err == "" {
		d.Keys = keyNumbers(r)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		d.Params = append(d.Params, [2]string{k, r.Params[k]})
	}
	n := 0
	for _, rec := range r.Records {
		row := recordRow{T: secs(rec.T), Kind: rec.Kind, Text: rec.Text}
		if rec.Kind == "event" {
			n++
			row.N = n
		}
		if rec.LagSec > 0 {
			row.Lag = secs(rec.LagSec)
		}
		d.Records = append(d.Records, row)
	}
	d.Behind = !r.Result.Run.KeptUp && r.Err == ""
	d.Why = "(" + r.Result.Run.Behind() + ")"
	if d.Why == "()" { // a report without its lags
		d.Why = fmt.Sprintf("at speed %s (lag max %s)", num(r.Result.Run.Speed), secs(r.Result.Run.LagMax))
	}
	return execute(w, pageTmpl, d)
}

// Index writes a page linking the HTML page of each run (as WriteDir
// names them), headed by the totals (Totals), with each run's verdict and,
// for a sweep, the leader mailbox's table over its variants and the
// comparisons across them.
func Index(w io.Writer, runs []Run) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	var d indexData
	for _, run := range runs {
		r := run.Report
		pass, fail, nj := result.Tally(r.Verdicts)
		d.Runs = append(d.Runs, indexRow{
			Name: name(r), Href: FileName(r.Scenario, r.Variant) + ".html",
			V: run.Verdict, Class: class(run.Verdict.Status), Pass: pass, Fail: fail, NotJudged: nj, Baseline: baselineCell(run.Baseline),
		})
	}
	d.Summary = Totals(runs)
	for _, s := range sweeps(runs) {
		d.Sweeps = append(d.Sweeps, indexSweep{Scenario: s.Scenario, Description: s.Description, Rows: sweepRows(s), Comparisons: s.Comparisons})
	}
	return execute(w, indexTmpl, d)
}

// baselinePart is the page's baseline section: nil when the run was not
// compared with a baseline.
func baselinePart(run Run) *baselineData {
	c := run.Baseline
	if c == nil {
		return nil
	}
	b := &baselineData{Skipped: c.Skipped, Failed: run.Verdict.BaselineFailed}
	if c.Skipped == "" {
		b.Line = fmt.Sprintf("%s, %d better, %d not compared (%s compared).",
			plural(len(c.Regressions()), "regression", "regressions"), c.count(Better), c.count(NotCompared), plural(c.Compared, "metric", "metrics"))
	}
	for _, d := range c.Diffs {
		got := num(d.Got)
		if d.Absent {
			got = "–"
		}
		b.Diffs = append(b.Diffs, diffRow{Outcome: outcomeText(d.Outcome), Regression: d.Outcome == Regression,
			Metric: d.Metric, Baseline: num(d.Baseline), Got: got, Rule: d.Rule.String(), Why: d.Why})
	}
	return b
}

// class is a status's CSS class.
func class(s Status) string {
	switch s {
	case Passed:
		return "pass"
	case Stopped:
		return "stopped"
	case NotJudged:
		return "notjudged"
	}
	return "fail"
}

// execute renders into a buffer first, so a template error leaves w
// untouched rather than holding half a page.
func execute(w io.Writer, t *template.Template, data any) error {
	bw := bufio.NewWriter(w)
	if err := t.Execute(bw, data); err != nil {
		return fmt.Errorf("report: %s: %w", t.Name(), err)
	}
	return bw.Flush()
}

type pageData struct {
	Title    string
	R        *result.Report
	V        Verdict
	Class    string // the status's CSS class
	RunLine  string
	Behind   bool
	Why      string // how the run fell behind, when it did
	Keys     []keyNumber
	Params   [][2]string
	Charts   []chart
	Records  []recordRow
	Result   string
	Baseline *baselineData
}

type baselineData struct {
	Skipped string // why nothing was compared
	Failed  bool   // the comparison fails the run
	Line    string // "2 regressions, 1 better, 0 not compared (127 metrics compared)."
	Diffs   []diffRow
}

type diffRow struct {
	Outcome, Metric, Baseline, Got, Rule, Why string
	Regression                                bool
}

type recordRow struct {
	N                  int // the event's number on the charts; 0 for others
	T, Kind, Text, Lag string
}

type indexData struct {
	Summary string // Totals: "2 of 3 runs passed, 1 failed"
	Runs    []indexRow
	Sweeps  []indexSweep
}

type indexRow struct {
	Name, Href, Baseline  string
	V                     Verdict
	Class                 string
	Pass, Fail, NotJudged int
}

type indexSweep struct {
	Scenario, Description string
	Rows                  []sweepRow
	Comparisons           []result.Verdict
}

var funcs = template.FuncMap{"class": class, "verdicts": verdictTable}

// verdictTable is what layout's "verdicts" part shows: a list of verdicts
// under a heading for their names.
func verdictTable(heading string, list any) any {
	return struct {
		Heading string
		List    any
	}{heading, list}
}

// style is shared by every page. It holds no < or &, so a page stays
// well-formed XML as well as HTML.
const style = `
body{font-family:system-ui,-apple-system,"Segoe UI",Arial,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}
h1{margin-bottom:.2em}
.sub{color:#555;margin-top:0}
.pass{color:#0a7a32}.fail{color:#b00020}.notjudged{color:#8a5a00}.stopped{color:#555}
.badge{display:inline-block;padding:.1em .6em;border-radius:.3em;color:#fff;font-size:.8em;vertical-align:middle}
.badge.pass{background:#0a7a32;color:#fff}.badge.fail{background:#b00020;color:#fff}
.badge.notjudged{background:#8a5a00;color:#fff}.badge.stopped{background:#666;color:#fff}
.warn{background:#fff4d6;border-left:4px solid #e69f00;padding:.5em 1em}
.err{background:#fde7ea;border-left:4px solid #b00020;padding:.5em 1em;white-space:pre-wrap}
table{border-collapse:collapse;margin:1em 0}
th,td{border-bottom:1px solid #ddd;padding:.3em .7em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:.9em;background:#f4f4f4;padding:0 .2em}
figure{margin:1.5em 0}
figcaption{color:#444}
figcaption h3{margin:0;color:#222}
svg{width:100%;height:auto}
svg text{font-family:"Liberation Sans",Arial,Helvetica,sans-serif !important}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:.85em}
`

// layout holds what every page shares: its head, and the table of
// verdicts that expectations and comparisons both use.
var layout = template.Must(template.New("layout").Funcs(funcs).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.}}</title>
<style>` + style + `</style>
</head>
<body>{{end}}
{{define "verdicts"}}<table>
<tr><th></th><th>{{.Heading}}</th><th>check</th><th>detail</th></tr>
{{range .List}}<tr class="{{if eq .Status "fail"}}fail{{else if eq .Status "pass"}}pass{{end}}"><td>{{.Status.Mark}}</td><td>{{.Name}}</td><td><code>{{.Check}}</code></td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{end}}
{{define "foot"}}</body>
</html>
{{end}}`))

// withLayout returns a template that can call layout's parts.
func withLayout(name, text string) *template.Template {
	return template.Must(template.Must(layout.Clone()).New(name).Parse(text))
}

var pageTmpl = withLayout("page", `{{template "head" printf "%s · fleetsim" .Title}}
<h1>{{.Title}} <span class="badge {{.Class}}">{{.V.Status.Word}}</span></h1>
{{with .R.Description}}<p>{{.}}</p>{{end}}
<p class="sub">{{.RunLine}}</p>
<p class="{{.Class}}" id="status"><strong>{{.V.Status.Word}}</strong>: {{.V.Text}}</p>
{{if .R.Err}}<div class="err">The run did not complete: {{.R.Err}}</div>{{end}}
{{if .Behind}}<p class="warn">The machine could not keep up {{.Why}}: timing expectations were not judged.</p>{{end}}
{{with .Keys}}
<h2>Key numbers</h2>
<table>
<tr><th></th><th>value</th><th>in expect:</th></tr>
{{range .}}<tr><td>{{.Label}}</td><td>{{.Value}}</td><td>{{range $i, $n := .Names}}{{if $i}} {{end}}<code>{{$n}}</code>{{end}}</td></tr>
{{end}}</table>
{{end}}
{{with .R.Verdicts}}
<h2>Expectations</h2>
{{template "verdicts" verdicts "expectation" .}}{{end}}
{{with .R.Comparisons}}
<h2>Comparisons across the sweep's variants</h2>
{{template "verdicts" verdicts "comparison" .}}{{end}}
{{with .Baseline}}
<h2>Baseline</h2>
{{if .Skipped}}<p class="{{if .Failed}}fail{{end}}">Not compared: {{.Skipped}}</p>{{else}}<p class="{{if .Failed}}fail{{else}}pass{{end}}">{{.Line}}</p>{{end}}
{{with .Diffs}}<table>
<tr><th></th><th>metric</th><th>baseline</th><th>got</th><th>rule</th><th>why</th></tr>
{{range .}}<tr class="{{if .Regression}}fail{{end}}"><td>{{.Outcome}}</td><td><code>{{.Metric}}</code></td><td class="n">{{.Baseline}}</td><td class="n">{{.Got}}</td><td>{{.Rule}}</td><td>{{.Why}}</td></tr>
{{end}}</table>{{end}}
{{end}}
{{with .Params}}
<h2>Parameters</h2>
<table>
{{range .}}<tr><td><code>{{index . 0}}</code></td><td>{{index . 1}}</td></tr>
{{end}}</table>
{{end}}
<h2>Over simulated time</h2>
{{if .Charts}}<p>Dashed vertical lines are the timeline's events, numbered as in the timeline below.</p>
{{range .Charts}}<figure>
<figcaption><h3>{{.Title}}</h3><p>{{.Caption}}</p></figcaption>
{{.SVG}}
</figure>
{{end}}{{else}}<p>Fewer than two samples were recorded: nothing to chart.</p>{{end}}
<h2>Timeline</h2>
{{if .Records}}<table>
<tr><th>#</th><th>time</th><th>kind</th><th>what</th><th>late by</th></tr>
{{range .Records}}<tr><td class="n">{{if .N}}{{.N}}{{end}}</td><td class="n">{{.T}}</td><td>{{.Kind}}</td><td>{{.Text}}</td><td class="n">{{.Lag}}</td></tr>
{{end}}</table>{{else}}<p>Nothing was recorded.</p>{{end}}
<h2>Result</h2>
<details><summary>The full result (the JSON report's "result")</summary>
<pre>{{.Result}}</pre>
</details>
{{template "foot"}}`)

var indexTmpl = withLayout("index", `{{template "head" "fleetsim scenarios"}}
<h1>fleetsim scenarios</h1>
<p id="totals"><strong>{{.Summary}}.</strong></p>
{{if .Runs}}<table>
<tr><th>run</th><th>result</th><th>✓</th><th>✗</th><th>–</th><th>baseline</th></tr>
{{range .Runs}}<tr><td><a href="{{.Href}}">{{.Name}}</a></td><td class="{{.Class}}"><strong>{{.V.Status.Word}}</strong>: {{.V.Text}}</td><td class="n">{{.Pass}}</td><td class="n">{{.Fail}}</td><td class="n">{{.NotJudged}}</td><td>{{.Baseline}}</td></tr>
{{end}}</table>{{end}}
{{range .Sweeps}}
<h2>Sweep: {{.Scenario}}</h2>
{{with .Description}}<p>{{.}}</p>{{end}}
<p>Leader mailbox per variant: requests and telemetry offered to it, served, refused with "full" (rejected), dropped by its policy; lost is the run's unaccounted messages.</p>
<table>
<tr><th>variant</th><th>offered</th><th>served</th><th>rejected</th><th>dropped</th><th>lost</th><th>max depth</th><th>wait p50</th><th>wait p99</th><th></th></tr>
{{range .Rows}}<tr><td>{{.Variant}}</td><td class="n">{{.Offered}}</td><td class="n">{{.Served}}</td><td class="n">{{.Rejected}}</td><td class="n">{{.Dropped}}</td><td class="n">{{.Lost}}</td><td class="n">{{.Depth}}</td><td class="n">{{.P50}}</td><td class="n">{{.P99}}</td><td class="{{class .Status}}">{{.Status.Word}}</td></tr>
{{end}}</table>
{{with .Comparisons}}
<h3>Comparisons across the variants</h3>
{{template "verdicts" verdicts "comparison" .}}{{end}}
{{end}}
{{template "foot"}}`)

var refusalTmpl = withLayout("refusal", `{{template "head" "fleetsim scenarios"}}
<h1>fleetsim scenarios</h1>
<p class="fail" id="totals"><strong>{{.Headline}}.</strong></p>
<table>
<tr><th>file</th><th>problem</th></tr>
{{range .Problems}}<tr><td><code>{{.File}}</code></td><td><pre>{{.Err}}</pre></td></tr>
{{end}}</table>
{{template "foot"}}`)
