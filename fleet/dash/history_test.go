package dash

import (
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// However long the run, the history keeps at most maxBuckets buckets,
// from its first sample to its last, and the extremes within them.
func TestHistoryBounded(t *testing.T) {
	var h history
	for i := range 100_000 {
		s := result.Sample{T: result.Seconds(float64(i) / 4), LeaderUp: true, Limits: []int{10 + i%11}}
		if i == 54_321 {
			s.LeaderDepth = 999
		}
		h.add(s)
	}
	if n := len(h.buckets); n > maxBuckets || n < maxBuckets/2 {
		t.Fatalf("%d buckets, want at most %d and most of them used", n, maxBuckets)
	}
	if h.start() != 0 || h.end() != result.Seconds(99_999.0/4) {
		t.Errorf("history from %v to %v", h.start(), h.end())
	}
	depth, lo, hi := 0.0, 100.0, 0.0
	for _, b := range h.buckets {
		depth = max(depth, b.m[mDepth].hi)
		lo, hi = min(lo, b.limits[0].lo), max(hi, b.limits[0].hi)
	}
	if depth != 999 || lo != 10 || hi != 20 { // the limit's sawtooth: 10 to 20
		t.Errorf("extremes kept: depth %v, limit %v–%v; want 999, 10–20", depth, lo, hi)
	}
}

// slidingSource is a run that shows only its newest 300 samples, as the
// runner does, advancing one sample per snapshot: a herd of rejections
// and slow waits between samples 200 and 300, quiet before and after.
type slidingSource struct {
	mu  sync.Mutex
	all []result.Sample
	n   int
}

func newSlidingSource(total int) *slidingSource {
	s := &slidingSource{}
	var rejected uint64
	for i := range total {
		smp := result.Sample{T: result.Seconds(i), LeaderUp: true, LeaderCapacity: 100, Limits: []int{4 + i%9}}
		if i >= 200 && i < 300 {
			rejected += 50
			smp.LeaderDepth = 100
			smp.LeaderWaitP99Interval = 2
		}
		// The run's p99 stays high once the herd has passed: charting
		// it would paint a solid block to the end.
		if i >= 200 {
			smp.LeaderWaitP99 = 2
		}
		smp.LeaderRejected = rejected
		s.all = append(s.all, smp)
	}
	return s
}

func (s *slidingSource) Snapshot() result.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n = min(s.n+1, len(s.all))
	h := s.all[max(0, s.n-300):s.n]
	return result.Live{Scenario: "herd", Phase: "running", Now: h[len(h)-1].T, Duration: result.Seconds(len(s.all)),
		Latest: h[len(h)-1], History: h, Workers: make([]result.WorkerState, 10)}
}

// stripRow is the bars of the leader pane's strip labelled label.
func stripRow(t *testing.T, m Model, label string) []rune {
	t.Helper()
	// The last line with the label: the text above may start with it too.
	ls := paneLines(t, m, "Leader")
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.HasPrefix(ls[i], label) {
			r := []rune(ls[i])
			return r[stripLabel+1 : len(r)-stripPeak-1]
		}
	}
	t.Fatalf("no %q strip:\n%s", label, strings.Join(paneLines(t, m, "Leader"), "\n"))
	return nil
}

// The charts show the whole run: long after a herd has passed (and out
// of the source's recent samples), its rejections and waits are still
// there, at their time, and the wait is per interval: quiet after.
func TestChartsKeepTheRun(t *testing.T) {
	src := newSlidingSource(1000)
	var tm tea.Model = New(src, &fakeControls{}, Options{})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	for range 1000 {
		tm, _ = tm.Update(tickMsg{})
	}
	m := tm.(Model)
	for _, label := range []string{"reject/s", "wait p99", "depth"} {
		row := stripRow(t, m, label)
		n := len(row)
		busy := func(from, to float64) int {
			k := 0
			for _, r := range row[int(from*float64(n)):int(to*float64(n))] {
				if r != ' ' {
					k++
				}
			}
			return k
		}
		// A column at the herd's edges may hold a little of it.
		if busy(0.21, 0.29) == 0 || busy(0, 0.17) != 0 || busy(0.34, 1) != 0 {
			t.Errorf("%s strip %q: want bars where the herd was (20%%–30%% of the run) only", label, string(row))
		}
	}
	// Zoomed in on the newest eighth, the herd is out of view; panned
	// back it is in view again.
	m, _ = press(t, m, "[", "[", "[")
	if row := stripRow(t, m, "reject/s"); strings.TrimSpace(string(row)) != "" {
		t.Errorf("zoomed on the end, the herd shows: %q", string(row))
	}
	for range 20 {
		m, _ = pressKey(m, tea.KeyLeft)
	}
	if row := stripRow(t, m, "reject/s"); strings.TrimSpace(string(row)) == "" {
		t.Errorf("panned back to the start of the zoomed window, no herd: %q", string(row))
	}
	if !strings.Contains(strings.Join(lines(m), "\n"), "Leader [") {
		t.Error("a zoomed chart does not say its window in the title")
	}
	m, _ = press(t, m, "]", "]", "]")
	if strings.Contains(strings.Join(lines(m), "\n"), "Leader [") {
		t.Error("zoomed out fully, the title still names a window")
	}
}

// TestPollsStrip: a run whose leader received job requests gets a
// polls/s strip in the leader pane, drawn from their rate (a herd of 900
// in a second shows as its peak); a run without pulling workers does not.
func TestPollsStrip(t *testing.T) {
	labels := func(m *Model) string {
		var out []string
		for _, s := range m.leaderStrips() {
			out = append(out, s.label)
		}
		return strings.Join(out, ",")
	}
	var push Model
	for i := range 10 {
		push.hist.add(result.Sample{T: result.Seconds(i), LeaderUp: true, LeaderAccepted: uint64(10 * i)})
	}
	if got := labels(&push); strings.Contains(got, "polls/s") {
		t.Errorf("a run without job requests: strips %s", got)
	}
	var pull Model
	var n uint64
	for i := range 10 {
		if i == 5 {
			n += 900
		}
		pull.hist.add(result.Sample{T: result.Seconds(i), LeaderUp: true, JobRequests: n})
		n += 10
	}
	if got := labels(&pull); got != "depth,reject/s,polls/s,wait p99,accept/s" {
		t.Errorf("a pull run: strips %s", got)
	}
	peak := 0.0
	for _, b := range pull.hist.buckets {
		peak = max(peak, b.m[mPolls].hi)
	}
	if peak != 910 {
		t.Errorf("polls/s peak %v, want 910", peak)
	}
}
