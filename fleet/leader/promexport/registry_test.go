package promexport

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetsim/fleetsim/fleet/result"
)

var descRE = regexp.MustCompile(`fqName: "([^"]+)", help: "((?:[^"\\]|\\.)*)"`)

// described is every series the collector describes: its help by name.
func described(t *testing.T) map[string]string {
	t.Helper()
	ch := make(chan *prometheus.Desc, len(allDescs)+1)
	New(nil, Options{}).Describe(ch)
	close(ch)
	helps := map[string]string{}
	for d := range ch {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name and help in %s", d)
		}
		help, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		helps[m[1]] = help
	}
	return helps
}

// exported is every metric name the collector describes.
func exported(t *testing.T) []string {
	t.Helper()
	return slices.Collect(maps.Keys(described(t)))
}

// TestHelpFromRegistry: a series that counts what a run's metric counts
// has the registry's help text (result.Metric.PromHelp): a series of the
// collector's own table (desc) that took a name the registry gives a
// run's metric, with help of its own, fails here.
func TestHelpFromRegistry(t *testing.T) {
	helps := described(t)
	fromRegistry := 0
	for name, help := range helps {
		var want []string
		for _, m := range result.Metrics() {
			if m.Prom == name {
				want = append(want, m.PromHelp())
			}
		}
		if len(want) == 0 {
			continue
		}
		fromRegistry++
		if !slices.Contains(want, help) {
			t.Errorf("%s: help %q, the registry's is %q", name, help, want)
		}
	}
	if fromRegistry < 20 {
		t.Errorf("only %d series take their name from the registry", fromRegistry)
	}
}

// TestRegistryPromNamesExported: every run metric the registry says the
// leader's /metrics also counts is a series the collector exports, so a
// dashboard and a scenario's report name the same thing alike.
func TestRegistryPromNamesExported(t *testing.T) {
	names := exported(t)
	n := 0
	for _, m := range result.Metrics() {
		if m.Prom == "" {
			continue
		}
		n++
		if !slices.Contains(names, m.Prom) {
			t.Errorf("%s: the registry names the Prometheus series %s, which /metrics does not export", m.Name, m.Prom)
		}
	}
	if n < 20 {
		t.Errorf("only %d registry entries name a Prometheus series", n)
	}
}

// promInDocsRE finds a Prometheus name in the docs; one followed by * or
// ( is a prefix ("fleetsim_deploy_*").
var promInDocsRE = regexp.MustCompile(`fleetsim_[a-z0-9_]*[a-z0-9(*]`)

// TestDocsPromNamesExported: every fleetsim_ series the docs name is one
// /metrics exports (a prefix: that some are).
func TestDocsPromNamesExported(t *testing.T) {
	names := exported(t)
	files, _ := filepath.Glob("../../../docs/*.md")
	files = append(files, "../../../README.md")
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range promInDocsRE.FindAllString(string(data), -1) {
			seen++
			if prefix, ok := strings.CutSuffix(strings.TrimSuffix(name, "("), "*"); ok || strings.HasSuffix(name, "(") {
				if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
					t.Errorf("%s names %s, a prefix of no series /metrics exports", f, name)
				}
				continue
			}
			base := name
			for _, s := range []string{"_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, s); ok && slices.Contains(names, b) {
					base = b
				}
			}
			if !slices.Contains(names, base) {
				t.Errorf("%s names %s, which /metrics does not export", f, name)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d Prometheus names found in the docs: the search is broken", seen)
	}
}
