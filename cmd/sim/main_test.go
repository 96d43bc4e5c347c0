package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main() // the test binary is sim itself: see startSim
		return
	}
	goleak.VerifyTestMain(m)
}

// childEnv makes the test binary run as sim, for the tests that need a
// process of their own (signals).
const childEnv = "FLEETSIM_TEST_RUN_SIM"

// sim runs the command line and returns its exit code, stdout and stderr.
func sim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestValidateBadFile: every problem in a bad file is reported with
// file:line:col and what would be valid, and the exit code is 2.
func TestValidateBadFile(t *testing.T) {
	code, _, stderr := sim(t, "validate", "testdata/bad.yaml")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"testdata/bad.yaml:1:7: name:",
		"testdata/bad.yaml:4:10: fleet.count:",
		"testdata/bad.yaml:7:26: timeline[0].partition.workers:",
		"max_dept",
		"did you mean max_depth",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestValidateConstantCheck: a check that cannot depend on the run is a
// load error (exit 2) at its place in the file, with a caret under it.
func TestValidateConstantCheck(t *testing.T) {
	code, _, stderr := sim(t, "validate", "testdata/constant.yaml")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	want := `testdata/constant.yaml:8:5: expect[1]: check "lost >= 0" is true whatever the run measures: it cannot fail (lost is never negative); compare with a bound the run could cross` +
		"\n\t  - lost >= 0\n\t    ^\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr:\n%s\nwant it to contain\n%s", stderr, want)
	}
}

// TestValidateShipped: the shipped scenarios load, none with a warning.
func TestValidateShipped(t *testing.T) {
	code, stdout, stderr := sim(t, "validate", "../../scenarios")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "ok  "); n != 11 {
		t.Errorf("%d scenarios validated, want 11:\n%s", n, stdout)
	}
	if strings.Contains(stderr, "warning:") {
		t.Errorf("a shipped scenario has a check it cannot make fail:\n%s", stderr)
	}
}

// TestValidateWarning: a check the scenario cannot make fail is a warning
// on stderr, at its place in the file; the exit code stays 0.
func TestValidateWarning(t *testing.T) {
	code, _, stderr := sim(t, "validate", "testdata/tiny.yaml")
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	want := `testdata/tiny.yaml:16:12: warning: expect[2]: check "heartbeats.sent == 0" reads only heartbeats.sent (heartbeats), and this scenario sends no heartbeats (no heartbeat interval or heartbeat_storm event): it cannot fail` +
		"\n\t    check: heartbeats.sent == 0\n\t           ^\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr:\n%s\nwant it to contain\n%s", stderr, want)
	}
}

func TestListAndNames(t *testing.T) {
	code, stdout, stderr := sim(t, "list")
	if code != 0 || !strings.Contains(stdout, "wave-deploy") || !strings.Contains(stdout, "thundering-herd") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// A shipped scenario by name, from any directory.
	if code, _, stderr := sim(t, "validate", "leader-crash"); code != 0 {
		t.Fatalf("validate leader-crash: exit %d: %s", code, stderr)
	}
	code, _, stderr = sim(t, "validate", "no-such-scenario")
	if code != 2 || !strings.Contains(stderr, "not a shipped scenario; the shipped ones are ") || strings.Contains(stderr, "did you mean") {
		t.Fatalf("unknown name: exit %d: %s", code, stderr)
	}
	// A misspelt name: the closest shipped one.
	code, _, stderr = sim(t, "run", "thundring-herd", "--headless")
	if code != 2 || !strings.Contains(stderr, "thundring-herd: no such file or directory, and not a shipped scenario (did you mean thundering-herd?); the shipped ones are ") {
		t.Fatalf("misspelt name: exit %d: %s", code, stderr)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"run", "testdata/tiny.yaml", "--speed", "-1"},
		{"run", "testdata/tiny.yaml", "--workers", "-5"},
		{"run"},
		{"check", "testdata/tiny.yaml", "--bogus"},
	} {
		if code, _, stderr := sim(t, args...); code != 2 {
			t.Errorf("sim %v: exit %d, want 2; stderr: %s", args, code, stderr)
		}
	}
}

