package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// Each pane draws its interior, w×h, as lines; box frames it.

func (m *Model) leaderPane(w, h int) []string {
	l := &m.live
	s := l.Latest
	if !hasSample(*l) {
		return []string{stDim.Render("waiting for the first sample…")}
	}
	var lines []string
	switch {
	case !s.LeaderUp && l.Phase == PhaseRemote:
		lines = append(lines, stBad.Render("LEADER DOWN (offline, or no stats)"))
	case !s.LeaderUp:
		lines = append(lines, stBad.Render("LEADER DOWN (restarting from bbolt)"))
	}
	// Mailbox depth against capacity.
	label := fmt.Sprintf("mailbox %s/%s ", fmtNum(float64(s.LeaderDepth)), fmtNum(float64(s.LeaderCapacity)))
	frac := 0.0
	if s.LeaderCapacity > 0 {
		frac = min(1, float64(s.LeaderDepth)/float64(s.LeaderCapacity))
	}
	bar := m.bar
	bar.FullColor = string(fillColour(frac))
	if gw := w - ansi.StringWidth(label); gw >= 10 {
		bar.Width = gw
		lines = append(lines, label+bar.ViewAs(frac))
	} else {
		bar.Width = w
		lines = append(lines, label, bar.ViewAs(frac))
	}
	r := m.rates
	items := []string{
		"accepted " + fmtRate(r.Accepted),
		rateItem("rejected ", r.Rejected),
		rateItem("dropped ", r.Dropped),
		"heartbeats queued " + fmtNum(float64(s.HeartbeatsQueued)),
	}
	lines = append(lines, flow(items, " · ", w)...)
	// Wait p99 over time.
	hist := series(*l)
	waits := make([]float64, len(hist))
	peak := 0.0
	for i := range hist {
		waits[i] = float64(hist[i].LeaderWaitP99)
		peak = max(peak, waits[i])
	}
	lines = append(lines, fmt.Sprintf("wait p99 %s (peak %s)", fmtSec(s.LeaderWaitP99), fmtSec(scenario.Seconds(peak))))
	if rows := h - len(lines); rows > 0 {
		lines = append(lines, strings.Split(sparkView(waits, w, rows, stLine), "\n")...)
	}
	return lines
}

// rateItem is a loss-like rate, highlighted when it is not zero.
func rateItem(label string, v float64) string {
	if v > 0 {
		return stWarn.Render(label + fmtRate(v))
	}
	return label + fmtRate(v)
}

func fillColour(frac float64) lipgloss.Color {
	switch {
	case frac >= 0.9:
		return colBad
	case frac >= 0.7:
		return colWarn
	}
	return colAccent
}

