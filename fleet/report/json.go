package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// WriteJSON writes r as indented JSON: the report schema of docs/REPORTS.md.
// The output is stable (struct fields in order, map keys sorted), so two
// reports of the same run differ only where the run did. Empty lists are
// written as [] rather than null, so a reader can iterate them unguarded
// (jq '.records[]').
func WriteJSON(w io.Writer, r *result.Report) error {
	if r == nil {
		return errors.New("report: WriteJSON: nil report")
	}
	c := *r
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// Checks hold < and &; \u003c would make the file harder to read for
	// no gain: it is never embedded in HTML as is.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return fmt.Errorf("report: JSON of %s: %w", name(r), err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadJSON reads a report written by WriteJSON. Fields it does not know are
// ignored, so a newer report still reads; malformed JSON is an error naming
// the line and column.
func ReadJSON(rd io.Reader) (*result.Report, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("report: reading JSON: %w", err)
	}
	var r result.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, jsonError(data, err)
	}
	return &r, nil
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