// TestRunHeadless runs a small scenario on the real stack: it passes,
// prints its verdicts and writes the report files.
func TestRunHeadless(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := sim(t, "run", "testdata/tiny.yaml", "--headless", "--report", dir, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "PASS tiny") || !strings.Contains(stdout, `✓ workers.at_version["2.0.0"] == fleet.count`) {
		t.Errorf("stdout:\n%s", stdout)
	}
	// A warning is printed, and does not change the exit code.
	if want := `testdata/tiny.yaml:16:12: warning: expect[2]: check "heartbeats.sent == 0" reads only heartbeats.sent (heartbeats)`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	for _, f := range []string{"tiny.json", "tiny.html", "summary.md", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
}

// TestRunProfiles: --heap-profile and --cpu-profile write profiles
// (gzipped, as go tool pprof reads them) of the run, under run and check.
func TestRunProfiles(t *testing.T) {
	dir := t.TempDir()
	heap, cpu, checkCPU := filepath.Join(dir, "run.heap"), filepath.Join(dir, "run.cpu"), filepath.Join(dir, "check.cpu")
	code, stdout, stderr := sim(t, "run", "testdata/tiny.yaml", "--headless", "--report", "", "--log-level", "warn", "--heap-profile", heap, "--cpu-profile", cpu)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = sim(t, "check", "testdata/tiny.yaml", "--baseline", t.TempDir(), "--update-baseline", "--report", "", "--progress", "0", "--log-level", "warn", "--cpu-profile", checkCPU)
	if code != 0 {
		t.Fatalf("check: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, path := range []string{heap, cpu, checkCPU} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("%s: %d bytes, not a gzipped profile", path, len(b))
		}
	}
}

// TestRunFailingExpectation: a false expectation is exit code 4, with the
// values the check read.
func TestRunFailingExpectation(t *testing.T) {
	code, stdout, _ := sim(t, "run", "testdata/failing.yaml", "--headless", "--report", "", "--log-level", "error")
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "FAIL failing") || !strings.Contains(stdout, "fleet.count = 5") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestRunNotJudged: a run whose every check divides by zero has judged
// nothing: it reads NOT JUDGED, not PASS, exits 4 naming it, and its
// summary.md says so.
func TestRunNotJudged(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := sim(t, "run", "testdata/unjudged.yaml", "--headless", "--report", dir, "--log-level", "error")
	if code != 4 || !strings.Contains(stdout, "NOT JUDGED unjudged") || strings.Contains(stdout, "PASS") ||
		!strings.Contains(stderr, "1 of 1 run not judged (no check could be judged): unjudged") {
		t.Fatalf("exit %d, want 4\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(md), "| unjudged |  | ❌ not judged |") {
		t.Errorf("summary.md: %v\n%s", err, md)
	}
}

// TestCheckBaselines: without a baseline check runs nothing (exit 2), and
// says which file is missing and the command that captures it, on stderr
// and in its JUnit file; captured, the same check passes and its JUnit
// has the baseline's case.
func TestCheckBaselines(t *testing.T) {
	base := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	args := []string{"check", "testdata/tiny.yaml", "--baseline", base, "--junit", junit, "--log-level", "warn", "--progress", "0"}
	code, stdout, stderr := sim(t, args...)
	missing := filepath.Join(base, "tiny.json") + `: no baseline of "tiny" to compare with: capture one with 'sim check testdata/tiny.yaml --baseline ` + base + ` --update-baseline'`
	if code != 2 || stdout != "" || !strings.Contains(stderr, missing) {
		t.Fatalf("without a baseline: exit %d, want 2 before any run, naming %q\nstdout:\n%s\nstderr:\n%s", code, missing, stdout, stderr)
	}
	if !strings.Contains(stderr, `warning: expect[2]: check "heartbeats.sent == 0"`) {
		t.Errorf("check does not print the file's warning; stderr:\n%s", stderr)
	}
	if b, err := os.ReadFile(junit); err != nil || !bytes.Contains(b, []byte(`<testsuite name="baseline"`)) || !bytes.Contains(b, []byte("no baseline of")) {
		t.Errorf("junit of the refused check: %v\n%s", err, b)
	}
	// Recorded from three runs, as the docs advise: one run cannot size a
	// band, and small counts such as the leader's max depth at 20 workers
	// vary more between runs than the one-run default allows (2 and 12).
	if code, stdout, stderr := sim(t, append(args, "--update-baseline", "--repeat", "3")...); code != 0 {
		t.Fatalf("--update-baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = sim(t, args...)
	if code != 0 || !strings.Contains(stdout, "✓ baseline:") {
		t.Fatalf("against its own baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(b, []byte("<testsuites")) || !bytes.Contains(b, []byte(`name="baseline"`)) || !bytes.Contains(b, []byte(`<property name="status" value="passed">`)) {
		t.Fatalf("junit: %v\n%s", err, b)
	}
}

// TestRunInterrupted: SIGINT (here: the context ending) during a run is a
// stop the user asked for: the partial report is printed as STOPPED and
// the exit code is 0, and every report says stopped, none failed: the JSON
// report's status, the HTML page's badge, summary.md and index.html. The
// run lasts 10 s of wall time at speed 1; the context ends long before.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"run", "testdata/tiny.yaml", "--headless", "--speed", "1", "--report", dir, "--log-level", "error"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "STOPPED tiny") || !strings.Contains(out.String(), "\n  stopped: by a signal at ") ||
		!strings.Contains(out.String(), "\n1 run stopped before its end, not judged\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	f, err := os.Open(filepath.Join(dir, "tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := report.ReadRun(f)
	if err != nil || run.Verdict.Status != report.Stopped || run.Report.Err != "" || !strings.HasPrefix(run.Report.Stopped, "a signal at ") {
		t.Errorf("tiny.json: %v: status %q, error %q, stopped %q; want stopped, no error", err, run.Verdict.Status, run.Report.Err, run.Report.Stopped)
	}
	for file, want := range map[string]string{
		"tiny.html":  `<span class="badge stopped">stopped</span>`,
		"summary.md": "| tiny |  | ⏹️ stopped |",
		"index.html": "<strong>stopped</strong>: by a signal at ",
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) || strings.Contains(string(data), "failed") || strings.Contains(string(data), "did not complete") {
			t.Errorf("%s does not say stopped (%q), or says failed:\n%s", file, want, data)
		}
	}
}

// TestCheckRequireKeptUp: a scenario no machine kept up with on a
// scaled clock (telemetry every 10ms at speed 10000) keeps up on the
// virtual clock, at any speed: check passes it with --require-kept-up,
// its timings judged. A run that fell behind its schedule anyway (only
// a wait on the wall clock inside the process can do it) fails with
// --require-kept-up, with a line naming it and the lag.
func TestCheckRequireKeptUp(t *testing.T) {
	base := t.TempDir()
	b := `{"scenario": "behind", "seed": 1, "fleet_count": 5, "kept_up": true, "metrics": [{"metric": "fleet.count", "value": 5, "rule": "exact"}]}`
	if err := os.WriteFile(filepath.Join(base, "behind.json"), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "testdata/behind.yaml", "--speed", "10000", "--baseline", base, "--log-level", "error", "--progress", "0", "--require-kept-up"}
	code, stdout, stderr := sim(t, args...)
	if code != 0 || !strings.Contains(stdout, "PASS behind") || strings.Contains(stdout, "BEHIND") || strings.Contains(stdout, "fell behind") {
		t.Fatalf("exit %d, want 0, kept up\n%s\n%s", code, stdout, stderr)
	}

	behind := &result.Report{Scenario: "behind"}
	behind.Result.Run = result.RunInfo{Speed: 10, LagThreshold: 1, DeliveryLagP99: 2.5}
	runs := report.Judge([]*result.Report{behind}, nil, report.Options{RequireKeptUp: true})
	err := verdict(runs)
	var ce *cli.Error
	if !errors.As(err, &ce) || ce.Code != cli.ExitFailed || err.Error() != "1 of 1 run failed: behind" {
		t.Fatalf("verdict on a run that fell behind: %v, want exit 4 naming it", err)
	}
	var out bytes.Buffer
	report.Text(&out, runs)
	for _, want := range []string{"FAIL behind: ", "\n  failed: fell behind its schedule: delivery lag p99 2.5s > threshold 1s at speed 10 (--require-kept-up)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed %q, want it to contain %q", out.String(), want)
		}
	}
}

// TestProgressLineNamesTheLag: the headless progress line says which lag
// a run is behind by.
func TestProgressLineNamesTheLag(t *testing.T) {
	l := result.Live{Scenario: "s", Phase: result.PhaseRunning, Lag: 2.3, Behind: true, LagOf: "service"}
	if got := progressLine(l, result.Sample{}); !strings.Contains(got, "BEHIND 2.30s  (service lag)") {
		t.Errorf("progress line %q does not name the service lag", got)
	}
}

// TestRunOutboxUnusable: a scenario whose leader.outbox.path is not a
// fleetsim outbox exits 3, as the help says, naming the file; not 4, as a
// run that failed its checks.
func TestRunOutboxUnusable(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "outbox.db")
	if err := os.WriteFile(junk, []byte("not a database, by a long way: these bytes are text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(file, append(tiny, []byte("leader: {outbox: {path: "+junk+"}}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := sim(t, "run", file, "--headless", "--report", "", "--log-level", "error")
	if code != 3 || !strings.Contains(stderr, junk) || strings.Contains(stdout, "FAIL") {
		t.Fatalf("exit %d, want 3 naming %s\nstdout:\n%s\nstderr:\n%s", code, junk, stdout, stderr)
	}
}

// TestHelpExitCodes: the root's help has every exit code in full; each
// subcommand's lists only the codes it can exit with, and points to the
// root's; dash, which opens no outbox and judges no run, lists neither 3
// nor 4.
func TestHelpExitCodes(t *testing.T) {
	_, root, _ := sim(t, "--help")
	for _, code := range []string{"\n  0  ", "\n  1  ", "\n  2  ", "\n  3  ", "\n  4  "} {
		if !strings.Contains(root, code) {
			t.Errorf("sim --help lacks exit code %q", strings.TrimSpace(code))
		}
	}
	for cmd, codes := range map[string]string{"run": "01234", "check": "01234", "validate": "012", "new": "012", "schema": "01", "dash": "012"} {
		_, help, _ := sim(t, cmd, "--help")
		if !strings.Contains(help, "Exit codes ('sim --help' has them all, in full):") || strings.Contains(help, "SIGINT, SIGTERM or SIGHUP (the terminal closed) stops sim at once") {
			t.Errorf("sim %s --help repeats the root's block or does not point to it:\n%s", cmd, help)
		}
		for _, c := range "01234" {
			if has := strings.Contains(help, "\n  "+string(c)+"  "); has != strings.ContainsRune(codes, c) {
				t.Errorf("sim %s --help lists exit %c: %v, want %v", cmd, c, has, !has)
			}
		}
	}
}
