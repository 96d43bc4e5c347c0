package dash

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// severity orders states for breaking ties, worst first: a cell split
// evenly between two states shows the worse one.
var severity = [numStates]int{
	result.StatePartitioned: 5,
	result.StateOffline:     4,
	result.StateFull:        3,
	result.StateBusy:        2,
	result.StateOnline:      1,
	result.StateUpdated:     0,
}

// fleetGrid is the fleet pane's content: counts per state and one state
// per cell. When the workers outnumber the cells, each cell stands for
// per consecutive workers and shows their majority state (ties to the
// worse state): the grid then shows proportions, which "worst state"
// would hide (10% offline spread over the fleet would paint most cells
// offline). The exact counts are printed above the grid.
//
// aggregate is the only pass over the workers; drawing costs the cells.
type fleetGrid struct {
	counts [numStates]int
	total  int
	per    int // workers per cell; 0 when there is no room for a grid
	cols   int
	rows   int
	cells  []result.WorkerState
	head   []string // the count lines over the grid
	// stale: the states are the last known, as of asOf, not live (a
	// remote source that lost its broker); the grid is drawn dim.
	stale bool
	asOf  result.Seconds
}

// aggregate counts the states and fills the grid for a w×h pane interior.
func (g *fleetGrid) aggregate(states []result.WorkerState, l result.Live, w, h int) {
	g.counts = [numStates]int{}
	for _, s := range states {
		g.counts[clampState(s)]++
	}
	g.total = len(states)
	g.head = fleetHead(g, l, w)
	// The grid comes first: the count lines give way when there is no
	// room for at least one row of it.
	g.head = g.head[:max(0, min(len(g.head), h-1))]
	g.cols, g.rows = max(0, w), max(0, h-len(g.head))
	g.fill(states, g.cols*g.rows)
}

func clampState(s result.WorkerState) result.WorkerState {
	if int(s) >= numStates {
		return result.StateOffline
	}
	return s
}

// fill sets one state per cell for capacity cells.
func (g *fleetGrid) fill(states []result.WorkerState, capacity int) {
	g.cells = g.cells[:0]
	g.per = 0
	if capacity <= 0 || len(states) == 0 {
		return
	}
	g.per = (len(states) + capacity - 1) / capacity
	for i := 0; i < len(states); i += g.per {
		var n [numStates]int
		for _, s := range states[i:min(i+g.per, len(states))] {
			n[clampState(s)]++
		}
		best := result.StateOffline
		for s := range numStates {
			st := result.WorkerState(s)
			if n[st] > n[best] || (n[st] == n[best] && severity[st] > severity[best]) {
				best = st
			}
		}
		g.cells = append(g.cells, best)
	}
}

// title says how many workers there are and what a cell stands for, as
// fully as fits in w.
func (g *fleetGrid) title(w int) string {
	if g.per <= 1 {
		return fmt.Sprintf("Fleet: %d workers", g.total)
	}
	for _, t := range []string{
		fmt.Sprintf("Fleet: %d workers, a cell is %d, showing their majority state", g.total, g.per),
		fmt.Sprintf("Fleet: %d workers, %d a cell (majority state)", g.total, g.per),
		fmt.Sprintf("Fleet: %d workers, %d/cell (majority)", g.total, g.per),
		fmt.Sprintf("Fleet: %d, %d/cell (majority)", g.total, g.per),
	} {
		if len([]rune(t)) <= w {
			return t
		}
	}
	return fmt.Sprintf("Fleet %d, %d/cell", g.total, g.per)
}

// cursorGlyph marks the selected cell: no state's glyph.
const cursorGlyph = "◆"

// stateOrder is the order counts are listed in: best first.
var stateOrder = []result.WorkerState{
	result.StateUpdated, result.StateOnline, result.StateBusy, result.StateFull, result.StateOffline,
	result.StatePartitioned,
}

// remoteStates are the states a remote dashboard can know: the workers'
// statuses say online or offline, nothing else.
var remoteStates = []result.WorkerState{result.StateOnline, result.StateOffline}

// fleetHead is the count lines: each state with its glyph, then the
// target version and the workers' queues.
func fleetHead(g *fleetGrid, l result.Live, w int) []string {
	states := stateOrder
	if l.Phase == PhaseRemote {
		states = remoteStates
	}
	// Counts as wide as the fleet's size, so they keep their places.
	nw := len(fmt.Sprint(g.total))
	items := make([]string, 0, 8)
	if g.stale {
		items = append(items, stWarn.Render("last known at "+fmtSec(g.asOf)+":"))
	}
	for _, s := range states {
		if s == result.StatePartitioned && g.counts[s] == 0 {
			continue // a state of its own only while there is one
		}
		lk := stateLooks[s]
		items = append(items, lk.style.Render(lk.glyph)+fmt.Sprintf(" %*d %s", nw, g.counts[s], s))
	}
	lines := flow(items, "  ", w)
	var more []string
	if l.Target != "" {
		more = append(more, fmt.Sprintf("target %s: %*d of %d run it", l.Target, nw, l.AtTarget, g.total))
	}
	switch {
	case l.Phase == PhaseRemote && g.stale:
		more = append(more, stDim.Render("no statuses while the broker is lost"))
	case l.Phase == PhaseRemote && hasSample(l) && !l.Latest.LeaderUp:
		// The workers' statuses come from the broker, not the leader:
		// they are live while the leader is down.
		more = append(more, stDim.Render("from statuses (live): online/offline"))
	case l.Phase == PhaseRemote:
		// The statuses say online or offline; the queues are not on the wire.
		more = append(more, stDim.Render("from statuses: online/offline only"))
	default:
		more = append(more,
			"queued "+pad(fmtNum(float64(l.Latest.WorkerDepth)), numWidth),
			"answered full "+pad(fmtNum(float64(l.Latest.WorkerFull)), numWidth))
	}
	return append(lines, flow(more, " · ", w)...)
}

// view draws the pane's interior; the cell at cursor (-1 for none) is
// drawn as cursorGlyph in reverse video, so it shows without colour too
// (the event pane lists its workers and their states). Stale states are
// drawn dim.
func (g *fleetGrid) view(cursor int) []string {
	lines := append([]string(nil), g.head...)
	var sb strings.Builder
	for r := range g.rows {
		sb.Reset()
		lo := r * g.cols
		if lo >= len(g.cells) {
			break
		}
		row := g.cells[lo:min(lo+g.cols, len(g.cells))]
		// One styled run per state change, not one per cell.
		for i := 0; i < len(row); {
			if lo+i == cursor {
				sb.WriteString(stPaused.Render(cursorGlyph))
				i++
				continue
			}
			j := i
			for j < len(row) && row[j] == row[i] && lo+j != cursor {
				j++
			}
			lk := stateLooks[row[i]]
			st := lk.style
			if g.stale {
				st = stDim
			}
			sb.WriteString(st.Render(strings.Repeat(lk.glyph, j-i)))
			i = j
		}
		lines = append(lines, sb.String())
	}
	return lines
}
