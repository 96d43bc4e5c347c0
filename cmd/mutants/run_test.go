package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSim is a stand-in for the sim binary: it behaves as $FAKE_SIM says,
// writing a report with a failed expectation into --report for "fail".
const fakeSim = `#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = "--report" ] && dir=$2; shift; done
case "$FAKE_SIM" in
pass) exit 0 ;;
fail) printf '%s' '{"scenario":"s","variant":"v","expectations":[{"name":"held","check":"a","status":"pass"},{"name":"broke","check":"b","status":"fail"}],"comparisons":[{"name":"cmp","check":"c","status":"fail"}]}' > "$dir/s.json"; exit 4 ;;
unjudged) printf '%s' '{"status":"not_judged","reasons":["no check could be judged (1 not judged), so the run has shown nothing"],"scenario":"s","expectations":[{"name":"ratio","check":"a / b","status":"not_judged"}]}' > "$dir/s.json"; exit 4 ;;
crash) echo "panic: boom" >&2; exit 2 ;;
hang) exec sleep 30 ;;
esac
`

// TestRunScenarioOutcomes: exit 4 names the failed checks from the
// reports, or the runs not judged (their verdict's status) with why;
// another exit or a run past the timeout is a crash, exit 0 a pass.
func TestRunScenarioOutcomes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "sim")
	if err := os.WriteFile(bin, []byte(fakeSim), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &suite{workers: 300, timeout: 2 * time.Second}
	for _, tc := range []struct {
		mode, failed, unjudged, crash string
	}{
		{mode: "pass"},
		{mode: "fail", failed: "s [v]: broke; s: cmp"},
		{mode: "unjudged", unjudged: "s: no check could be judged (1 not judged), so the run has shown nothing"},
		{mode: "crash", crash: "s: exit 2: panic: boom"},
		{mode: "hang", crash: "s: no verdict within 2s"},
	} {
		t.Setenv("FAKE_SIM", tc.mode)
		p, err := s.runScenario(context.Background(), dir, bin, "s")
		if err != nil {
			t.Errorf("%s: %v", tc.mode, err)
			continue
		}
		if got, nj := strings.Join(p.failed, "; "), strings.Join(p.unjudged, "; "); got != tc.failed || nj != tc.unjudged || p.crash != tc.crash {
			t.Errorf("%s: failed %q not judged %q crash %q; want %q %q %q", tc.mode, got, nj, p.crash, tc.failed, tc.unjudged, tc.crash)
		}
		if p.passed() != (tc.mode == "pass") {
			t.Errorf("%s: passed() = %v", tc.mode, p.passed())
		}
	}
}

// TestRunScenarioSuiteError: a binary that cannot start is the suite's
// error, not a crash the mutant caused.
func TestRunScenarioSuiteError(t *testing.T) {
	s := &suite{workers: 300, timeout: time.Second}
	if _, err := s.runScenario(context.Background(), t.TempDir(), "/nonexistent/sim", "s"); err == nil {
		t.Fatal("a missing binary gave no error")
	}
}

// TestTableNotJudged: a mutant caught only by runs that judged none of
// their checks reads "caught: not judged" with why, and counts as caught
// (the gate exits 4 for it); one caught by a failed check reads as before.
func TestTableNotJudged(t *testing.T) {
	var out strings.Builder
	writeTable(&out, []Outcome{
		{Mutant: Mutant{Name: "zero-divisor", Mechanism: "m", Claim: "c"}, Status: Caught, NotJudged: true, By: "s: no check could be judged (1 not judged), so the run has shown nothing"},
		{Mutant: Mutant{Name: "off-by-one", Mechanism: "m", Claim: "c"}, Status: Caught, By: "s: broke"},
	})
	for _, want := range []string{
		"| `zero-divisor` | m | c | caught: not judged: s: no check could be judged (1 not judged), so the run has shown nothing |",
		"| `off-by-one` | m | c | s: broke |",
		"2 of 2 mutants caught.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
