package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// JUnit writes runs as JUnit XML, the format CI systems (GitHub Actions
// test reporters, GitLab, Jenkins) display: a testsuite per run (scenario,
// or scenario [variant] for a sweep), its verdict in the property
// "status", with a testcase "run" (an error element with Report.Err when
// the run could not complete; a failure when it was not judged, or fell
// behind against Options.RequireKeptUp; skipped when it was stopped), a
// testcase per expectation and comparison (a failure element with the
// detail; skipped with the reason when not judged) and, when the run was
// compared with a baseline, a testcase "baseline" (a failure listing the
// regressions, or saying why nothing could be compared). A suite has a
// failure or an error exactly when its run failed or was not judged. The
// elements and attributes are those of the common JUnit schema (Jenkins'
// junit-10.xsd), in its order.
func JUnit(w io.Writer, runs []Run) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	doc := junitSuites{Name: "fleetsim scenarios"}
	var wall float64
	for _, run := range runs {
		s := suiteOf(run)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		wall += run.Report.Result.Run.WallSeconds
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = seconds(wall)
	return writeJUnit(w, doc)
}

// writeJUnit writes doc with its XML header.
func writeJUnit(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("report: JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// The JUnit document. Field order is element order: the schema fixes it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitSkipped `xml:"skipped"`
	Error     *junitProblem `xml:"error"`
	Failure   *junitProblem `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// suiteOf maps one run to its testsuite.
func suiteOf(run Run) junitSuite {
	r, v := run.Report, run.Verdict
	s := junitSuite{Name: name(r), Time: seconds(r.Result.Run.WallSeconds)}
	if !r.Started.IsZero() {
		// The schema's timestamp has no zone: UTC.
		s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	res := r.Result.Run
	s.Properties = []junitProperty{
		{"status", string(v.Status)},
		{"scenario", r.Scenario},
		{"seed", strconv.FormatUint(res.Seed, 10)},
		{"speed", num(res.Speed)},
		{"kept_up", strconv.FormatBool(res.KeptUp)},
	}
	if r.File != "" {
		s.Properties = append(s.Properties, junitProperty{"file", r.File})
	}
	if r.Variant != "" {
		s.Properties = append(s.Properties, junitProperty{"variant", r.Variant})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		s.Properties = append(s.Properties, junitProperty{"param." + k, r.Params[k]})
	}

	class := "scenario." + r.Scenario
	if r.Variant != "" {
		class += "." + r.Variant
	}
	runCase := junitCase{Name: "run", Classname: class, Time: seconds(res.WallSeconds)}
	switch {
	case v.Status == Stopped:
		// Not judged and not failed: the CI shows it as neither.
		runCase.Skipped = &junitSkipped{Message: "stopped " + v.Text()}
	case r.Err != "":
		runCase.Error = &junitProblem{Message: firstLine(r.Err), Type: "run", Text: r.Err}
	case v.Behind != "":
		runCase.Failure = &junitProblem{Message: v.Behind, Type: "kept_up", Text: "run.kept_up is false: " + v.Behind + "; its timing checks were not judged"}
	case v.Status == NotJudged:
		// Every check skipped would pass the suite: a run that has shown
		// nothing must not.
		n := len(r.Verdicts) + len(r.Comparisons)
		msg := fmt.Sprintf("not judged: none of its %d checks could be judged", n)
		runCase.Failure = &junitProblem{Message: msg, Type: "not_judged", Text: msg + " (each divided by zero, or read a timing on a run that fell behind): the run has shown nothing"}
	}
	s.Cases = append(s.Cases, runCase)

	s.Cases = append(s.Cases, verdictCases(r.Verdicts, class, "", "expectation")...)
	s.Cases = append(s.Cases, verdictCases(r.Comparisons, "scenario."+r.Scenario+".compare", "compare: ", "comparison")...)

	if run.Baseline != nil {
		s.Cases = append(s.Cases, junitBaseline(run, class))
	}

	for _, tc := range s.Cases {
		s.Tests++
		switch {
		case tc.Error != nil:
			s.Errors++
		case tc.Failure != nil:
			s.Failures++
		case tc.Skipped != nil:
			s.Skipped++
		}
	}

	var out strings.Builder
	for _, rec := range r.Records {
		fmt.Fprintf(&out, "%8.1fs %-8s %s", float64(rec.T), rec.Kind, rec.Text)
		if rec.LagSec > 0 {
			fmt.Fprintf(&out, " (%s late)", secs(rec.LagSec))
		}
		out.WriteByte('\n')
	}
	s.SystemOut = out.String()
	return s
}

// verdictCases maps verdicts to testcases: a failure element with the
// detail, skipped with the reason when not judged.
func verdictCases(vs []result.Verdict, class, prefix, kind string) []junitCase {
	var out []junitCase
	for i, v := range vs {
		n := v.Name
		if n == "" {
			n = v.Check
		}
		if n == "" {
			n = fmt.Sprintf("%s %d", kind, i+1)
		}
		tc := junitCase{Name: prefix + n, Classname: class, Time: seconds(0)}
		switch v.Status {
		case result.Pass:
		case result.Fail:
			msg := v.Detail
			if msg == "" {
				msg = kind + " failed"
			}
			tc.Failure = &junitProblem{Message: firstLine(msg), Type: kind, Text: v.Check + "\n" + msg}
		default:
			msg := v.Detail
			if msg == "" {
				msg = "not judged"
			}
			tc.Skipped = &junitSkipped{Message: msg}
		}
		out = append(out, tc)
	}
	return out
}

// junitBaseline is the "baseline" testcase: failed by regressions, or by
// a baseline nothing could be compared with; skipped only when the run
// itself did not complete or was stopped (its run case says so). Better
// and not-compared metrics go to its system-out so they show without
// failing anything.
func junitBaseline(run Run, class string) junitCase {
	c := run.Baseline
	tc := junitCase{Name: "baseline", Classname: class, Time: seconds(0)}
	if c.Skipped != "" {
		if run.Verdict.BaselineFailed {
			tc.Failure = &junitProblem{Message: "not compared: " + firstLine(c.Skipped), Type: "baseline", Text: c.Skipped}
		} else {
			tc.Skipped = &junitSkipped{Message: c.Skipped}
		}
		return tc
	}
	var fail, info strings.Builder
	for _, d := range c.Diffs {
		got := num(d.Got)
		if d.Absent {
			got = "absent"
		}
		line := fmt.Sprintf("%s: baseline %s, got %s (%s): %s\n", d.Metric, num(d.Baseline), got, d.Rule, d.Why)
		if d.Outcome == Regression {
			fail.WriteString(line)
		} else {
			info.WriteString(string(d.Outcome) + " " + line)
		}
	}
	if len(c.New) > 0 {
		fmt.Fprintf(&info, "not in the baseline, not compared: %s\n", strings.Join(c.New, ", "))
	}
	for _, n := range c.Notes {
		info.WriteString("note: " + n + "\n")
	}
	if n := len(c.Regressions()); n > 0 {
		tc.Failure = &junitProblem{
			Message: plural(n, "regression", "regressions") + " against the baseline",
			Type:    "baseline",
			Text:    fail.String(),
		}
	}
	tc.SystemOut = info.String()
	return tc
}

// seconds formats a JUnit time attribute (seconds, decimal).
func seconds(s float64) string {
	return strconv.FormatFloat(s, 'f', 3, 64)
}

// firstLine is the first line of s: a message attribute is shown on one
// line; the element's text holds all of it.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
