package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// LoadBaseline reads the baseline at path. A missing file is an error
// wrapping ErrNoBaseline; a malformed one names the line and column, or
// the metric and what would be valid. A file written before bands
// replaced the tolerance rule is refused with the two ways out.
func LoadBaseline(path string) (Baseline, error) {
	return loadBaseline(path, false)
}

// fileMetric is a metric's line as a file may hold it: with rel, the
// parameter of the replaced tolerance rule, read only to say what to do.
type fileMetric struct {
	Metric
	Rel float64 `json:"rel,omitempty"`
}

// loadBaseline reads the baseline at path. With legacy, lines of the
// replaced tolerance rule are read as bands with their default parameters
// (UpdateBaseline measures them anew); without, they are an error.
func loadBaseline(path string, legacy bool) (Baseline, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Baseline{}, fmt.Errorf("%s: %w", path, ErrNoBaseline)
	}
	if err != nil {
		return Baseline{}, err
	}
	var f struct {
		Baseline
		Metrics []fileMetric `json:"metrics"` // shadows Baseline.Metrics
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	// A misspelt key ("fator") would otherwise be dropped silently and the
	// rule would compare with the default.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		line, col, ok := jsonPos(data, err)
		if !ok {
			// An unknown field: the decoder has just read it.
			line, col = lineCol(data, dec.InputOffset())
		}
		return Baseline{}, fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
	}
	b := f.Baseline
	b.Metrics = make([]Metric, len(f.Metrics))
	var old []int // the tolerance lines
	for i, m := range f.Metrics {
		b.Metrics[i] = m.Metric
		switch {
		case m.Kind == tolerance:
			old = append(old, i)
		case m.Rel != 0:
			return Baseline{}, fmt.Errorf("%s: metrics[%d] %s: rel belongs to the replaced tolerance rule; a %q rule takes factor and abs", path, i, m.Name, m.Kind)
		}
	}
	if len(old) > 0 && !legacy {
		return Baseline{}, toleranceError(path, data, b, old)
	}
	for _, i := range old {
		m := &b.Metrics[i]
		m.Rule = defaultRule(m.Name, m.Better)
	}
	if err := b.Validate(); err != nil {
		return Baseline{}, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// toleranceError names the first tolerance line of b, how many there are,
// and the two fixes: recapture, or the new line written by hand.
func toleranceError(path string, data []byte, b Baseline, old []int) error {
	m := b.Metrics[old[0]]
	at := path
	if q, err := json.Marshal(m.Name); err == nil {
		if i := bytes.Index(data, q); i >= 0 {
			line, col := lineCol(data, int64(i))
			at = fmt.Sprintf("%s:%d:%d", path, line, col)
		}
	}
	fixed := Metric{Name: m.Name, Value: m.Value, Rule: defaultRule(m.Name, m.Better)}
	line, _ := json.Marshal(fixed)
	others := ""
	if n := len(old) - 1; n > 0 {
		others = fmt.Sprintf(" (and %d more of its lines)", n)
	}
	return fmt.Errorf(`%s: metrics[%d] %s: rule "tolerance"%s was replaced by "band", from value/factor - abs to value*factor + abs, so that a fall to a tenth fails as a rise to tenfold does. `+
		`Recapture the file with sim check --update-baseline --repeat 10 (it keeps the metrics the file lists and measures their bands), or write each such line by hand in the new form: %s`,
		at, old[0], m.Name, others, line)
}

// defaultRule is the rule Capture gives the metric named name (one of a
// Result's paths), with its default band, and the direction better.
func defaultRule(name string, better Direction) Rule {
	m, _ := result.Lookup(pattern(name))
	s, kept := specOf(m)
	if !kept || s.Scale == nil {
		s = count(None)
	}
	r := s.rule()
	r.Better = better
	return r
}

// pattern turns a metric's path into its rule table key: every index or
// map key (a quoted string, which may hold brackets) becomes [*].
func pattern(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] != '[' {
			b.WriteByte(path[i])
			continue
		}
		quoted := false
		for i++; i < len(path); i++ {
			c := path[i]
			if quoted && c == '\\' {
				i++
				continue
			}
			if c == '"' {
				quoted = !quoted
			}
			if c == ']' && !quoted {
				break
			}
		}
		b.WriteString("[*]")
	}
	return b.String()
}

// Validate reports the first thing wrong with b: a missing scenario, a
// metric without a name, a name twice, an invalid rule or spread.
func (b Baseline) Validate() error {
	if b.Scenario == "" {
		return errors.New(`"scenario" is missing`)
	}
	seen := make(map[string]bool, len(b.Metrics))
	for i, m := range b.Metrics {
		if m.Name == "" {
			return fmt.Errorf("metrics[%d]: \"metric\" (its name) is missing", i)
		}
		if seen[m.Name] {
			return fmt.Errorf("metrics[%d] %s: listed twice", i, m.Name)
		}
		seen[m.Name] = true
		if err := m.Rule.Validate(); err != nil {
			return fmt.Errorf("metrics[%d] %s: %w", i, m.Name, err)
		}
		if err := m.Spread.validate(); err != nil {
			return fmt.Errorf("metrics[%d] %s: %w", i, m.Name, err)
		}
	}
	return nil
}

func (s Spread) validate() error {
	switch {
	case s.Runs < 0:
		return fmt.Errorf("runs %d: must be the number of runs measured (or left out)", s.Runs)
	case s.Runs == 0 && (s.Min != 0 || s.Max != 0):
		return errors.New("min and max are the spread of the runs measured: give runs too, or leave all three out")
	case s.Min > s.Max:
		return fmt.Errorf("min %s is above max %s", num(s.Min), num(s.Max))
	}
	return nil
}

// SaveBaseline writes b to path (creating its directory), one metric a
// line. It replaces the file atomically, so an interrupted update leaves
// the old baseline.
func SaveBaseline(path string, b Baseline) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	data, err := b.encode()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// line is a metric as its line in the file: a measured spread is written
// whole (min 0 included), an unmeasured one not at all.
type line struct {
	Name  string  `json:"metric"`
	Value float64 `json:"value"`
	Rule
	Runs int      `json:"runs,omitempty"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
}

// encode writes the header fields indented and each metric on its own
// line: a baseline diff in review then shows one line per changed number.
func (b Baseline) encode() ([]byte, error) {
	type fields Baseline // without the methods, so no recursion
	head, err := json.MarshalIndent(struct {
		fields
		Metrics []Metric `json:"metrics,omitempty"` // shadows fields.Metrics: written below
	}{fields: fields(b)}, "", "  ")
	if err != nil {
		return nil, err
	}
	metrics := b.Metrics
	var buf bytes.Buffer
	buf.Write(head[:len(head)-2]) // drop "\n}"
	buf.WriteString(",\n  \"metrics\": [")
	for i, m := range metrics {
		l := line{Name: m.Name, Value: m.Value, Rule: m.Rule}
		if m.Runs > 0 {
			l.Runs, l.Min, l.Max = m.Runs, &m.Min, &m.Max
		}
		text, err := json.Marshal(l)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", m.Name, err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		buf.Write(text)
	}
	if len(metrics) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	return buf.Bytes(), nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
