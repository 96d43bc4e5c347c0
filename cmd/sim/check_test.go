package main

import (
	"errors"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestCheckTenfold: a baseline whose count is ten times the run's, or a
// tenth of it, fails the check (exit 4) and names the metric, for the
// counts of testdata/bands.yaml's mechanisms: its coalesced heartbeats
// (about 60), and its "full" answers at the leader and from the config
// server (about 15 each) and the relay's offline skips (4) where the
// captured run had 10 or more, enough for a tenfold change to clear a
// band's slack. The baseline is captured from one run and then doctored;
// the checks are further runs.
func TestCheckTenfold(t *testing.T) {
	base := t.TempDir()
	args := []string{"check", "testdata/bands.yaml", "--baseline", base, "--report", "", "--log-level", "error", "--progress", "0"}
	if code, stdout, stderr := sim(t, append(args, "--update-baseline")...); code != 0 {
		t.Fatalf("--update-baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	path := report.BaselinePath(base, "bands", "")
	captured, err := report.LoadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range captured.Metrics {
		switch m.Name {
		case "heartbeats.coalesced", "leader.answered_full", "relay.backpressure", "relay.offline_skips":
			if m.Value >= 10 {
				names = append(names, m.Name)
			} else {
				t.Logf("%s = %g in the captured run: too small to doctor tenfold", m.Name, m.Value)
			}
		}
	}
	if !slices.Contains(names, "heartbeats.coalesced") {
		t.Fatalf("heartbeats.coalesced is not among %v: the scenario no longer coalesces", names)
	}
	for _, f := range []float64{10, 0.1} {
		b := captured
		b.Metrics = append([]report.Metric(nil), captured.Metrics...)
		for i, m := range b.Metrics {
			if slices.Contains(names, m.Name) {
				b.Metrics[i].Value = m.Value * f
			}
		}
		if err := report.SaveBaseline(path, b); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := sim(t, args...)
		t.Logf("baseline %g× the run's for %v:\n%s", f, names, stdout)
		if code != 4 {
			t.Errorf("baseline %g× the run's: exit %d, want 4\n%s\n%s", f, code, stdout, stderr)
		}
		// The regression's line: "      relay.backpressure: 13, baseline
		// 130 (3× ± 5): fell from 130 to 13, allowed …"
		moved := "fell"
		if f < 1 {
			moved = "rose"
		}
		for _, name := range names {
			if line := lineWith(stdout, "      "+name+": "); !strings.Contains(line, "): "+moved+" from ") {
				t.Errorf("baseline %s × %g: the regression is not named, or not as a %s:\n%s", name, f, moved, stdout)
			}
		}
	}
}

// TestCheckRepeat: --repeat measures a baseline from several runs (each
// line with its runs, min and max, the help saying how the bands were
// sized), and is refused without --update-baseline or below 1.
func TestCheckRepeat(t *testing.T) {
	base := t.TempDir()
	args := []string{"check", "testdata/bands.yaml", "--baseline", base, "--report", "", "--log-level", "error", "--progress", "0"}
	for _, bad := range [][]string{
		{"--repeat", "3"},
		{"--repeat", "1"},
		{"--repeat", "0", "--update-baseline"},
	} {
		code, _, stderr := sim(t, append(args, bad...)...)
		if code != 2 || !strings.Contains(stderr, "--repeat") {
			t.Errorf("%v: exit %d, want 2 naming --repeat; stderr: %s", bad, code, stderr)
		}
	}
	if _, err := os.Stat(report.BaselinePath(base, "bands", "")); !os.IsNotExist(err) {
		t.Fatalf("a refused --repeat wrote a baseline: %v", err)
	}

	code, stdout, stderr := sim(t, append(args, "--update-baseline", "--repeat", "2")...)
	if code != 0 || !strings.Contains(stdout, "round 2 of 2") {
		t.Fatalf("--repeat 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(base, "bands.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{
		`"Measured from 2 runs: value is their median; runs, min and max their spread.`,
		`{"metric":"heartbeats.coalesced","value":`,
		`{"metric":"relay.backpressure","value":`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the baseline lacks %s:\n%s", want, text)
		}
	}
	b, err := report.LoadBaseline(filepath.Join(base, "bands.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Metrics {
		if m.Runs != 2 {
			t.Errorf("%s: runs %d, want 2", m.Name, m.Runs)
		}
	}
}

// lineWith is the first line of text that starts with prefix, or "".
func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestEarlierFailures: with --repeat, a run of an earlier round that
// failed an expectation fails the command too (exit 4), and is printed:
// only the last round is reported in full.
func TestEarlierFailures(t *testing.T) {
	pass := &result.Report{Scenario: "s", Verdicts: []result.Verdict{{Check: "lost == 0", Status: result.Pass}}}
	fail := &result.Report{Scenario: "s", Verdicts: []result.Verdict{{Check: "lost == 0", Status: result.Fail, Detail: "lost = 3"}}}
	var out strings.Builder
	if err := earlierFailures(&out, [][]*result.Report{{pass}, {pass}}); err != nil || out.Len() != 0 {
		t.Errorf("every round passed: err %v, printed %q", err, out.String())
	}
	err := earlierFailures(&out, [][]*result.Report{{fail}, {pass}, {pass}})
	var ce *cli.Error
	if !errors.As(err, &ce) || ce.Code != cli.ExitFailed || !strings.Contains(err.Error(), "s (round 1)") {
		t.Errorf("err = %v, want exit 4 naming the run and its round", err)
	}
	if !strings.Contains(out.String(), "round 1 of 3:\nFAIL s") || !strings.Contains(out.String(), "(lost = 3)") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// TestCheckRefusesBaselineOfAnotherSize: a baseline captured at another
// fleet size or gateway layout than the check's is refused before any run
// starts (exit 2, nothing on stdout), naming the file, both sizes and the
// two ways out, and the terminal, --junit, --summary and --report's
// index.html and summary.md all say it; a missing baseline alike.
func TestCheckRefusesBaselineOfAnotherSize(t *testing.T) {
	base := t.TempDir()
	b := `{"scenario": "tiny", "seed": 1, "fleet_count": 300, "kept_up": true, "metrics": [{"metric": "lost", "value": 0, "rule": "exact"}]}`
	if err := os.WriteFile(filepath.Join(base, "tiny.json"), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	g := `{"scenario": "tiny", "seed": 1, "fleet_count": 20, "kept_up": true, "metrics": [{"metric": "lost", "value": 0, "rule": "exact"}]}`
	gbase := t.TempDir()
	if err := os.WriteFile(filepath.Join(gbase, "tiny.json"), []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	path, gpath := filepath.Join(base, "tiny.json"), filepath.Join(gbase, "tiny.json")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"another fleet size", []string{"--baseline", base, "--workers", "100"}, []string{
			path + ": the baseline was captured with 300 workers and this run has 100: counts at different sizes do not compare",
			"; check at the baseline's size (--workers 300)",
			"or capture a baseline at this one with 'sim check testdata/tiny.yaml --workers 100 --baseline " + base + " --update-baseline'",
		}},
		{"another gateway layout", []string{"--baseline", gbase, "--gateway-size", "5"}, []string{
			gpath + ": the baseline was captured with a session per worker and this run has 4 gateways of up to 5 workers",
			"; check at the baseline's size (a session per worker, without --gateway-size)",
		}},
		{"no baseline", []string{"--baseline", t.TempDir()}, []string{`tiny.json: no baseline of "tiny" to compare with: capture one with 'sim check testdata/tiny.yaml --baseline `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			junit, summary, rep := filepath.Join(out, "junit.xml"), filepath.Join(out, "summary.md"), filepath.Join(out, "report")
			args := append([]string{"check", "testdata/tiny.yaml", "--junit", junit, "--summary", summary, "--report", rep, "--log-level", "error"}, tc.args...)
			code, stdout, stderr := sim(t, args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, "Nothing ran: 1 baseline cannot be compared with these runs:") {
				t.Fatalf("exit %d, want 2 before any run\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			files := map[string]string{"stderr": stderr}
			for name, p := range map[string]string{"junit": junit, "summary": summary, "index.html": filepath.Join(rep, "index.html"), "report summary.md": filepath.Join(rep, "summary.md")} {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				files[name] = html.UnescapeString(strings.ReplaceAll(string(data), `\`, ""))
			}
			for name, text := range files {
				for _, want := range append(tc.want, "Nothing ran: 1 baseline cannot be compared with these runs") {
					if !strings.Contains(text, want) {
						t.Errorf("%s lacks %q:\n%s", name, want, text)
					}
				}
			}
			if !strings.Contains(files["junit"], `<testsuite name="baseline" tests="1" failures="1"`) {
				t.Errorf("junit has no failed baseline suite:\n%s", files["junit"])
			}
		})
	}
}
