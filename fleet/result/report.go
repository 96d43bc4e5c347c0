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
	Pass      Status = "pass"
	Fail      Status = "fail"
	NotJudged Status = "not_judged" // a timing check on a run that fell behind, or a division by zero
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
	// sweep's last variant (JudgeComparisons).
	Comparisons []Verdict `json:"comparisons,omitempty"`
	Records     []Record  `json:"records"`
	Samples     []Sample  `json:"samples"`
	// Err is set when the run could not complete (the error text).
	Err string `json:"error,omitempty"`
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

// Passed reports whether the run completed and no expectation failed.
func (r *Report) Passed() bool {
	if r.Err != "" {
		return false
	}
	for _, vs := range [][]Verdict{r.Verdicts, r.Comparisons} {
		for _, v := range vs {
			if v.Status == Fail {
				return false
			}
		}
	}
	return true
}
