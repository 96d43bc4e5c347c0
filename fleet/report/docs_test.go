package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryRule keeps docs/REPORTS.md's tables in step with the
// code: a row per metric with the rule Capture gives it, or why it is not
// kept, and a row per kind of metric with its default and measured band.
func TestDocsListEveryRule(t *testing.T) {
	doc, err := os.ReadFile("../../docs/REPORTS.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for p, s := range rules {
		better := string(s.Better)
		if better == "" {
			better = "–"
		}
		rule := string(s.Kind)
		if s.Scale != nil {
			rule += ", " + s.Scale.Name
		}
		row := fmt.Sprintf("| `%s` | %s | %s |", p, rule, better)
		if !strings.Contains(text, row) {
			t.Errorf("docs/REPORTS.md lacks the row %s", row)
		}
	}
	for p, why := range skipped {
		row := fmt.Sprintf("| `%s` | not kept: %s | |", p, why)
		if !strings.Contains(text, row) {
			t.Errorf("docs/REPORTS.md lacks the row %s", row)
		}
	}
	for _, sc := range scales {
		unit := ""
		if sc == &timings {
			unit = "s"
		}
		row := fmt.Sprintf("| %s | %s× ± %s%s | %s%s | %s |", sc.Name, num(sc.Factor), num(sc.Abs), unit, num(sc.Slack), unit, num(sc.MinFactor))
		if !strings.Contains(text, row) {
			t.Errorf("docs/REPORTS.md lacks the row %s", row)
		}
	}
}

// TestDocsExampleBands keeps the measured lines of docs/REPORTS.md's
// example file true to the formula: each band is what its runs give.
func TestDocsExampleBands(t *testing.T) {
	doc, err := os.ReadFile("../../docs/REPORTS.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(doc), "\n") {
		l = strings.TrimSuffix(strings.TrimSpace(l), ",")
		if !strings.HasPrefix(l, `{"metric":`) || !strings.Contains(l, `"runs":`) {
			continue
		}
		var m Metric
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		n++
		s := rules[pattern(m.Name)]
		if s.Scale == nil {
			continue
		}
		k, abs := s.Scale.band(m.Value, m.Min, m.Max, m.Runs)
		if k != m.Factor || abs != m.Abs {
			t.Errorf("%s: factor %v abs %v; its runs give %v and %v", m.Name, m.Factor, m.Abs, k, abs)
		}
	}
	if n == 0 {
		t.Error("docs/REPORTS.md has no measured example line")
	}
}
