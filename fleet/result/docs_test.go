package result

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite what is derived: docs/SCENARIOS.md's tables of names from the registry, the json tags from the expr tags")

// nameTableHead starts each table of names in docs/SCENARIOS.md.
const nameTableHead = "| Name | Meaning |\n|---|---|\n"

// nameRows renders ms as rows of a table of names: consecutive metrics
// with one meaning share a row. With short, the names after a row's first
// are written from their parent's dot (`.taken`) when they share it.
func nameRows(ms []Metric, short bool) string {
	var b strings.Builder
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].Meaning == ms[i].Meaning && (ms[j].Kind == Timing) == (ms[i].Kind == Timing) {
			j++
		}
		first := DocName(ms[i].Name)
		parent := first[:strings.LastIndex(first, ".")+1]
		var names []string
		for _, m := range ms[i:j] {
			n := DocName(m.Name)
			if short && len(names) > 0 && parent != "" && strings.HasPrefix(n, parent) {
				n = "." + strings.TrimPrefix(n, parent)
			}
			names = append(names, "`"+n+"`")
		}
		meaning := ms[i].Meaning
		if ms[i].Kind == Timing {
			meaning = "*timing* — " + meaning
		}
		b.WriteString("| " + strings.Join(names, ", ") + " | " + meaning + " |\n")
		i = j
	}
	return b.String()
}

// promHead starts docs/SCENARIOS.md's table of the names the leader's
// /metrics also counts.
const promHead = "| Name | Series on the leader's /metrics |\n|---|---|\n"

// promRows renders that table: consecutive names of one series share a
// row.
func promRows() string {
	var ms []Metric
	for _, m := range registry {
		if m.Prom != "" {
			ms = append(ms, m)
		}
	}
	var b strings.Builder
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].Prom == ms[i].Prom {
			j++
		}
		var names []string
		for _, m := range ms[i:j] {
			names = append(names, "`"+DocName(m.Name)+"`")
		}
		b.WriteString("| " + strings.Join(names, ", ") + " | `" + ms[i].Prom + "` |\n")
		i = j
	}
	return b.String()
}

// docTables are docs/SCENARIOS.md's tables of names, each the first with
// its head after its section's heading: the run's names, a window's
// (shortened), and those the leader's /metrics counts too.
func docTables() []struct {
	after, head, rows string
} {
	var run, window []Metric
	for _, m := range registry {
		if strings.HasPrefix(m.Name, "windows[*].") {
			window = append(window, m)
		} else {
			run = append(run, m)
		}
	}
	return []struct {
		after, head, rows string
	}{
		{"\n## Windows\n", nameTableHead, nameRows(window, true)},
		{"\n### Names\n", nameTableHead, nameRows(run, false)},
		{"\n### The same numbers on the leader's /metrics\n", promHead, promRows()},
	}
}

// TestDocsNames keeps docs/SCENARIOS.md's tables of names the registry's:
// every name, its meaning and its timing mark, and the leader's
// Prometheus series that counts the same. go test ./fleet/result
// -run TestDocsNames -update rewrites them; read the diff.
func TestDocsNames(t *testing.T) {
	const path = "../../docs/SCENARIOS.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, tb := range docTables() {
		at := strings.Index(doc, tb.after)
		if at < 0 {
			t.Fatalf("docs/SCENARIOS.md has no %q", strings.TrimSpace(tb.after))
		}
		head := strings.Index(doc[at:], tb.head)
		if head < 0 {
			t.Fatalf("docs/SCENARIOS.md has no table of names after %q", strings.TrimSpace(tb.after))
		}
		start := at + head + len(tb.head)
		end := start + strings.Index(doc[start:], "\n\n") + 1
		if !strings.HasPrefix(doc[start:], "|") {
			end = start // an empty table
		}
		if got := doc[start:end]; got != tb.rows {
			if !*update {
				t.Errorf("docs/SCENARIOS.md's table of names after %q is not the registry's (fleet/result/registry.go); run go test ./fleet/result -run TestDocsNames -update, then read the diff. It has:\n%s\nThe registry gives:\n%s",
					strings.TrimSpace(tb.after), got, tb.rows)
				continue
			}
			doc = doc[:start] + tb.rows + doc[end:]
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
