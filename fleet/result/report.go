package result

import "time"

// Verdict is one expectation's outcome.
type Verdict struct {
	Name   string `json:"name"`
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Detail explains a failure ("leader.mailbox.max_depth = 1412") or
	// why a check was not judged.
	Detail string `json:"detail,omitempty"`
}

// Status of a Verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// NotJudged is a timing check on a run that fell behind, or a
	// division by zero; a run whose every check is not judged is
	// NotJudged too (Report.Outcome), and does not pass.
	NotJudged Status = "not_judged"
)

// Record is something that happened during a run: a timeline event, a
// dashboard key press, a warning.
type Record struct {
	T      Seconds `json:"t"`
	Kind   string  `json:"kind"` // "event", "control", "warning"
	Text   string  `json:"text"`
	LagSec Seconds `json:"lag,omitempty"` // how late it fired
}

// Report is one run: what ran, what it measured, and the verdicts. Its JSON
// form is the report schema documented in docs/SCENARIOS.md.
type Report struct {
	Scenario    string `json:"scenario"`
	File        string `json:"file,omitempty"`
	Description string `json:"description,omitempty"`
	// Variant names the sweep values of this run ("leader.mailbox.policy=reject"),
	// empty without a sweep.
	Variant  string            `json:"variant,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	Started  time.Time         `json:"started"`
	Result   Result            `json:"result"`
	Verdicts []Verdict         `json:"expectations"`
	// Comparisons are the sweep's compare: checks, judged across its
	// variants once the last has run; they are set on the report of the
	// sweep's last variant (judge.Comparisons).
	Comparisons []Verdict `json:"comparisons,omitempty"`
	Records     []Record  `json:"records"`
	Samples     []Sample  `json:"samples"`
	// Err is set when the run could not complete (the error text).
	Err string `json:"error,omitempty"`
	// Stopped says what stopped the run before its end, and when ("q on
	// the dashboard at 12.3s of 40s (simulated)"), set by whoever ran it:
	// the report is partial and the run was not judged, which is not a
	// failure. It is empty for a run that ran to its end.
	Stopped string `json:"stopped,omitempty"`
}

// Mark is the status as one character: ✓ pass, ✗ fail, – not judged.
func (s Status) Mark() string {
	switch s {
	case Pass:
		return "✓"
	case Fail:
		return "✗"
	}
	return "–"
}

// Tally counts verdicts by status.
func Tally(vs []Verdict) (pass, fail, notJudged int) {
	for _, v := range vs {
		switch v.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			notJudged++
		}
	}
	return pass, fail, notJudged
}

// Outcome is the run's verdict on its own checks: NotJudged when it was
// stopped before its end; Fail when it did not complete or an expectation
// or comparison failed; NotJudged when it has checks and not one of them
// could be judged (each divided by zero, or read a timing on a run that
// fell behind): a run that has shown nothing does not pass; Pass
// otherwise (a run with no checks passes by completing). fleet/report's
// Judge adds the baseline and tells a stopped run from one not judged.
func (r *Report) Outcome() Status {
	if r.Stopped != "" {
		return NotJudged
	}
	if r.Err != "" {
		return Fail
	}
	judged, checks := false, 0
	for _, vs := range [][]Verdict{r.Verdicts, r.Comparisons} {
		for _, v := range vs {
			checks++
			switch v.Status {
			case Fail:
				return Fail
			case Pass:
				judged = true
			}
		}
	}
	if checks > 0 && !judged {
		return NotJudged
	}
	return Pass
}

// Passed reports whether the run completed, no expectation failed and at
// least one was judged (Outcome is Pass).
func (r *Report) Passed() bool { return r.Outcome() == Pass }
