package report

import (
	"fmt"
	"io"
)

// LoadFailure is a scenario file that could not be loaded.
type LoadFailure struct {
	File string // the path as given
	Err  string // its problems, one a line (scenario.Errors' text)
}

// JUnitLoadFailures writes JUnit XML for a check that ran nothing because
// files did not load: a testsuite "load" with a testcase per file that
// failed, its failure the file's problems, so that a CI page shows why
// there are no runs.
func JUnitLoadFailures(w io.Writer, fs []LoadFailure) error {
	if len(fs) == 0 {
		return fmt.Errorf("report: JUnitLoadFailures: no failure")
	}
	s := junitSuite{Name: "load", Time: seconds(0), Properties: []junitProperty{{"phase", "load"}}}
	for _, f := range fs {
		s.Cases = append(s.Cases, junitCase{
			Name:      f.File,
			Classname: "scenario.load",
			Time:      seconds(0),
			Failure:   &junitProblem{Message: firstLine(f.Err), Type: "load", Text: f.Err},
		})
	}
	s.Tests, s.Failures = len(s.Cases), len(s.Cases)
	return writeJUnit(w, junitSuites{Name: "fleetsim scenarios", Tests: s.Tests, Failures: s.Failures, Time: s.Time, Suites: []junitSuite{s}})
}
