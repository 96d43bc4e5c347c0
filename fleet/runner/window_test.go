package runner

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestWindowsAndEvents: a window reads the counters between its edges, an
// edge at an event sees the run just before the event, and a named event
// reports how many workers it selected.
func TestWindowsAndEvents(t *testing.T) {
	sc, err := scenario.Parse("windows.yaml", []byte(`
name: windows
duration: 20s
speed: 20
fleet: {count: 10, worker: {reconnect: {base: 500ms, cap: 1s}}}
timeline:
  - at: 8s
    name: crash
    crash: {workers: 30%}
windows:
  - {name: before, from: 1s, to: crash}
  - {name: after, from: crash}
expect:
  - events["crash"].workers == 3
  - windows["before"].workers.connects == 0
  - windows["after"].workers.connects == 3
  - windows["after"].workers.sync_sent == 3
  - windows["after"].leader.requests_served >= 3
  - windows["after"].leader.mailbox.taken >= windows["after"].leader.requests_served
  - windows["before"].to == windows["after"].from
`))
	if err != nil {
		t.Fatal(err)
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	for _, v := range rep.Verdicts {
		if v.Status != result.Pass {
			t.Errorf("%s: %s %s", v.Check, v.Status, v.Detail)
		}
	}
	w := rep.Result.Windows
	if b, a := w["before"], w["after"]; b.From < 1 || b.To < 8 || a.To < 20 {
		t.Errorf("edges: before %v-%v, after %v-%v; want from 1s, the crash at 8s, the end at 20s", b.From, b.To, a.From, a.To)
	}
}

// TestEventWorkersFollowScale: an event's selected count follows
// --workers, where arithmetic on fleet.count would not: 20% of 12 is 2.
func TestEventWorkersFollowScale(t *testing.T) {
	sc, err := scenario.Parse("scale.yaml", []byte(`
name: scale
duration: 10s
fleet: {count: 100}
timeline:
  - {at: 1s, name: away, partition: {workers: 20%}}
  - {at: 2s, heal: {workers: 20%}}
expect:
  - events["away"].workers > 0
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ workers, want int }{{12, 2}, {37, 7}, {300, 60}, {1000, 200}} {
		s, err := sc.Scale(tc.workers)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewRunner(s, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev := r.eventResults()
		if len(ev) != 1 || ev["away"].Workers != tc.want || ev["away"].At != 1 {
			t.Errorf("at %d workers: events %+v, want away selecting %d at 1s", tc.workers, ev, tc.want)
		}
	}
}

// TestWindowMaxDepthExact: a window's leader.mailbox.max_depth is the
// mailbox's own high-water mark when that rose inside the window (or a
// new leader instance started in it), else the most the mailbox held
// between the edges inside the window (its peaks): never a sample's
// moment, which can land just after the leader took a message from a
// full mailbox.
func TestWindowMaxDepthExact(t *testing.T) {
	sc, err := scenario.Parse("maxdepth.yaml", []byte(`
name: maxdepth
duration: 10s
fleet: {count: 1}
windows:
  - {name: load, from: 2s, to: 6s}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a, b windowMark
		want int
	}{
		{"the mark rose inside", windowMark{at: 2 * time.Second, maxDepth: 10, instances: 1, peak: 10}, windowMark{at: 6 * time.Second, maxDepth: 200, instances: 1, peak: 200}, 200},
		{"a new instance inside", windowMark{at: 2 * time.Second, maxDepth: 300, instances: 1, peak: 300}, windowMark{at: 6 * time.Second, maxDepth: 200, instances: 2, peak: 200}, 200},
		// The mark was reached before the window: its peak between the
		// edges, not the 300 before them.
		{"the mark was reached before: peaks", windowMark{at: 2 * time.Second, maxDepth: 300, instances: 1, peak: 300}, windowMark{at: 6 * time.Second, maxDepth: 300, instances: 1, peak: 200}, 200},
	} {
		r := &Runner{sc: sc, marks: map[time.Duration]*windowMark{2 * time.Second: &c.a, 6 * time.Second: &c.b}}
		if got := r.windowResults()["load"].Leader.Mailbox.MaxDepth; got != c.want {
			t.Errorf("%s: max_depth %d, want %d", c.name, got, c.want)
		}
	}
}
