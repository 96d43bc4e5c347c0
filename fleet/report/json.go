package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// WriteJSON writes run as indented JSON: the report schema of
// docs/REPORTS.md, the run's verdict first ("status" and "reasons"), then
// its report, then its baseline comparison when it was compared with one.
// The output is stable (struct fields in order, map keys sorted), so two
// reports of the same run differ only where the run did. Empty lists are
// written as [] rather than null, so a reader can iterate them unguarded
// (jq '.records[]').
func WriteJSON(w io.Writer, run Run) error {
	if err := checkRun(run); err != nil {
		return fmt.Errorf("report: WriteJSON: %w", err)
	}
	c := *run.Report
	if c.Verdicts == nil {
		c.Verdicts = []result.Verdict{}
	}
	if c.Records == nil {
		c.Records = []result.Record{}
	}
	if c.Samples == nil {
		c.Samples = []result.Sample{}
	}
	if c.Result.Deploys == nil {
		c.Result.Deploys = []result.DeployResult{}
	}
	reasons := run.Verdict.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	doc := jsonRun{Status: run.Verdict.Status, Reasons: reasons, Report: &c, Baseline: run.Baseline}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// Checks hold < and &; \u003c would make the file harder to read for
	// no gain: it is never embedded in HTML as is.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("report: JSON of %s: %w", name(run.Report), err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonRun is the JSON report: the verdict, the report's own fields, and
// the baseline comparison.
type jsonRun struct {
	Status  Status   `json:"status"`
	Reasons []string `json:"reasons"`
	*result.Report
	Baseline *Comparison `json:"baseline,omitempty"`
}

// ReadJSON reads the report of a file written by WriteJSON. Fields it does
// not know are ignored, so a newer report still reads; malformed JSON is an
// error naming the line and column.
func ReadJSON(rd io.Reader) (*result.Report, error) {
	run, err := ReadRun(rd)
	return run.Report, err
}

// ReadRun reads a file written by WriteJSON: the report, its baseline
// comparison if it has one, and its verdict's status and reasons as they
// were judged. Fields it does not know are ignored; malformed JSON is an
// error naming the line and column.
func ReadRun(rd io.Reader) (Run, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return Run{}, fmt.Errorf("report: reading JSON: %w", err)
	}
	doc := jsonRun{Report: &result.Report{}}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Run{}, jsonError(data, err)
	}
	return Run{Report: doc.Report, Baseline: doc.Baseline, Verdict: Verdict{Status: doc.Status, Reasons: doc.Reasons}}, nil
}

// jsonError adds the line and column to a decoding error that carries an
// offset.
func jsonError(data []byte, err error) error {
	if line, col, ok := jsonPos(data, err); ok {
		return fmt.Errorf("report: JSON line %d col %d: %w", line, col, err)
	}
	return fmt.Errorf("report: JSON: %w", err)
}

// jsonPos is where in data a decoding error happened, if it says.
func jsonPos(data []byte, err error) (line, col int, ok bool) {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col = lineCol(data, max(syn.Offset-1, 0)) // Offset is just past the offending byte
		return line, col, true
	case errors.As(err, &typ):
		line, col = lineCol(data, typ.Offset)
		return line, col, true
	}
	return 0, 0, false
}

// lineCol turns a byte offset into 1-based line and column numbers.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
