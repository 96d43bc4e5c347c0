package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	flowctl "github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
)

// View draws the screen: exactly the terminal's size at most, no line
// wider than it.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 || m.quitting {
		// No size yet (bubbletea sends one at the start); or quitting:
		// the last frame is blank, so nothing of the dashboard is left
		// on a terminal without an alternate screen, or in its scrollback.
		return ""
	}
	if m.lay.small {
		msg := fmt.Sprintf("terminal too small: %d×%d, need %d×%d", m.width, m.height, MinWidth, MinHeight)
		return clampScreen(lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center,
			lipgloss.NewStyle().Width(m.width).Align(lipgloss.Center).Render(msg)), m.width, m.height)
	}
	w := m.width
	var body string
	switch {
	case m.showHelp:
		body = m.helpView(w, m.lay.body)
	case m.zoom:
		body = m.paneView(m.focus)
	default:
		left := m.paneView(paneLeader)
		if m.lay.outbox.h > 0 {
			left = lipgloss.JoinVertical(lipgloss.Left, left, m.paneView(paneOutbox))
		}
		top := lipgloss.JoinHorizontal(lipgloss.Top, left, m.paneView(paneRelay))
		bottom := lipgloss.JoinHorizontal(lipgloss.Top, m.paneView(paneFleet), m.paneView(paneLog))
		body = lipgloss.JoinVertical(lipgloss.Left, top, bottom)
	}
	return clampScreen(m.headerView(w)+"\n"+body+"\n"+m.footerView(w), m.width, m.height)
}

// paneView draws pane p in its box at its current size.
func (m *Model) paneView(p pane) string {
	w, h := m.lay.size(p, m)
	iw, ih := w-2, h-2
	if iw < 1 || ih < 1 {
		return blank(w, h)
	}
	var body []string
	title := ""
	from, to := m.chart.window(&m.hist)
	span := windowTitle(m.chart, from, to)
	switch p {
	case paneLeader:
		title = "Leader" + span
		body = m.leaderPane(iw, ih)
	case paneRelay:
		title = m.relayTitle() + span
		body = m.relayPane(iw, ih)
	case paneOutbox:
		title = "Outbox" + span
		body = m.outboxPane(iw, ih)
	case paneFleet:
		switch {
		case m.live.Phase == result.PhaseDone:
			title = "At the end · " + m.fleet.title(w-5-len("At the end · "))
		case m.fleet.stale:
			title = "Last known · " + m.fleet.title(w-5-len("Last known · "))
		default:
			title = m.fleet.title(w - 5)
		}
		body = m.fleetPane()
	case paneLog:
		title = "Events"
		switch {
		case m.selecting:
			lo := m.cursor * m.fleet.per
			title = fmt.Sprintf("Workers %d–%d (arrows move · esc back)", lo, min(lo+m.fleet.per, m.fleet.total)-1)
		case m.filter.Value() != "":
			title = fmt.Sprintf("Events matching /%s: %d of %d", m.filter.Value(), len(m.logEntries()), len(m.events.entries))
			if m.events.scroll > 0 {
				title += fmt.Sprintf(" (%d lines up)", m.events.scroll)
			}
		case m.events.scroll > 0:
			title = fmt.Sprintf("Events (%d lines up · end follows)", m.events.scroll)
		case m.events.reported:
			title = "Events: result"
		}
		body = m.logPane(iw, ih)
	}
	return box(title, p == m.focus, w, h, body)
}

// LimiterSource is a Source that knows its relay's limiter
// ([runner.Runner] does): the relay pane then says whether its limits
// adapt (AIMD) or stay where they are set (static). Without it the pane
// names neither.
type LimiterSource interface {
	Limiter() flowctl.LimiterOptions
}

var _ LimiterSource = (*runner.Runner)(nil)

// relayTitle names the relay pane by what its limits are.
func (m *Model) relayTitle() string {
	ls, ok := m.src.(LimiterSource)
	if !ok {
		return "Relay: limit per partition"
	}
	switch lim := ls.Limiter(); lim.Strategy {
	case flowctl.Static:
		return fmt.Sprintf("Relay: static limit %d per partition", lim.Initial)
	default:
		return "Relay: AIMD limit per partition"
	}
}

// clampScreen cuts s to h lines of at most w cells: the last guard that
// no line passes the terminal's edge, whatever a pane drew.
func clampScreen(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}
