package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestProgressLineFits: a progress line holds rejected and backpressure
// since the line before, the mailbox's high-water mark, wait p99 and,
// when the run is behind its schedule, the lag, and never passes 100
// columns, even with a large fleet behind.
func TestProgressLineFits(t *testing.T) {
	prev := result.Sample{LeaderRejected: 1000, Backpressure: 40}
	l := result.Live{
		Scenario: "thundering-herd", Variant: "leader.mailbox.policy=reject", Phase: result.PhaseDraining,
		Now: 123.4, Duration: 90, Lag: 2.3, Behind: true, LagOf: "service", Target: "2.10.0-rc.1",
		Workers: make([]result.WorkerState, 100000),
		Latest: result.Sample{
			Online: 99999, AtTarget: 12345, LeaderDepth: 0, LeaderCapacity: 10000, LeaderMaxDepth: 10000,
			LeaderRejected: 124456, Backpressure: 1274, LeaderWaitP99: 12.4, OutboxDepth: 123456, Delivered: 9999999,
		},
	}
	got := progressLine(l, prev)
	if n := utf8.RuneCountInString(got); n > progressWidth {
		t.Errorf("line of %d columns, want at most %d: %q", n, progressWidth, got)
	}
	for _, want := range []string{"123.4s/90.0s draining", "box 0/10000 max 10000", "rej +123456", "bp +1234", "w99 12.4s", "BEHIND 2.30s"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	l.Behind = false
	if got := progressLine(l, prev); strings.Contains(got, "lag") {
		t.Errorf("line %q shows a lag, not behind", got)
	}
}

// TestProgressDue: a line is due at each phase change, at each tenth of
// the duration in simulated time, and after the wall interval; not
// before time 0.
func TestProgressDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(100, time.Hour)
	step := func(now result.Seconds, phase string, wall time.Duration) bool {
		w := t0.Add(wall)
		if !p.due(now, phase, w) {
			return false
		}
		p.line(result.Live{Now: now, Phase: phase}, w)
		return true
	}
	for _, tc := range []struct {
		now   result.Seconds
		phase string
		wall  time.Duration
		want  bool
	}{
		{0, result.PhaseStarting, 0, false},
		{0.1, result.PhaseRunning, 0, true}, // the phase changed
		{5, result.PhaseRunning, time.Second, false},
		{10, result.PhaseRunning, 2 * time.Second, true}, // a tenth
		{19.9, result.PhaseRunning, 3 * time.Second, false},
		{35, result.PhaseRunning, 4 * time.Second, true}, // past two tenths at once: one line
		{39, result.PhaseRunning, 5 * time.Second, false},
		{40, result.PhaseRunning, 6 * time.Second, true},
		{41, result.PhaseRunning, time.Hour + 7*time.Second, true}, // the wall interval
		{42, result.PhaseDraining, time.Hour + 8*time.Second, true},
	} {
		if got := step(tc.now, tc.phase, tc.wall); got != tc.want {
			t.Errorf("at %v (%s, wall +%v): due %v, want %v", tc.now, tc.phase, tc.wall, got, tc.want)
		}
	}
}

// TestHeadlessProgressCadence: a short run at a tiny fleet prints a
// progress line at least every tenth of its simulated time, whatever the
// wall interval (an hour here), each within 100 columns.
func TestHeadlessProgressCadence(t *testing.T) {
	code, stdout, stderr := sim(t, "run", "testdata/tiny.yaml", "--headless", "--progress", "1h", "--report", "", "--log-level", "error")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var times []float64
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.Contains(f[0], "s/10.0s") {
			continue
		}
		if n := utf8.RuneCountInString(line); n > progressWidth {
			t.Errorf("progress line of %d columns: %q", n, line)
		}
		var now float64
		if _, err := fmtSscan(f[0], &now); err != nil {
			t.Fatalf("progress line %q: %v", line, err)
		}
		times = append(times, now)
	}
	if len(times) < 10 {
		t.Fatalf("%d progress lines over a 10s run, want one every second at least:\n%s", len(times), stdout)
	}
	last := 0.0
	for _, now := range append(times, 10) {
		// A line every tenth (1s), give or take a poll's delay.
		if now-last > 1.5 {
			t.Errorf("%.1fs of simulated time without a line (after %.1fs):\n%s", now-last, last, stdout)
		}
		last = now
	}
}

// fmtSscan reads the simulated time at the start of a progress line's
// first field ("4.2s/10.0s").
func fmtSscan(field string, now *float64) (int, error) {
	s, _, _ := strings.Cut(field, "/")
	return fmt.Sscanf(strings.TrimSuffix(s, "s"), "%g", now)
}

// TestErrorAfterVerdicts: on one terminal (stdout and stderr together) a
// failed run's error comes after its verdicts and end summary, not among
// them.
func TestErrorAfterVerdicts(t *testing.T) {
	var both bytes.Buffer
	code := Main(context.Background(), []string{"run", "testdata/failing.yaml", "--headless", "--report", t.TempDir(), "--log-level", "error"}, &both, &both)
	out := both.String()
	verdict, summary, reports, errAt := strings.Index(out, "✗ nobody is at a version"), strings.Index(out, "lost ....."), strings.Index(out, "reports: "), strings.Index(out, "sim: error: 1 of 1 run failed: failing")
	if code != 4 || verdict < 0 || summary < 0 || reports < 0 || errAt < max(verdict, summary, reports) {
		t.Fatalf("exit %d; want the error after the verdicts, the summary and the reports' path:\n%s", code, out)
	}
}
