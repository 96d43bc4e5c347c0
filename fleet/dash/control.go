package dash

import (
	"fmt"
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// PartitionPercent is the share of workers the p key cuts off.
const PartitionPercent = 10

// key handles a key press. A key that changes the run calls Controls and
// shows in the event log at once, marked pending until the run's own
// record of it arrives in a snapshot.
func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit):
		m.quitting = true
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.Close):
		m.showHelp, m.zoom = false, false
		m.refit()
	case key.Matches(msg, k.Focus):
		m.moveFocus(1)
	case key.Matches(msg, k.FocusBack):
		m.moveFocus(numPanes - 1)
	case key.Matches(msg, k.Zoom):
		m.zoom = !m.zoom
		m.refit()
	case key.Matches(msg, k.Up):
		m.events.scrollBy(m.scrollStep(msg))
	case key.Matches(msg, k.Down):
		m.events.scrollBy(-m.scrollStep(msg))
	case key.Matches(msg, k.Top):
		m.events.scrollBy(len(m.events.entries))
	case key.Matches(msg, k.Bottom):
		m.events.scroll = 0

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
		s := m.live.Speed
		if s <= 0 {
			s = 1
		}
		if key.Matches(msg, k.Faster) {
			s *= 2
		} else {
			s /= 2
		}
		m.ctl.SetSpeed(s)
		m.control("speed " + fmtSpeed(s))
		m.live.Speed = s
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
		// Until the snapshot shows it, the next d deploys the one after.
		m.live.Target = v
	default:
		m.disabledKey(msg)
	}
	return m, nil
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

// scrollStep is one line for the arrows and a page for pgup/pgdown.
func (m *Model) scrollStep(msg tea.KeyMsg) int {
	if s := msg.String(); s == "pgup" || s == "pgdown" {
		_, h := m.lay.size(paneLog, m)
		return max(1, h-3)
	}
	return 1
}

// NextVersion is the version the d key deploys after target: the next
// one by scenario.NextVersion, and "1.0.1" when nothing was deployed yet
// (workers start at "1.0.0" by default).
func NextVersion(target string) string {
	if target == "" {
		return "1.0.1"
	}
	return scenario.NextVersion(target)
}
