package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// ErrNoBaseline is returned (wrapped, with the path) by LoadBaseline when
// the file does not exist: the caller decides whether that fails a check or
// means "capture one".
var ErrNoBaseline = errors.New("no baseline")

// Baseline is a run's numbers that later runs of the same scenario are
// compared with, each with the rule that compares it. It is stored as JSON
// at BaselinePath, one metric a line, for a person to read and edit.
type Baseline struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant,omitempty"`
	// Seed, FleetCount and KeptUp describe the run the baseline was
	// captured from: a run at another fleet size is not compared, and a
	// run that fell behind gives no timings to compare with.
	Seed       uint64    `json:"seed"`
	FleetCount int       `json:"fleet_count"`
	KeptUp     bool      `json:"kept_up"`
	Captured   time.Time `json:"captured"`
	// Err is the captured run's error: a baseline of a run that did not
	// complete compares nothing.
	Err string `json:"error,omitempty"`
	// Help explains the rules to whoever edits the file; it is written by
	// Capture and ignored when comparing.
	Help    []string `json:"help,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// Metric is one number of a baseline: its expression path (the name an
// expect: line uses), its value and its rule.
type Metric struct {
	Name  string  `json:"metric"`
	Value float64 `json:"value"`
	Rule
}

// help is the text Capture puts at the top of every baseline file.
var help = []string{
	"Each metric is compared with the run's value by its rule. Edit a rule or a value, or delete a metric's line to stop comparing it.",
	"rule exact: the run must have this value.",
	"rule tolerance: within rel x |value| or abs of it, whichever is wider (rel 0.5 = ±50%).",
	"rule timing (seconds): from value/factor - abs to value*factor + abs; not compared when the run or this baseline's run fell behind its schedule.",
	"better lower or higher: a change that way beyond the rule is reported as better, not as a regression.",
	"A run at another fleet size (fleet_count) is not compared. docs/REPORTS.md has the details.",
}

// Capture makes a baseline of r: every number of its Result that a baseline
// keeps (docs/REPORTS.md lists the ones it leaves out, and why), each with
// its default rule.
func Capture(r *scenario.Report) Baseline {
	b := Baseline{
		Scenario:   r.Scenario,
		Variant:    r.Variant,
		Seed:       r.Result.Run.Seed,
		FleetCount: r.Result.Fleet.Count,
		KeptUp:     r.Result.Run.KeptUp,
		Captured:   r.Started,
		Err:        r.Err,
		Help:       help,
		Metrics:    []Metric{},
	}
	for _, l := range leaves(&r.Result) {
		if rule, ok := ruleFor(l); ok {
			b.Metrics = append(b.Metrics, Metric{Name: l.Path, Value: l.Value, Rule: rule})
		}
	}
	return b
}

// Recapture makes a baseline of r that keeps old's edits: the metrics old
// has (a line a user deleted stays deleted) with old's rules (a rule a
// user widened stays wide), each with r's value. A metric of old that r
// lacks is dropped. An old baseline of another scenario, variant or fleet
// size is not an edit of this one: Recapture then returns Capture(r).
func Recapture(old Baseline, r *scenario.Report) Baseline {
	b := Capture(r)
	if old.Scenario != b.Scenario || old.Variant != b.Variant || old.FleetCount != b.FleetCount || len(old.Metrics) == 0 {
		return b
	}
	now := make(map[string]float64, len(b.Metrics))
	for _, m := range b.Metrics {
		now[m.Name] = m.Value
	}
	b.Metrics = []Metric{}
	for _, m := range old.Metrics {
		if v, ok := now[m.Name]; ok {
			m.Value = v
			b.Metrics = append(b.Metrics, m)
		}
	}
	return b
}

// UpdateBaseline records r as the baseline at path: Recapture over the
// file there if it is a valid baseline, Capture otherwise.
func UpdateBaseline(path string, r *scenario.Report) error {
	old, err := LoadBaseline(path)
	if err != nil && !errors.Is(err, ErrNoBaseline) {
		return fmt.Errorf("%w (fix or delete the file to capture it afresh)", err)
	}
	return SaveBaseline(path, Recapture(old, r))
}

// BaselinePath is where the baseline of a scenario (and sweep variant) is
// stored under dir: dir/<scenario>.json or dir/<scenario>--<variant>.json,
// made file-safe by FileName.
func BaselinePath(dir, scenarioName, variant string) string {
	return filepath.Join(dir, FileName(scenarioName, variant)+".json")
}

// LoadBaseline reads the baseline at path. A missing file is an error
// wrapping ErrNoBaseline; a malformed one names the line and column, or
// the metric and what would be valid.
func LoadBaseline(path string) (Baseline, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Baseline{}, fmt.Errorf("%s: %w", path, ErrNoBaseline)
	}
	if err != nil {
		return Baseline{}, err
	}
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	// A misspelt key ("fator") would otherwise be dropped silently and the
	// rule would compare with the default.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		line, col, ok := jsonPos(data, err)
		if !ok {
			// An unknown field: the decoder has just read it.
			line, col = lineCol(data, dec.InputOffset())
		}
		return Baseline{}, fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
	}
	if err := b.Validate(); err != nil {
		return Baseline{}, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Validate reports the first thing wrong with b: a missing scenario, a
// metric without a name, a name twice, or an invalid rule.
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
		line, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", m.Name, err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		buf.Write(line)
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
