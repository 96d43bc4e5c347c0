package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkersOutsideScale: a --workers outside the fleet sizes a scenario
// declares (scale.min, scale.max) is refused when the files load, before
// anything runs — exit 2, naming the flag, the file, the key and the
// range — by run, check and validate; check writes the refusal to --junit
// and no report. Every such file is named, not only the first. The
// bounds themselves load.
func TestWorkersOutsideScale(t *testing.T) {
	below := "--workers 5: testdata/ranged.yaml:7:14: scale.min: the scenario holds at 10 to 40 workers, not 5 (--workers)"
	above := "--workers 41: testdata/ranged.yaml:7:23: scale.max: the scenario holds at 10 to 40 workers, not 41 (--workers)"
	dir := t.TempDir()
	junit, reports := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "reports")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"validate", "testdata/ranged.yaml", "--workers", "5"}, []string{below}},
		{[]string{"validate", "testdata/ranged.yaml", "--workers", "41"}, []string{above}},
		{[]string{"run", "testdata/ranged.yaml", "--workers", "41", "--headless", "--report", reports}, []string{above}},
		// Two files refused: both are named.
		{[]string{"validate", "testdata/ranged.yaml", "testdata/ranged-too.yaml", "--workers", "5"}, []string{below, "--workers 5: testdata/ranged-too.yaml:"}},
		{[]string{"check", "testdata/ranged.yaml", "testdata/tiny.yaml", "--workers", "5", "--junit", junit, "--report", reports}, []string{below}},
	} {
		code, stdout, stderr := sim(t, tc.args...)
		if code != 2 {
			t.Errorf("sim %s: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("sim %s: stderr lacks %q:\n%s", strings.Join(tc.args, " "), w, stderr)
			}
		}
	}
	// A refusal before any run writes the refusal page --report gives
	// for every refusal, and no run's report.
	if runs, _ := filepath.Glob(filepath.Join(reports, "*.json")); len(runs) > 0 {
		t.Errorf("a refused run wrote run reports %v: nothing should have run", runs)
	}
	if b, err := os.ReadFile(filepath.Join(reports, "index.html")); err != nil || !strings.Contains(string(b), "scale.m") {
		t.Errorf("--report does not say why nothing ran: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), "scale.min: the scenario holds at 10 to 40 workers, not 5") {
		t.Errorf("--junit does not say why nothing ran: %v\n%s", err, b)
	}
	for _, n := range []string{"10", "40"} {
		if code, _, stderr := sim(t, "validate", "testdata/ranged.yaml", "--workers", n); code != 0 {
			t.Errorf("--workers %s, a bound of the range: exit %d\n%s", n, code, stderr)
		}
	}
}
