package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// LoadFailure is a file that could not be used: a scenario file that did
// not load, or a baseline the runs could not be compared with.
type LoadFailure struct {
	File string // the path as given
	Err  string // its problems, one a line (scenario.Errors' text)
}

// Phases of a Refusal.
const (
	// RefusedLoad: scenario files did not load.
	RefusedLoad = "load"
	// RefusedBaseline: baselines are missing, unreadable, or of runs the
	// check's cannot be compared with (another fleet size or gateway
	// layout): known before any run, so none starts.
	RefusedBaseline = "baseline"
)

// Refusal is a check that ran nothing because what it was asked cannot be
// checked: each problem names its file. The terminal (the command's
// error), JUnit, the Markdown summary and the report directory say the
// same, before any run starts.
type Refusal struct {
	Phase    string // RefusedLoad or RefusedBaseline
	Problems []LoadFailure
}

// Headline says why nothing ran: "Nothing ran: 2 baselines cannot be
// compared with these runs".
func (rf Refusal) Headline() string {
	n := len(rf.Problems)
	if rf.Phase == RefusedBaseline {
		return fmt.Sprintf("Nothing ran: %s cannot be compared with these runs", plural(n, "baseline", "baselines"))
	}
	return fmt.Sprintf("Nothing ran: %s did not load", plural(n, "scenario file", "scenario files"))
}

func (rf Refusal) check(fn string) error {
	if len(rf.Problems) == 0 {
		return fmt.Errorf("report: %s: no problem", fn)
	}
	if rf.Phase != RefusedLoad && rf.Phase != RefusedBaseline {
		return fmt.Errorf("report: %s: phase %q: want %q or %q", fn, rf.Phase, RefusedLoad, RefusedBaseline)
	}
	return nil
}

// JUnitLoadFailures writes JUnit XML for a check that ran nothing because
// files did not load: JUnitRefusal of phase RefusedLoad.
func JUnitLoadFailures(w io.Writer, fs []LoadFailure) error {
	return JUnitRefusal(w, Refusal{Phase: RefusedLoad, Problems: fs})
}

// JUnitRefusal writes JUnit XML for a check that ran nothing: a testsuite
// named after the phase ("load", "baseline"), the headline its system-out,
// with a failed testcase per file, its failure the file's problems, so
// that a CI page shows why there are no runs.
func JUnitRefusal(w io.Writer, rf Refusal) error {
	if err := rf.check("JUnitRefusal"); err != nil {
		return err
	}
	s := junitSuite{Name: rf.Phase, Time: seconds(0), Properties: []junitProperty{{"phase", rf.Phase}}, SystemOut: rf.Headline() + ".\n"}
	for _, f := range rf.Problems {
		s.Cases = append(s.Cases, junitCase{
			Name:      f.File,
			Classname: "scenario." + rf.Phase,
			Time:      seconds(0),
			Failure:   &junitProblem{Message: firstLine(f.Err), Type: rf.Phase, Text: f.Err},
		})
	}
	s.Tests, s.Failures = len(s.Cases), len(s.Cases)
	return writeJUnit(w, junitSuites{Name: "fleetsim scenarios", Tests: s.Tests, Failures: s.Failures, Time: s.Time, Suites: []junitSuite{s}})
}

// MarkdownRefusal writes the summary of a check that ran nothing: the
// headline and a row per file with its problems.
func MarkdownRefusal(w io.Writer, rf Refusal) error {
	if err := rf.check("MarkdownRefusal"); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# fleetsim scenarios\n\n**%s.**\n\n| file | problem |\n|---|---|\n", mdText(rf.Headline()))
	for _, f := range rf.Problems {
		fmt.Fprintf(bw, "| %s | %s |\n", mdCode(f.File, true), mdText(f.Err))
	}
	return bw.Flush()
}

// IndexRefusal writes index.html for a check that ran nothing.
func IndexRefusal(w io.Writer, rf Refusal) error {
	if err := rf.check("IndexRefusal"); err != nil {
		return err
	}
	return execute(w, refusalTmpl, rf)
}

// WriteDirRefusal writes the report directory of a check that ran
// nothing: index.html (IndexRefusal) and summary.md (MarkdownRefusal).
// The reports of earlier runs in dir are left alone; index.html no longer
// links them.
func WriteDirRefusal(dir string, rf Refusal) error {
	if err := rf.check("WriteDirRefusal"); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file, render := range map[string]func(io.Writer, Refusal) error{"index.html": IndexRefusal, "summary.md": MarkdownRefusal} {
		var buf bytes.Buffer
		if err := render(&buf, rf); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, file), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
