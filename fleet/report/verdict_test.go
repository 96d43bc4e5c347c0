package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// verdictRuns is one run of each status, and one failed by its baseline
// alone: the runs every format must agree on.
func verdictRuns(t *testing.T) ([]*result.Report, []Comparison) {
	mk := func(name string, vs ...result.Verdict) *result.Report {
		r := small()
		r.Scenario = name
		r.Verdicts = vs
		return r
	}
	pass := result.Verdict{Name: "nothing lost", Check: "lost == 0", Status: result.Pass}
	fail := result.Verdict{Name: "nothing lost", Check: "lost == 0", Status: result.Fail, Detail: "lost = 3"}
	dz := result.Verdict{Name: "ratio", Check: "lost / workers.crashes < 1", Status: result.NotJudged, Detail: "not judged: division by zero"}

	passed := mk("passed", pass)
	failed := mk("failed", fail)
	stopped := mk("stopped")
	stopped.Stopped = "a signal at 3s of 40s (simulated)"
	unjudged := mk("unjudged", dz)
	regressed := mk("regressed", pass)

	b := capture(t, regressed)
	for i, m := range b.Metrics {
		if m.Name == "fleet.online" {
			b.Metrics[i].Value = 99 // exact: the run's 0 regresses
		}
	}
	reps := []*result.Report{passed, failed, stopped, unjudged, regressed}
	return reps, []Comparison{Compare(b, regressed)}
}

// TestJudge: each kind of run gets its status, and the reasons say why.
func TestJudge(t *testing.T) {
	pass := result.Verdict{Check: "lost == 0", Status: result.Pass}
	fail := result.Verdict{Check: "lost == 0", Status: result.Fail}
	nj := result.Verdict{Check: "lost / x", Status: result.NotJudged}
	behind := small()
	behind.Verdicts = []result.Verdict{pass}
	behind.Result.Run = result.RunInfo{Speed: 10, LagThreshold: 1, ServiceLagP99: 2.5}
	other := small()
	other.Result.Fleet.Count = 100
	b := capture(t, small())
	for _, tc := range []struct {
		name   string
		r      *result.Report
		c      *Comparison
		o      Options
		want   Status
		reason string
	}{
		{"no checks", small(), nil, Options{}, Passed, "it completed; it has no checks"},
		{"held", &result.Report{Verdicts: []result.Verdict{pass, nj}}, nil, Options{}, Passed, "1 expectation held, 1 not judged"},
		{"failed", &result.Report{Verdicts: []result.Verdict{pass, fail}}, nil, Options{}, Failed, "1 of 2 expectations failed"},
		{"comparison failed", &result.Report{Verdicts: []result.Verdict{pass}, Comparisons: []result.Verdict{fail}}, nil, Options{}, Failed, "1 of 1 comparison across the sweep's variants failed"},
		{"did not complete", &result.Report{Err: "boom"}, nil, Options{}, Failed, "the run did not complete: boom"},
		{"stopped", &result.Report{Stopped: "q on the dashboard at 3s of 40s (simulated)", Err: "ignored"}, nil, Options{}, Stopped, "by q on the dashboard at 3s of 40s (simulated), before its end: not judged"},
		{"not judged", &result.Report{Verdicts: []result.Verdict{nj, nj}}, nil, Options{}, NotJudged, "no check could be judged (2 not judged)"},
		{"baseline held", small(), &Comparison{Compared: 3}, Options{}, Passed, "no baseline regression"},
		{"baseline of another size", other, func() *Comparison { c := Compare(b, other); return &c }(), Options{}, Failed, "baseline not compared: the baseline was captured with 10 workers and this run has 100"},
		{"baseline regressed", small(), &Comparison{Compared: 1, Diffs: []Difference{{Metric: "lost", Outcome: Regression}}}, Options{}, Failed, "1 baseline regression"},
		{"fell behind", behind, nil, Options{}, Passed, "1 expectation held"},
		{"fell behind, required to keep up", behind, nil, Options{RequireKeptUp: true}, Failed, "fell behind its schedule: service lag p99 2.5s > threshold 1s at speed 10 (--require-kept-up)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.r, tc.c, tc.o)
			if v.Status != tc.want || !strings.Contains(v.Text(), tc.reason) {
				t.Errorf("verdict %s: %s; want %s: %s", v.Status, v.Text(), tc.want, tc.reason)
			}
		})
	}
}

