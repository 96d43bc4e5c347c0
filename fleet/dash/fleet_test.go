package dash

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

const (
	off = scenario.StateOffline
	on  = scenario.StateOnline
	bsy = scenario.StateBusy
	ful = scenario.StateFull
	upd = scenario.StateUpdated
)

func TestFleetFill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		states   []scenario.WorkerState
		capacity int
		per      int
		want     []scenario.WorkerState
	}{
		{"one per cell when they fit", []scenario.WorkerState{on, off, upd}, 5, 1, []scenario.WorkerState{on, off, upd}},
		{"majority of each group", []scenario.WorkerState{on, on, off, upd, upd, bsy}, 2, 3, []scenario.WorkerState{on, upd}},
		{"a tie shows the worse", []scenario.WorkerState{upd, off, on, ful}, 2, 2, []scenario.WorkerState{off, ful}},
		{"a short last group", []scenario.WorkerState{on, on, on, bsy, off}, 2, 3, []scenario.WorkerState{on, off}},
		{"no room", []scenario.WorkerState{on}, 0, 0, nil},
		{"unknown state counts as offline", []scenario.WorkerState{9}, 1, 1, []scenario.WorkerState{off}},
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

func slicesEqual(a, b []scenario.WorkerState) bool {
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
	states := make([]scenario.WorkerState, 123457)
	for i := range states {
		states[i] = scenario.WorkerState(i % numStates)
	}
	var g fleetGrid
	g.aggregate(states, scenario.Live{}, 38, 8)
	if len(g.cells) > g.cols*g.rows || g.rows < 1 {
		t.Fatalf("%d cells for a %d×%d grid", len(g.cells), g.cols, g.rows)
	}
	sum := 0
	for s, n := range g.counts {
		sum += n
		if want := (len(states) + numStates - 1 - s) / numStates; n != want {
			t.Errorf("count of %v = %d, want %d", scenario.WorkerState(s), n, want)
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
