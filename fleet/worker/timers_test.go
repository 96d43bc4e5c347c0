package worker

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTickerPhases: a worker's first heartbeat and first telemetry come
// within their first interval, at a phase drawn from its stream (not
// all at the interval, where a fleet started together would beat in
// step), then every interval on the grid of the first.
func TestTickerPhases(t *testing.T) {
	now := time.Unix(1000, 0)
	const hb, tel = 5 * time.Second, 2 * time.Second
	seen := map[int64]bool{}
	for i := range uint64(100) {
		var tm timers
		tm.init(now, hb, tel, rand.New(rand.NewPCG(1, i^phaseSalt)))
		first := time.Unix(0, tm.at[tHeartbeat]).Sub(now)
		if first <= 0 || first > hb {
			t.Fatalf("worker %d: first heartbeat %v from now, want within (0, %v]", i, first, hb)
		}
		if d := time.Unix(0, tm.at[tTelemetry]).Sub(now); d <= 0 || d > tel {
			t.Fatalf("worker %d: first telemetry %v from now, want within (0, %v]", i, d, tel)
		}
		seen[tm.at[tHeartbeat]] = true
		at := tm.at[tHeartbeat]
		if !tm.take(tHeartbeat, at) || tm.at[tHeartbeat] != at+int64(hb) {
			t.Fatalf("worker %d: after the first heartbeat the next is at %v, want an interval later", i, time.Duration(tm.at[tHeartbeat]-at))
		}
	}
	if len(seen) < 95 {
		t.Fatalf("100 workers' first heartbeats fell on %d distinct instants, want them spread", len(seen))
	}
	var a, b timers
	a.init(now, hb, 0, rand.New(rand.NewPCG(7, 3^phaseSalt)))
	b.init(now, hb, 0, rand.New(rand.NewPCG(7, 3^phaseSalt)))
	if a.at != b.at || a.at[tTelemetry] != 0 {
		t.Fatalf("one seed and index gave phases %v and %v (telemetry off: want 0)", a.at, b.at)
	}
}