// TestTotals: the headline counts runs by status, stopped ones apart, and
// the sweeps' comparisons, in the singular for one.
func TestTotals(t *testing.T) {
	run := func(s Status, cmp ...result.Status) Run {
		r := &result.Report{}
		for _, c := range cmp {
			r.Comparisons = append(r.Comparisons, result.Verdict{Status: c})
		}
		return Run{Report: r, Verdict: Verdict{Status: s}}
	}
	for _, tc := range []struct {
		runs []Run
		want string
	}{
		{[]Run{run(Passed)}, "1 of 1 run passed"},
		{[]Run{run(Failed)}, "0 of 1 run passed, 1 failed"},
		{[]Run{run(Stopped)}, "1 run stopped before its end, not judged"},
		{[]Run{run(Passed), run(NotJudged), run(Stopped), run(Stopped)}, "1 of 2 runs passed, 1 not judged; 2 runs stopped before their end, not judged"},
		{[]Run{run(Passed), run(Failed, result.Pass, result.Fail)}, "1 of 2 runs passed, 1 failed; 1 of 2 comparisons across a sweep's variants failed"},
		{[]Run{run(Passed, result.Pass)}, "1 of 1 run passed; 1 comparison across a sweep's variants held"},
		{[]Run{run(Passed, result.Pass, result.NotJudged)}, "1 of 1 run passed; 1 of 2 comparisons across a sweep's variants held, 1 not judged"},
	} {
		if got := Totals(tc.runs); got != tc.want {
			t.Errorf("Totals = %q, want %q", got, tc.want)
		}
	}
}

