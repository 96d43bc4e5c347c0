package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestJUnitLoadFailures: files that did not load are a testsuite "load"
// with a failed testcase per file carrying its problems, valid against the
// JUnit schema.
func TestJUnitLoadFailures(t *testing.T) {
	fs := []LoadFailure{
		{File: "scenarios/a.yaml", Err: "scenarios/a.yaml:2:11: duration: \"10 minutes\" is not a duration\n\tduration: 10 minutes\n\t          ^"},
		{File: "scenarios/x.yaml", Err: "scenarios/x.yaml: not a regular file (a directory) \x00"},
	}
	var buf bytes.Buffer
	if err := JUnitLoadFailures(&buf, fs); err != nil {
		t.Fatal(err)
	}
	if err := validateJUnit(buf.Bytes()); err != nil {
		t.Fatalf("not valid against the JUnit schema: %v\n%s", err, buf.String())
	}
	var doc xSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 2 || doc.Failures != 2 || len(doc.Suites) != 1 || doc.Suites[0].Name != "load" || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("doc = %+v", doc)
	}
	for i, c := range doc.Suites[0].Cases {
		if c.Name != fs[i].File || c.Failure == nil || c.Failure.Type != "load" || c.Failure.Message != strings.ReplaceAll(firstLine(fs[i].Err), "\x00", "\ufffd") {
			t.Errorf("case %d = %+v", i, c)
		}
	}
	if c := doc.Suites[0].Cases[0]; c.Failure.Text != fs[0].Err {
		t.Errorf("failure text = %q, want the file's problems", c.Failure.Text)
	}
	if err := JUnitLoadFailures(&buf, nil); err == nil {
		t.Error("no failures: no error")
	}
}
