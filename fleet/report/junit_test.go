package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestJUnitGolden(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := JUnit(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml.golden", buf.Bytes())
}

// The JUnit document as a CI system reads it.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       float64     `xml:"time,attr"`
	Timestamp  string      `xml:"timestamp,attr"`
	Properties []xProperty `xml:"properties>property"`
	Cases      []xCase     `xml:"testcase"`
	SystemOut  string      `xml:"system-out"`
}

type xProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      float64   `xml:"time,attr"`
	Skipped   *xMessage `xml:"skipped"`
	Error     *xMessage `xml:"error"`
	Failure   *xMessage `xml:"failure"`
	SystemOut string    `xml:"system-out"`
}

type xMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func TestJUnitStructure(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := JUnit(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	if err := validateJUnit(buf.Bytes()); err != nil {
		t.Fatalf("not valid against the JUnit schema: %v", err)
	}
	var doc xSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != len(reps) {
		t.Fatalf("%d suites for %d runs", len(doc.Suites), len(reps))
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`)
	var tests, failures, errs int
	for _, s := range doc.Suites {
		var f, e, sk int
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname == "" {
				t.Errorf("%s: testcase without name or classname: %+v", s.Name, c)
			}
			n := 0
			if c.Failure != nil {
				f, n = f+1, n+1
				if c.Failure.Message == "" || c.Failure.Type == "" || c.Failure.Text == "" {
					t.Errorf("%s/%s: failure without message, type or text", s.Name, c.Name)
				}
			}
			if c.Error != nil {
				e, n = e+1, n+1
			}
			if c.Skipped != nil {
				sk, n = sk+1, n+1
			}
			if n > 1 {
				t.Errorf("%s/%s: more than one outcome", s.Name, c.Name)
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != f || s.Errors != e || s.Skipped != sk {
			t.Errorf("%s: counts tests=%d failures=%d errors=%d skipped=%d, cases say %d %d %d %d",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, sk)
		}
		if !stamp.MatchString(s.Timestamp) {
			t.Errorf("%s: timestamp %q is not the schema's dateTime without zone", s.Name, s.Timestamp)
		}
		tests, failures, errs = tests+s.Tests, failures+s.Failures, errs+s.Errors
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errs {
		t.Errorf("testsuites counts %d/%d/%d, suites sum to %d/%d/%d", doc.Tests, doc.Failures, doc.Errors, tests, failures, errs)
	}

	byName := map[string]xSuite{}
	for _, s := range doc.Suites {
		byName[s.Name] = s
	}
	// What a CI page shows for each kind of run.
	herd := byName["thundering-herd"]
	if got := caseNames(herd); got != "run,nothing lost,leader depth bounded,every worker updated once,relay never stalls,deploy is quick,baseline" {
		t.Errorf("herd cases = %s", got)
	}
	if c := herd.Cases[4]; c.Failure == nil || c.Failure.Message != "relay.limit.min = 4" || !strings.Contains(c.Failure.Text, "relay.limit.min >= 5") {
		t.Errorf("failed expectation = %+v", c.Failure)
	}
	if c := herd.Cases[6]; c.Failure == nil || c.Failure.Message != "2 regressions against the baseline" ||
		!strings.Contains(c.Failure.Text, "relay.backpressure: baseline 5, got 25 (1.5× ± 10): rose from 5 to 25") ||
		!strings.Contains(c.Failure.Text, "deploys[1].delivered: baseline 4, got absent") ||
		strings.Contains(c.Failure.Text, "lost:") || !strings.Contains(c.SystemOut, "better lost: baseline 2, got 0") {
		t.Errorf("baseline case = %+v", c)
	}
	if !strings.Contains(herd.SystemOut, "<script>alert('x')</script>") {
		t.Errorf("timeline missing from system-out: %q", herd.SystemOut)
	}
	props := map[string]string{}
	for _, p := range herd.Properties {
		props[p.Name] = p.Value
	}
	if props["seed"] != "42" || props["speed"] != "10" || props["file"] != "scenarios/thundering-herd.yaml" || props["param.fleet.count"] != "1000" {
		t.Errorf("properties = %v", props)
	}
	if c := byName["wave-deploy"].Cases[2]; c.Skipped == nil || !strings.Contains(c.Skipped.Message, "could not keep up") {
		t.Errorf("not judged = %+v", c)
	}
	if c := byName["leader-crash"].Cases[0]; c.Name != "run" || c.Error == nil || c.Error.Message != brokenReport().Err {
		t.Errorf("run that did not complete = %+v", c)
	}
	rej := byName["mailbox-policies [leader.mailbox.policy=reject]"]
	// A baseline of another size compares nothing: the gate fails.
	if c := rej.Cases[len(rej.Cases)-1]; c.Name != "baseline" || c.Failure == nil || c.Failure.Type != "baseline" || !strings.Contains(c.Failure.Message, "1000 workers") {
		t.Errorf("baseline at another size = %+v", c)
	}
	if rej.Cases[0].Classname != "scenario.mailbox-policies.leader.mailbox.policy=reject" {
		t.Errorf("classname = %s", rej.Cases[0].Classname)
	}
}

func caseNames(s xSuite) string {
	var n []string
	for _, c := range s.Cases {
		n = append(n, c.Name)
	}
	return strings.Join(n, ",")
}

func TestJUnitHostileText(t *testing.T) {
	r := small()
	r.Err = "boom \x00\x1b]8;; <![CDATA[ ]]> & </error>"
	r.Verdicts = []result.Verdict{{Name: "a\"b<c", Check: "x ]]> y", Status: result.Fail, Detail: "d\x07e"}}
	var buf bytes.Buffer
	if err := JUnit(&buf, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	if err := validateJUnit(buf.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
}

// validateJUnit checks doc against the common JUnit schema (Jenkins'
// junit-10.xsd, which GitHub's and GitLab's readers accept): the elements
// that may appear where, in which order and how often, their attributes
// and the required ones. encoding/xml's strict decoder checks the XML
// itself.
func validateJUnit(doc []byte) error {
	type child struct {
		name     string
		min, max int // max -1: unbounded
	}
	type spec struct {
		attrs    []string
		required []string
		children []child
		text     bool
	}
	schema := map[string]spec{
		"testsuites": {attrs: []string{"name", "time", "tests", "failures", "disabled", "errors"},
			children: []child{{"testsuite", 0, -1}}},
		"testsuite": {attrs: []string{"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname", "id", "package"},
			required: []string{"name", "tests"},
			children: []child{{"properties", 0, 1}, {"testcase", 0, -1}, {"system-out", 0, 1}, {"system-err", 0, 1}}},
		"properties": {children: []child{{"property", 1, -1}}},
		"property":   {attrs: []string{"name", "value"}, required: []string{"name", "value"}},
		"testcase": {attrs: []string{"name", "assertions", "time", "classname", "status"}, required: []string{"name"},
			children: []child{{"skipped", 0, 1}, {"error", 0, -1}, {"failure", 0, -1}, {"system-out", 0, -1}, {"system-err", 0, -1}}},
		"skipped":    {attrs: []string{"message"}, text: true},
		"error":      {attrs: []string{"message", "type"}, text: true},
		"failure":    {attrs: []string{"message", "type"}, text: true},
		"system-out": {text: true},
		"system-err": {text: true},
	}
	type open struct {
		name     string
		children []string
	}
	var stack []open
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := tok.Name.Local
			sp, ok := schema[n]
			if !ok {
				return fmt.Errorf("element <%s> is not in the schema", n)
			}
			if len(stack) == 0 {
				if root != "" || n != "testsuites" {
					return fmt.Errorf("root <%s>, want one <testsuites>", n)
				}
				root = n
			} else {
				stack[len(stack)-1].children = append(stack[len(stack)-1].children, n)
			}
			have := map[string]bool{}
			for _, a := range tok.Attr {
				if !contains(sp.attrs, a.Name.Local) {
					return fmt.Errorf("<%s %s>: attribute not in the schema", n, a.Name.Local)
				}
				have[a.Name.Local] = true
			}
			for _, a := range sp.required {
				if !have[a] {
					return fmt.Errorf("<%s>: required attribute %s missing", n, a)
				}
			}
			stack = append(stack, open{name: n})
		case xml.EndElement:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sp := schema[top.name]
			i := 0
			for _, c := range sp.children {
				k := 0
				for i < len(top.children) && top.children[i] == c.name {
					i, k = i+1, k+1
				}
				if k < c.min || (c.max >= 0 && k > c.max) {
					return fmt.Errorf("<%s>: %d <%s>, want %d to %d", top.name, k, c.name, c.min, c.max)
				}
			}
			if i != len(top.children) {
				return fmt.Errorf("<%s>: child <%s> out of the schema's order %v", top.name, top.children[i], top.children)
			}
		case xml.CharData:
			if len(stack) > 0 && !schema[stack[len(stack)-1].name].text && len(bytes.TrimSpace(tok)) > 0 {
				return fmt.Errorf("<%s>: text %q where the schema has none", stack[len(stack)-1].name, tok)
			}
		}
	}
	if root == "" {
		return fmt.Errorf("no <testsuites>")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestValidateJUnitRejects: the validator above can fail.
func TestValidateJUnitRejects(t *testing.T) {
	for _, doc := range []string{
		`<testsuite name="a" tests="0"></testsuite>`,
		`<testsuites><testsuite tests="0"></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"><testcase name="x"/><properties><property name="a" value="b"/></properties></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"><testcase name="x"><failure/><skipped/></testcase></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"><testcase name="x"><skipped/><skipped/></testcase></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1" file="x"></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"><properties></properties></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"><testcase name="x"><note/></testcase></testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1">text</testsuite></testsuites>`,
		`<testsuites><testsuite name="a" tests="1"></testsuites>`,
	} {
		if err := validateJUnit([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}

// TestJUnitKeptUp: a timing check not judged on a run that fell behind is
// a skipped testcase whose message names the lag; with RequireKeptUp the
// run's own testcase fails, naming it too, and a run that kept up is left
// alone.
func TestJUnitKeptUp(t *testing.T) {
	why := "service lag p99 2.3s > threshold 1s at speed 50"
	behind := small()
	behind.Scenario = "behind"
	behind.Result.Run = result.RunInfo{Seed: 1, Speed: 50, ServiceLagP99: 2.3, LagThreshold: 1}
	// A count judged beside it: a run whose every check is skipped is not
	// judged, and fails on its own account (TestJUnitNotJudged).
	behind.Verdicts = []result.Verdict{{Check: "leader.mailbox.wait.p99 <= 1", Status: result.NotJudged, Detail: why}, {Check: "lost == 0", Status: result.Pass}}
	kept := small()
	kept.Scenario = "kept"
	kept.Result.Run.KeptUp = true
	for _, require := range []bool{false, true} {
		var buf bytes.Buffer
		if err := JUnit(&buf, Judge([]*result.Report{behind, kept}, nil, Options{RequireKeptUp: require})); err != nil {
			t.Fatal(err)
		}
		if err := validateJUnit(buf.Bytes()); err != nil {
			t.Fatalf("not valid against the JUnit schema: %v", err)
		}
		var doc xSuites
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		b, k := doc.Suites[0], doc.Suites[1]
		if c := b.Cases[1]; c.Skipped == nil || c.Skipped.Message != why {
			t.Errorf("require %v: timing check = %+v, want skipped with %q", require, c, why)
		}
		run := b.Cases[0]
		switch {
		case !require && (run.Failure != nil || b.Failures != 0):
			t.Errorf("without RequireKeptUp the run failed: %+v", run.Failure)
		case require && (run.Failure == nil || run.Failure.Type != "kept_up" || run.Failure.Message != why || b.Failures != 1 || doc.Failures != 1):
			t.Errorf("with RequireKeptUp: run case %+v, suite failures %d, total %d; want one kept_up failure saying %q", run.Failure, b.Failures, doc.Failures, why)
		}
		if k.Failures != 0 || k.Cases[0].Failure != nil {
			t.Errorf("require %v: a run that kept up failed: %+v", require, k.Cases[0].Failure)
		}
	}
}

// TestJUnitNotJudged: a run whose every check was not judged (here each
// divided by zero) has shown nothing: its "run" testcase fails with type
// not_judged, so the suite does not pass on skipped cases alone; the
// summary says "not judged" too. A run with one check judged beside it
// passes as before.
func TestJUnitNotJudged(t *testing.T) {
	dz := result.Verdict{Check: "fleet.count / workers.crashes >= 1", Status: result.NotJudged, Detail: "not judged: division by zero (the divisor workers.crashes = 0)"}
	none := small()
	none.Scenario = "none"
	none.Verdicts = []result.Verdict{dz, dz}
	some := small()
	some.Scenario = "some"
	some.Verdicts = []result.Verdict{dz, {Check: "lost == 0", Status: result.Pass}}
	var buf bytes.Buffer
	if err := JUnit(&buf, judged([]*result.Report{none, some}, nil)); err != nil {
		t.Fatal(err)
	}
	if err := validateJUnit(buf.Bytes()); err != nil {
		t.Fatalf("not valid against the JUnit schema: %v", err)
	}
	var doc xSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	n, s := doc.Suites[0], doc.Suites[1]
	if run := n.Cases[0]; run.Failure == nil || run.Failure.Type != "not_judged" || n.Failures != 1 || doc.Failures != 1 {
		t.Errorf("a run with no check judged: run case %+v, suite failures %d, total %d; want one not_judged failure", run.Failure, n.Failures, doc.Failures)
	}
	if s.Failures != 0 || s.Cases[0].Failure != nil {
		t.Errorf("a run with a check judged failed: %+v", s.Cases[0].Failure)
	}

	buf.Reset()
	if err := Markdown(&buf, judged([]*result.Report{none, some}, nil)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**1 of 2 runs passed, 1 not judged.**", "| none |  | ❌ not judged | 0 ✓ 0 ✗ 2 – |", "**not judged**: no check could be judged (2 not judged)", "| some |  | ✅ passed |"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, buf.String())
		}
	}
}
