package dash

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

const (
	off = result.StateOffline
	on  = result.StateOnline
	bsy = result.StateBusy
	ful = result.StateFull
	upd = result.StateUpdated
)

func TestFleetFill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		states   []result.WorkerState
		capacity int
		per      int
		want     []result.WorkerState
	}{
		{"one per cell when they fit", []result.WorkerState{on, off, upd}, 5, 1, []result.WorkerState{on, off, upd}},
		{"majority of each group", []result.WorkerState{on, on, off, upd, upd, bsy}, 2, 3, []result.WorkerState{on, upd}},
		{"a tie shows the worse", []result.WorkerState{upd, off, on, ful}, 2, 2, []result.WorkerState{off, ful}},
		{"a short last group", []result.WorkerState{on, on, on, bsy, off}, 2, 3, []result.WorkerState{on, off}},
		{"no room", []result.WorkerState{on}, 0, 0, nil},
		{"unknown state counts as offline", []result.WorkerState{9}, 1, 1, []result.WorkerState{off}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g fleetGrid
			g.fill(tc.states, tc.capacity)
			if g.per != tc.per || !slicesEqual(g.cells, tc.want) {
				t.Fatalf("per %d cells %v, want per %d cells %v", g.per, g.cells, tc.per, tc.want)
			}
		})
	}
}

func slicesEqual(a, b []result.WorkerState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// However large the fleet, the grid has at most as many cells as the
// pane, and the counts are exact.
func TestFleetAggregateBounded(t *testing.T) {
	states := make([]result.WorkerState, 123457)
	for i := range states {
		states[i] = result.WorkerState(i % numStates)
	}
	var g fleetGrid
	g.aggregate(states, result.Live{}, 38, 8)
	if len(g.cells) > g.cols*g.rows || g.rows < 1 {
		t.Fatalf("%d cells for a %d×%d grid", len(g.cells), g.cols, g.rows)
	}
	sum := 0
	for s, n := range g.counts {
		sum += n
		if want := (len(states) + numStates - 1 - s) / numStates; n != want {
			t.Errorf("count of %v = %d, want %d", result.WorkerState(s), n, want)
		}
	}
	if sum != len(states) {
		t.Errorf("counts sum to %d, want %d", sum, len(states))
	}
	v := g.view(-1)
	if len(v) > 8 {
		t.Errorf("view has %d lines for 8 rows", len(v))
	}
	if !strings.Contains(g.title(60), "majority") {
		t.Errorf("title %q does not say cells show the majority", g.title(60))
	}
}
