package dash

import (
	"fmt"
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetsim/fleetsim/fleet/runner"
)

// PartitionPercent is the share of workers the p key cuts off.
const PartitionPercent = 10

// MinKeySpeed and MaxKeySpeed bound the speeds the - and + keys step to;
// a step past them says so in the event pane instead of doing nothing.
const (
	MinKeySpeed = 1.0 / 64
	MaxKeySpeed = 64.0
)

// key handles a key press. A key that changes the run calls Controls and
// shows in the event log at once, marked pending until the run's own
// record of it arrives in a snapshot.
func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := &m.keys
	if m.filter.Focused() {
		return m.filterKey(msg)
	}
	switch {
	case key.Matches(msg, k.StopSweep):
		m.quitting, m.stopSweep = true, true
		return m, tea.Quit
	case key.Matches(msg, k.Quit):
		m.quitting = true
		return m, tea.Quit
	case m.viewKey(msg):
	default:
		m.runKey(msg)
	}
	return m, nil
}

// viewKey handles a key that changes what the dashboard shows (help,
// focus, zoom, filter, scrolling, the fleet cursor, the charts' window),
// and reports whether msg was one.
func (m *Model) viewKey(msg tea.KeyMsg) bool {
	k := &m.keys
	logW, logH := m.lay.size(paneLog, m)
	inFleet := m.focus == paneFleet && !m.showHelp
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp, m.helpTop = !m.showHelp, 0
	case m.showHelp && key.Matches(msg, k.Up, k.Down, k.Top, k.Bottom):
		m.helpKey(msg)
	case key.Matches(msg, k.Close):
		m.closeTop()
	case key.Matches(msg, k.Focus):
		m.moveFocus(1)
	case key.Matches(msg, k.FocusBack):
		m.moveFocus(numPanes - 1)
	case key.Matches(msg, k.Zoom):
		m.zoom = !m.zoom
		m.refit()
	case key.Matches(msg, k.Filter):
		m.filter.Focus()
		m.selecting = false
	case inFleet && key.Matches(msg, k.Up, k.Down, k.Left, k.Right):
		m.moveCursor(msg)
	case key.Matches(msg, k.Up):
		m.scrollLog(m.scrollStep(msg), logW, logH)
	case key.Matches(msg, k.Down):
		m.scrollLog(-m.scrollStep(msg), logW, logH)
	case key.Matches(msg, k.Top):
		m.scrollLog(1<<30, logW, logH)
	case key.Matches(msg, k.Bottom):
		m.events.scroll = 0
	case key.Matches(msg, k.Left, k.Right) && m.chart.whole():
		m.events.addNote(m.live.Now, "the charts show the whole run: [ zooms in, then ← → pan")
	case key.Matches(msg, k.Left):
		m.chart.pan(&m.hist, -0.25)
	case key.Matches(msg, k.Right):
		m.chart.pan(&m.hist, 0.25)
	case key.Matches(msg, k.ZoomIn):
		m.chart.zoomBy(&m.hist, 1)
	case key.Matches(msg, k.ZoomOut):
		m.chart.zoomBy(&m.hist, -1)
	default:
		return false
	}
	return true
}

// helpKey scrolls the help, which is on top, by an arrow, page, home or
// end key.
func (m *Model) helpKey(msg tea.KeyMsg) {
	k := &m.keys
	step := m.scrollStep(msg)
	switch {
	case key.Matches(msg, k.Up):
		m.scrollHelp(-step)
	case key.Matches(msg, k.Down):
		m.scrollHelp(step)
	case key.Matches(msg, k.Top):
		m.scrollHelp(-1 << 30)
	default:
		m.scrollHelp(1 << 30)
	}
}

// closeTop closes what is on top: the help or a zoomed pane, else the
// fleet selection, else the event filter.
func (m *Model) closeTop() {
	switch {
	case m.showHelp || m.zoom:
		m.showHelp, m.zoom = false, false
	case m.selecting:
		m.selecting, m.details = false, nil
	case m.filter.Value() != "":
		m.filter.SetValue("")
		m.events.scroll = 0
	}
	m.refit()
}