func (m *Model) relayPane(w, h int) []string {
	l := &m.live
	s := l.Latest
	if !hasSample(*l) {
		return nil
	}
	sum, lo, hi := 0, 0, 0
	for i, v := range s.Limits {
		sum += v
		if i == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	lines := limitLines(len(s.Limits))
	limit := fmt.Sprintf("limit Σ%d", sum)
	if len(s.Limits) <= maxLines {
		parts := make([]string, len(s.Limits))
		for i, v := range s.Limits {
			parts[i] = lines[i].style.Render(fmt.Sprint(v))
		}
		limit += " = " + strings.Join(parts, "+")
	} else {
		limit += fmt.Sprintf(" over %d partitions, %s–%s",
			len(s.Limits), lines[1].style.Render(fmt.Sprint(lo)), lines[0].style.Render(fmt.Sprint(hi)))
	}
	items := []string{
		limit,
		"in-flight " + fmtNum(float64(s.InFlight)),
		"delivered " + fmtRate(m.rates.Delivered),
		rateItem("backpressure ", m.rates.Backpressure),
		"retries " + fmtNum(float64(s.Retries)),
	}
	if s.DeadLettered > 0 {
		items = append(items, stBad.Render("dead letters "+fmtNum(float64(s.DeadLettered))))
	} else {
		items = append(items, "dead letters 0")
	}
	out := flow(items, " · ", w)
	if ch := h - len(out); ch >= 2 {
		if c := limitChart(series(*l), lines, w, ch); c != "" {
			out = append(out, strings.Split(c, "\n")...)
		}
	}
	return out
}

func (m *Model) outboxPane(w, h int) []string {
	l := &m.live
	s := l.Latest
	if !hasSample(*l) {
		return nil
	}
	oldest := "oldest " + fmtSec(s.OutboxOldest)
	if s.OutboxDepth == 0 {
		oldest = "oldest –"
	}
	lines := flow([]string{"depth " + fmtNum(float64(s.OutboxDepth)), oldest}, " · ", w)
	if rows := h - len(lines); rows > 0 {
		hist := series(*l)
		depths := make([]float64, len(hist))
		for i := range hist {
			depths[i] = float64(hist[i].OutboxDepth)
		}
		lines = append(lines, strings.Split(sparkView(depths, w, rows, stLine), "\n")...)
	}
	return lines
}

func (m *Model) fleetPane() []string {
	if m.fleet.total == 0 {
		return []string{stDim.Render("no workers yet")}
	}
	return m.fleet.view()
}

// logPane shows the newest entries that fit, or older ones when
// scrolled; a long entry wraps. Once the run is done and the log
// follows, it shows the summary and verdicts from their start, so they
// stay on screen (with the events before them if there is room).
func (m *Model) logPane(w, h int) []string {
	e := &m.events
	n := len(e.entries)
	if n == 0 || w < 1 || h < 1 {
		return nil
	}
	if e.scroll == 0 && e.reported {
		var lines []string
		for i := e.reportAt; i < n && len(lines) < h; i++ {
			lines = append(lines, wrapEntry(e.entries[i], w)...)
		}
		if len(lines) >= h {
			return lines[:h]
		}
		return append(tailLines(e.entries[:e.reportAt], w, h-len(lines)), lines...)
	}
	return tailLines(e.entries[:n-min(e.scroll, n-1)], w, h)
}

// tailLines is the last entries that fit whole in h lines, wrapped to w
// (the tail of the newest one if even it does not fit).
func tailLines(entries []entry, w, h int) []string {
	var rev [][]string
	got := 0
	for i := len(entries) - 1; i >= 0; i-- {
		l := wrapEntry(entries[i], w)
		if got+len(l) > h && got > 0 {
			break
		}
		rev = append(rev, l)
		got += len(l)
	}
	lines := make([]string, 0, got)
	for i := len(rev) - 1; i >= 0; i-- {
		lines = append(lines, rev[i]...)
	}
	return lines[max(0, len(lines)-h):]
}

// wrapEntry is an entry's styled line wrapped to w, continuation lines
// indented past the time column.
func wrapEntry(en entry, w int) []string {
	s := en.styled()
	if ansi.StringWidth(s) <= w || w < 12 {
		return []string{s}
	}
	indent := 2
	if w >= 30 {
		indent = 8
	}
	first, rest, _ := strings.Cut(ansi.Wrap(s, w, " "), "\n")
	// Re-wrap the rest with room for the indent.
	rest = strings.ReplaceAll(rest, "\n", " ")
	lines := []string{first}
	for _, l := range strings.Split(ansi.Wrap(rest, w-indent, " "), "\n") {
		lines = append(lines, strings.Repeat(" ", indent)+l)
	}
	return lines
}

// styled is the entry's line with colours by kind.
func (en entry) styled() string {
	switch en.kind {
	case kindSummary:
		return stTitle.Render(en.text)
	case kindVerdict:
		tag := verdictTag(en.status)
		switch en.status {
		case scenario.Pass:
			tag = stGood.Render(fmt.Sprintf("%-4s", tag))
		case scenario.Fail:
			tag = stBad.Render(fmt.Sprintf("%-4s", tag))
		default:
			tag = stWarn.Render(fmt.Sprintf("%-4s", tag))
		}
		return tag + " " + en.text
	}
	kind := fmt.Sprintf("%-7s", en.kind)
	text := en.text
	switch en.kind {
	case "warning":
		kind, text = stWarn.Render(kind), stWarn.Render(text)
	case "control", kindKey:
		kind = stFocused.Render(fmt.Sprintf("%-7s", "control"))
		if en.kind == kindKey {
			text += stDim.Render(" …")
		}
	case kindLog, kindNote:
		kind, text = stDim.Render(kind), stDim.Render(text)
	}
	return stDim.Render(fmt.Sprintf("%7s", fmtSec(en.t))) + " " + kind + " " + text
}