// TestEveryFormatSaysTheVerdict renders one run of each status (passed,
// failed, stopped, not judged, and one failed by a baseline regression) to
// every format, and reads each format back as its reader would: the
// terminal's line, the JSON's status and reasons, the JUnit suite's status
// property and whether it has a failure, the Markdown overview and
// section, the HTML page and the index. Each says the verdict Judge gave,
// and the terminal, summary.md and index.html the same totals.
func TestEveryFormatSaysTheVerdict(t *testing.T) {
	reps, cmp := verdictRuns(t)
	runs := judged(reps, cmp)
	want := map[string]Status{"passed": Passed, "failed": Failed, "stopped": Stopped, "unjudged": NotJudged, "regressed": Failed}
	for _, run := range runs {
		if got := run.Verdict.Status; got != want[run.Report.Scenario] {
			t.Fatalf("%s judged %s: %s", run.Report.Scenario, got, run.Verdict.Text())
		}
	}
	totals := Totals(runs)
	if totals != "1 of 4 runs passed, 2 failed, 1 not judged; 1 run stopped before its end, not judged" {
		t.Errorf("totals %q", totals)
	}

	var text, md, idx, junit bytes.Buffer
	for _, err := range []error{Text(&text, runs), Markdown(&md, runs), Index(&idx, runs), JUnit(&junit, runs)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var doc xSuites
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	suites := map[string]xSuite{}
	for _, s := range doc.Suites {
		suites[s.Name] = s
	}
	index := plain(idx.String())

	for _, run := range runs {
		r, v := run.Report, run.Verdict
		st, why := v.Status, v.Text()
		t.Run(r.Scenario, func(t *testing.T) {
			// Terminal: "FAIL failed: lost 0, …" and the reasons under it.
			if !strings.Contains(text.String(), "\n"+st.Label()+" "+r.Scenario+": ") && !strings.HasPrefix(text.String(), st.Label()+" "+r.Scenario+": ") {
				t.Errorf("terminal: no line headed %s %s", st.Label(), r.Scenario)
			}
			if !strings.Contains(text.String(), "\n  "+st.Word()+": "+why+"\n") {
				t.Errorf("terminal: no line %q", st.Word()+": "+why)
			}

			// JSON: an explicit status, and the reasons.
			var js bytes.Buffer
			if err := WriteJSON(&js, run); err != nil {
				t.Fatal(err)
			}
			var m struct {
				Status  string   `json:"status"`
				Reasons []string `json:"reasons"`
			}
			if err := json.Unmarshal(js.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			if m.Status != string(st) || strings.Join(m.Reasons, "; ") != why {
				t.Errorf("JSON: status %q reasons %q; want %q %q", m.Status, m.Reasons, st, why)
			}
			back, err := ReadRun(&js)
			if err != nil || back.Verdict.Status != st {
				t.Errorf("ReadRun: %v, status %q", err, back.Verdict.Status)
			}

			// JUnit: the status property; a failure or an error exactly
			// when the run fails a gate; a stopped run's case skipped.
			s, ok := suites[r.Scenario]
			if !ok {
				t.Fatalf("JUnit: no suite %s", r.Scenario)
			}
			prop := ""
			for _, p := range s.Properties {
				if p.Name == "status" {
					prop = p.Value
				}
			}
			if prop != string(st) {
				t.Errorf("JUnit: status property %q, want %q", prop, st)
			}
			if bad := s.Failures+s.Errors > 0; bad != st.Fails() {
				t.Errorf("JUnit: %d failures, %d errors for a run that is %s", s.Failures, s.Errors, st.Word())
			}
			if st == Stopped && (s.Cases[0].Skipped == nil || !strings.HasPrefix(s.Cases[0].Skipped.Message, "stopped ")) {
				t.Errorf("JUnit: the stopped run's case is %+v, want skipped", s.Cases[0])
			}

			// Markdown: the overview's row and the run's section.
			if row := "| " + r.Scenario + " |  | " + st.Icon() + " " + st.Word() + " |"; !strings.Contains(md.String(), row) {
				t.Errorf("summary.md: no row %q", row)
			}
			if sec := "## " + st.Icon() + " " + r.Scenario + "\n"; !strings.Contains(md.String(), sec) {
				t.Errorf("summary.md: no section %q", sec)
			}
			if line := "**" + st.Word() + "**: " + mdText(why) + "\n"; !strings.Contains(md.String(), line) {
				t.Errorf("summary.md: no line %q", line)
			}

			// HTML: the badge and the status line.
			var page bytes.Buffer
			if err := HTML(&page, run); err != nil {
				t.Fatal(err)
			}
			badge := regexp.MustCompile(`<span class="badge (\w+)">([^<]*)</span>`).FindStringSubmatch(page.String())
			colour := map[Status]string{Passed: "pass", Failed: "fail", Stopped: "stopped", NotJudged: "notjudged"}[st]
			if badge == nil || badge[1] != colour || badge[2] != st.Word() {
				t.Errorf("HTML: badge %q, want class %s saying %s", badge, colour, st.Word())
			}
			if !strings.Contains(plain(page.String()), st.Word()+": "+why) {
				t.Errorf("HTML: no status line %q", st.Word()+": "+why)
			}
			if run.Baseline != nil && !strings.Contains(plain(page.String()), "Baseline 1 regression, 0 better") {
				t.Errorf("HTML: the baseline's regression is not shown")
			}
			if st != Failed && strings.Contains(plain(page.String()), "failed") {
				t.Errorf("HTML: a run that is %s reads failed somewhere", st.Word())
			}

			// index.html: the run's row.
			if row := r.Scenario + " " + st.Word() + ": " + why; !strings.Contains(index, row) {
				t.Errorf("index.html: no row %q", row)
			}
		})
	}

	if !strings.HasSuffix(text.String(), "\n"+totals+"\n") {
		t.Errorf("terminal: does not end with the totals %q", totals)
	}
	if !strings.Contains(md.String(), "**"+mdText(totals)+".**") {
		t.Errorf("summary.md: no totals %q", totals)
	}
	if !strings.Contains(index, totals+".") {
		t.Errorf("index.html: no totals %q", totals)
	}
}

// plain is an HTML page's text: inline tags go, other tags become spaces
// (collapsed), entities are decoded.
func plain(page string) string {
	s := regexp.MustCompile(`</?(strong|a|span|code)\b[^>]*>`).ReplaceAllString(page, "")
	s = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " ")
	s = html.UnescapeString(s)
	return strings.Join(strings.Fields(s), " ")
}

// TestSweepComparisonsShown: the comparisons across a sweep's variants,
// its headline claims, are in index.html and summary.md with their
// marks, and counted in the totals; a failed one fails the sweep's last
// run in every format.
func TestSweepComparisonsShown(t *testing.T) {
	sweep := sweepReports()[1:] // the variants that pass
	last := sweep[len(sweep)-1]
	last.Comparisons = []result.Verdict{
		{Name: "reject bounds the wait", Check: "a < b", Status: result.Pass},
		{Name: "AIMD deploys twice as fast", Check: "c < d / 2", Status: result.Fail, Detail: "4.17 s vs 5.19 s"},
	}
	runs := judged(sweep, nil)
	if st := runs[len(runs)-1].Verdict.Status; st != Failed {
		t.Fatalf("the last variant with a failed comparison is %s", st)
	}
	const totals = "2 of 3 runs passed, 1 failed; 1 of 2 comparisons across a sweep's variants failed"
	if got := Totals(runs); got != totals {
		t.Errorf("totals %q, want %q", got, totals)
	}
	var md, idx, text, junit bytes.Buffer
	for _, err := range []error{Markdown(&md, runs), Index(&idx, runs), Text(&text, runs), JUnit(&junit, runs)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	index := plain(idx.String())
	for _, want := range []string{totals + ".", "Comparisons across the variants", "✓ reject bounds the wait a < b", "✗ AIMD deploys twice as fast c < d / 2 4.17 s vs 5.19 s",
		"1 of 2 comparisons across the sweep's variants failed"} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %q:\n%s", want, index)
		}
	}
	for _, want := range []string{"**" + totals + ".**", "Comparisons across the variants:", "| ✗ | AIMD deploys twice as fast | `c < d / 2` | 4.17 s vs 5.19 s |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if !strings.Contains(text.String(), "    ✗ AIMD deploys twice as fast: c < d / 2  (4.17 s vs 5.19 s)\n") || !strings.HasSuffix(text.String(), totals+"\n") {
		t.Errorf("terminal:\n%s", text.String())
	}
	if !strings.Contains(junit.String(), `<testcase name="compare: AIMD deploys twice as fast"`) || !strings.Contains(junit.String(), `type="comparison"`) {
		t.Errorf("JUnit lacks the failed comparison:\n%s", junit.String())
	}
}

// TestTextGolden: the terminal's rendering of every kind of run.
func TestTextGolden(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := Text(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	golden(t, "text.golden", buf.Bytes())
}
