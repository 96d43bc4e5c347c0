package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// View draws the screen: exactly the terminal's size at most, no line
// wider than it.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return "" // no size yet: bubbletea sends one at the start
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
	switch p {
	case paneLeader:
		title = "Leader"
		body = m.leaderPane(iw, ih)
	case paneRelay:
		title = "Relay: AIMD limit per partition"
		body = m.relayPane(iw, ih)
	case paneOutbox:
		title = "Outbox"
		body = m.outboxPane(iw, ih)
	case paneFleet:
		title = m.fleet.title(w - 5)
		body = m.fleetPane()
	case paneLog:
		title = "Events"
		if m.events.scroll > 0 {
			title = fmt.Sprintf("Events (scrolled %d, end follows)", m.events.scroll)
		} else if m.events.reported {
			title = "Events: result"
		}
		body = m.logPane(iw, ih)
	}
	return box(title, p == m.focus, w, h, body)
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
