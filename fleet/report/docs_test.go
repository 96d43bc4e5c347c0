package report

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryRule keeps docs/REPORTS.md's table of default rules in
// step with the code: a row per metric, with the rule Capture gives it.
func TestDocsListEveryRule(t *testing.T) {
	doc, err := os.ReadFile("../../docs/REPORTS.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for p, r := range rules {
		better := string(r.Better)
		if better == "" {
			better = "–"
		}
		plain := r
		plain.Better = None
		row := fmt.Sprintf("| `%s` | %s | %s |", p, plain, better)
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
}
