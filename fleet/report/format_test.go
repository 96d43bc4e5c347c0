package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// metricName is what a metric's name looks like in Go source: dotted
// words, maybe an item of a list.
var metricName = regexp.MustCompile(`^[a-z_]+(\[[0-9*]+\])?(\.[a-z0-9_]+)+$|^[a-z_]+\.[a-z_]+(\[\*\])?$`)

// registered reports whether path ("deploys[0].delivered",
// "workers.at_version") names a metric of the registry.
func registered(path string) bool {
	pattern := regexp.MustCompile(`\[[0-9]+\]`).ReplaceAllString(path, "[*]")
	_, ok := result.Lookup(pattern)
	if !ok {
		_, ok = result.Lookup(pattern + "[*]")
	}
	return ok
}

// TestFormatNamesRegistered: every metric name format.go spells is the
// registry's, whose Format decides how it is shown; a name the registry
// lacks would be shown as "?".
func TestFormatNamesRegistered(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "format.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		lit, ok := node.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || !metricName.MatchString(s) {
			return true
		}
		n++
		if !registered(s) {
			t.Errorf("format.go names %q, which is not in the registry (fleet/result/registry.go)", s)
		}
		return true
	})
	if n < 25 {
		t.Errorf("only %d metric names found in format.go: the search is broken", n)
	}

	for _, r := range append([]*result.Report{herdReport(), behindReport()}, sweepReports()...) {
		for _, k := range keyNumbers(r) {
			for _, name := range k.Names {
				if !registered(name) {
					t.Errorf("key number %q names %q, which is not in the registry", k.Label, name)
				}
			}
			if strings.Contains(k.Value, "?") {
				t.Errorf("key number %q shows %q: a name the registry lacks", k.Label, k.Value)
			}
		}
	}
}

// TestShowByFormat: a value is shown as its metric's registry Format
// says.
func TestShowByFormat(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		v       float64
		want    string
	}{
		{"relay.delivered", 12345, "12,345"},
		{"lost", -2, "-2"},
		{"leader.mailbox.wait.p99", 0.012, "12 ms"},
		{"heartbeats.coalesced_ratio", 0.75, "75%"},
		{"relay.limit.min", 1500, "1500"},
		{"run.speed", 2.5, "2.5"},
		{"fleet.count", 10000, "10,000"},
		{"no.such.metric", 1, "?"},
	} {
		if got := show(tc.pattern, tc.v); got != tc.want {
			t.Errorf("show(%s, %v) = %q, want %q", tc.pattern, tc.v, got, tc.want)
		}
	}
}
