package report

import (
	"bytes"
	"encoding/xml"
	"html"
	"os"
	"path/filepath"
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

// TestRefusalSaysTheSame: a check that ran nothing says why in JUnit,
// summary.md and index.html alike: the headline and each file's problem.
func TestRefusalSaysTheSame(t *testing.T) {
	rf := Refusal{Phase: RefusedBaseline, Problems: []LoadFailure{
		{File: "testdata/baselines/herd.json", Err: "testdata/baselines/herd.json: the baseline was captured with 300 workers and this run has 100"},
		{File: "testdata/baselines/wave.json", Err: `testdata/baselines/wave.json: no baseline of "wave" to compare with`},
	}}
	const headline = "Nothing ran: 2 baselines cannot be compared with these runs"
	if got := rf.Headline(); got != headline {
		t.Fatalf("headline %q", got)
	}
	dir := t.TempDir()
	if err := WriteDirRefusal(dir, rf); err != nil {
		t.Fatal(err)
	}
	var junit bytes.Buffer
	if err := JUnitRefusal(&junit, rf); err != nil {
		t.Fatal(err)
	}
	if err := validateJUnit(junit.Bytes()); err != nil {
		t.Fatalf("not valid against the JUnit schema: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"junit": html.UnescapeString(junit.String()), "summary.md": strings.ReplaceAll(string(md), `\`, ""), "index.html": plain(string(idx))} {
		for _, want := range []string{headline, rf.Problems[0].Err, rf.Problems[1].Err} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, text)
			}
		}
	}
	if err := MarkdownRefusal(&bytes.Buffer{}, Refusal{Phase: "run", Problems: rf.Problems}); err == nil {
		t.Error("an unknown phase: no error")
	}
}