// runKey handles a key that steers the run, or explains why it did
// nothing.
func (m *Model) runKey(msg tea.KeyMsg) {
	k := &m.keys
	switch {
	case key.Matches(msg, k.Pause):
		if m.live.Paused {
			m.ctl.Resume()
			m.control("resume")
		} else {
			m.ctl.Pause()
			m.control("pause")
		}
		m.live.Paused = !m.live.Paused
	case key.Matches(msg, k.Faster), key.Matches(msg, k.Slower):
		m.stepSpeed(key.Matches(msg, k.Slower))
	case key.Matches(msg, k.Partition):
		m.ctl.Partition(PartitionPercent)
		m.control(fmt.Sprintf("partition %d%% of workers", PartitionPercent))
	case key.Matches(msg, k.Heal):
		m.ctl.Heal()
		m.control("heal partitions")
	case key.Matches(msg, k.Kill):
		m.ctl.KillLeader()
		m.control("kill leader")
	case key.Matches(msg, k.Deploy):
		v := NextVersion(m.live.Target)
		m.ctl.Deploy(v)
		m.control("deploy " + v)
		// Until the snapshot shows it, the next d deploys the one after,
		// and the fleet line says what is true: a version just sent is
		// run by no worker yet.
		m.live.Target, m.live.AtTarget = v, 0
		m.refitFleet()
	default:
		m.disabledKey(msg)
	}
}

// stepSpeed doubles the run's speed, or halves it if slower, within
// MinKeySpeed and MaxKeySpeed; at a bound it says so instead.
func (m *Model) stepSpeed(slower bool) {
	s := m.live.Speed
	if s <= 0 {
		s = 1
	}
	next := min(s*2, MaxKeySpeed)
	limit := "fastest"
	if slower {
		next, limit = max(s/2, MinKeySpeed), "slowest"
	}
	if next == s {
		m.events.addNote(m.live.Now, fmt.Sprintf("speed %s is the %s the keys go (%s to %s)",
			fmtSpeed(s), limit, fmtSpeed(MinKeySpeed), fmtSpeed(MaxKeySpeed)))
		return
	}
	m.ctl.SetSpeed(next)
	m.control("speed " + fmtSpeed(next))
	m.live.Speed = next
}

// filterKey edits the event filter: enter keeps it, esc clears it.
func (m Model) filterKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEnter:
		m.filter.Blur()
		return m, nil
	case tea.KeyEsc:
		m.filter.Blur()
		m.filter.SetValue("")
		return m, nil
	case tea.KeyCtrlC:
		m.quitting = true
		m.stopSweep = m.keys.StopSweep.Enabled()
		return m, tea.Quit
	}
	m.filter.update(msg)
	m.events.scroll = 0
	return m, nil
}

// moveCursor moves the fleet grid's selection by an arrow key; the
// first arrow selects the first cell.
func (m *Model) moveCursor(msg tea.KeyMsg) {
	g := &m.fleet
	if len(g.cells) == 0 || g.cols == 0 {
		return
	}
	if !m.selecting {
		m.selecting, m.cursor = true, 0
	} else {
		c := m.cursor
		switch msg.String() {
		case "left":
			c--
		case "right":
			c++
		case "up", "pgup":
			c -= g.cols
		case "down", "pgdown":
			c += g.cols
		}
		if c >= 0 && c < len(g.cells) {
			m.cursor = c
		}
	}
	m.readDetails()
}

// moveFocus moves the focus by step (mod numPanes), past panes the
// layout has no room for.
func (m *Model) moveFocus(step pane) {
	for range numPanes {
		m.focus = (m.focus + step) % numPanes
		if m.zoom { // a zoomed pane always has the whole body
			break
		}
		if w, h := m.lay.size(m.focus, m); w > 0 && h > 0 {
			break
		}
	}
	m.refit()
}

// control logs a key that changed the run.
func (m *Model) control(text string) {
	m.events.addKey(m.live.Now, text)
}

// disabledKey explains a run key that did nothing.
func (m *Model) disabledKey(msg tea.KeyMsg) {
	for _, b := range m.keys.runKeys() {
		if b.Enabled() || !slices.Contains(b.Keys(), msg.String()) {
			continue
		}
		why := "the run has finished"
		if m.ctl == nil {
			why = "read-only: no in-process runner to steer"
		}
		m.events.addNote(m.live.Now, fmt.Sprintf("%s (%s) ignored: %s", b.Help().Key, b.Help().Desc, why))
		return
	}
}

// scrollLog scrolls the event pane by n lines (up when positive).
func (m *Model) scrollLog(n, w, h int) {
	m.events.scrollLines(n, m.logEntries(), max(1, w-2), max(1, h-2))
}

// scrollStep is one line for the arrows and a page for pgup/pgdown.
func (m *Model) scrollStep(msg tea.KeyMsg) int {
	if s := msg.String(); s == "pgup" || s == "pgdown" {
		_, h := m.lay.size(paneLog, m)
		return max(1, h-3)
	}
	return 1
}

// NextVersion is the version the d key deploys after target: the next
// one by runner.NextVersion, and "1.0.1" when nothing was deployed yet
// (workers start at "1.0.0" by default).
func NextVersion(target string) string {
	if target == "" {
		return "1.0.1"
	}
	return runner.NextVersion(target)
}
