package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// ruleTableHead starts docs/REPORTS.md's table of every metric's rule.
const ruleTableHead = "| Metric | Rule | Better |\n|---|---|---|\n"

// ruleTable is that table's rows, from the registry: a row per number
// with the rule Capture gives it, or why it is not kept.
func ruleTable() string {
	var b strings.Builder
	for _, m := range result.Metrics() {
		if !m.Kind.Numeric() {
			continue
		}
		s, keep := specOf(m)
		if !keep {
			fmt.Fprintf(&b, "| `%s` | not kept: %s | |\n", m.Name, m.Why)
			continue
		}
		better := string(s.Better)
		if better == "" {
			better = "–"
		}
		rule := string(s.Kind)
		if s.Scale != nil {
			rule += ", " + s.Scale.Name
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.Name, rule, better)
	}
	return b.String()
}

// TestDocsListEveryRule keeps docs/REPORTS.md's tables in step with the
// code: its table of rules is the registry's (go test ./fleet/report -run
// TestDocsListEveryRule -update rewrites it), and a row per kind of
// metric gives its default and measured band.
func TestDocsListEveryRule(t *testing.T) {
	const path = "../../docs/REPORTS.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	before, rest, ok := strings.Cut(text, ruleTableHead)
	if !ok {
		t.Fatalf("docs/REPORTS.md has no table starting %q", ruleTableHead)
	}
	table, after, _ := strings.Cut(rest, "\n\n")
	if want := ruleTable(); table+"\n" != want {
		if *update {
			if err := os.WriteFile(path, []byte(before+ruleTableHead+want+"\n"+after), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("docs/REPORTS.md's table of rules is not the registry's; run go test ./fleet/report -run TestDocsListEveryRule -update, then read the diff. It has:\n%s\nThe registry gives:\n%s", table, want)
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
		s, keep := specFor(leaf{Pattern: pattern(m.Name)})
		if !keep || s.Scale == nil {
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
