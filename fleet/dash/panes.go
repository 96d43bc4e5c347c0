package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Each pane draws its interior, w×h, as lines; box frames it.

func (m *Model) leaderPane(w, h int) []string {
	l := &m.live
	s := l.Latest
	if !hasSample(*l) {
		return []string{stDim.Render("waiting for the first sample…")}
	}
	var lines []string
	if !s.LeaderUp {
		// Why, when it fits: the header and the event log say it too.
		why := " (restarting from bbolt)"
		if l.Phase == PhaseRemote {
			why = " (offline, or no stats)"
		}
		if len("LEADER DOWN"+why) > w {
			why = ""
		}
		lines = append(lines, stBad.Render("LEADER DOWN"+why))
	}
	// Mailbox depth against capacity.
	nw := len(fmtNum(float64(s.LeaderCapacity)))
	label := fmt.Sprintf("mailbox %*s/%s ", nw, fmtNum(float64(s.LeaderDepth)), fmtNum(float64(s.LeaderCapacity)))
	frac := 0.0
	if s.LeaderCapacity > 0 {
		frac = min(1, float64(s.LeaderDepth)/float64(s.LeaderCapacity))
	}
	bar := m.bar
	bar.FullColor = string(fillColour(frac))
	if !s.LeaderUp {
		lines = append(lines, "mailbox –")
	} else if gw := w - ansi.StringWidth(label); gw >= 10 {
		bar.Width = gw
		lines = append(lines, label+bar.ViewAs(frac))
	} else {
		bar.Width = w
		lines = append(lines, label, bar.ViewAs(frac))
	}
	r := m.rates
	items := []string{
		"accepted " + pad(fmtRate(r.Accepted), numWidth+2),
		rateItem("rejected ", r.Rejected),
		m.waitLabel() + " " + pad(fmtSec(s.LeaderWaitP99Interval), 6),
		rateItem("dropped ", r.Dropped),
		"heartbeats queued " + pad(fmtNum(float64(s.HeartbeatsQueued)), numWidth),
	}
	text := flow(items, " · ", w)
	// The charts keep at least two strips and their axis: the text
	// lines give way first.
	if h-len(lines) >= 5 {
		text = text[:min(len(text), h-len(lines)-3)]
	}
	lines = append(lines, text...)
	return append(lines, m.strips(m.leaderStrips(), w, h-len(lines))...)
}

// waitLabel names the leader's wait over the latest interval: its p99,
// or for a remote leader its mean (the stats on the wire carry the
// wait's count and sum, not its buckets).
func (m *Model) waitLabel() string {
	if m.live.Phase == PhaseRemote {
		return "wait avg"
	}
	return "wait p99"
}

// leaderStrips are the leader pane's charts, most telling first: when
// the pane is short, the last ones give way. A run with pulling workers
// adds their job requests per second (a herd of polls after a leader
// restart), after the rejections.
func (m *Model) leaderStrips() []strip {
	ss := []strip{
		{"depth", mDepth, stLine, fmtNum},
		{"reject/s", mRejected, lipgloss.NewStyle().Foreground(colWarn), fmtNum},
	}
	if m.hist.polled {
		ss = append(ss, strip{"polls/s", mPolls, stLine, fmtNum})
	}
	return append(ss,
		strip{m.waitLabel(), mWait, stLine, func(v float64) string { return fmtSec(result.Seconds(v)) }},
		strip{"accept/s", mAccepted, lipgloss.NewStyle().Foreground(colGood), fmtNum},
	)
}

// strips draws as many of ss as fit in w×h over the charts' window,
// sharing h between them, with the time axis below.
func (m *Model) strips(ss []strip, w, h int) []string {
	if h < 2 || w-stripLabel-stripPeak-2 < 4 {
		return nil
	}
	n := min(len(ss), h-1)
	rows, extra := (h-1)/n, (h-1)%n
	from, to := m.chart.window(&m.hist)
	var out []string
	for i, s := range ss[:n] {
		r := rows
		if i < extra { // the rows left over go to the first strips
			r++
		}
		out = append(out, stripLines(&m.hist, s, from, to, w, r)...)
	}
	return append(out, axisRow(from, to, stripLabel+1, w-stripLabel-stripPeak-2))
}

// rateItem is a loss-like rate, highlighted when it is not zero.
func rateItem(label string, v float64) string {
	s := label + pad(fmtRate(v), numWidth+2)
	if v > 0 {
		return stWarn.Render(s)
	}
	return s
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
	switch {
	case len(s.Limits) == 0:
		limit = "limit –" // no relay to report one (the leader is down)
	case len(s.Limits) <= maxLines:
		parts := make([]string, len(s.Limits))
		for i, v := range s.Limits {
			parts[i] = lines[i].style.Render(fmt.Sprint(v))
		}
		limit += " = " + strings.Join(parts, "+")
	default:
		limit += fmt.Sprintf(" over %d partitions, %s–%s",
			len(s.Limits), lines[1].style.Render(fmt.Sprint(lo)), lines[0].style.Render(fmt.Sprint(hi)))
	}
	items := []string{
		limit,
		"in-flight " + pad(fmtNum(float64(s.InFlight)), numWidth),
		"delivered " + pad(fmtRate(m.rates.Delivered), numWidth+2),
		rateItem("backpressure ", m.rates.Backpressure),
		"retries " + pad(fmtNum(float64(s.Retries)), numWidth),
	}
	dead := "dead letters " + pad(fmtNum(float64(s.DeadLettered)), numWidth)
	if s.DeadLettered > 0 {
		dead = stBad.Render(dead)
	}
	items = append(items, dead)
	out := flow(items, " · ", w)
	from, to := m.chart.window(&m.hist)
	if ch := h - len(out); ch >= 3 {
		out = append(out, limitChart(&m.hist, limitLines(m.hist.parts), from, to, w, ch)...)
	}
	return out
}

func (m *Model) outboxPane(w, h int) []string {
	l := &m.live
	s := l.Latest
	if !hasSample(*l) {
		return nil
	}
	oldest := "oldest " + pad(fmtSec(s.OutboxOldest), 6)
	if s.OutboxDepth == 0 || !s.LeaderUp { // a leader that is down reports no age
		oldest = "oldest –"
	}
	lines := flow([]string{"depth " + pad(fmtNum(float64(s.OutboxDepth)), numWidth), oldest}, " · ", w)
	if rows := h - len(lines); rows > 0 {
		from, to := m.chart.window(&m.hist)
		lines = append(lines, stripLines(&m.hist, strip{"depth", mOutbox, stLine, fmtNum}, from, to, w, rows)...)
	}
	return lines
}

func (m *Model) fleetPane() []string {
	if m.fleet.total == 0 {
		return []string{stDim.Render("no workers yet")}
	}
	cursor := -1
	if m.selecting {
		cursor = m.cursor
	}
	return m.fleet.view(cursor)
}

// logEntries is the event log as the pane shows it: filtered by /.
func (m *Model) logEntries() []entry {
	es, _ := m.events.matching(m.filter.Value())
	return es
}

// logPane shows the event log's lines, each entry wrapped to w: the
// newest that fit, or older ones when scrolled (scroll counts lines up
// from the newest). With a filter, its line comes first and only the
// entries that match show. While a fleet cell is selected, the pane
// lists that cell's workers instead.
func (m *Model) logPane(w, h int) []string {
	if w < 1 || h < 1 {
		return nil
	}
	if m.selecting {
		return m.detailPane(w, h)
	}
	var head []string
	if m.filter.Focused() || m.filter.Value() != "" {
		head = []string{m.filter.view()}
		h--
	}
	lines := lastLines(m.logEntries(), w, m.events.scroll+h)
	end := max(min(len(lines), h), len(lines)-m.events.scroll)
	return append(head, lines[max(0, end-h):end]...)
}

// lastLines is the last n lines of entries wrapped to w (fewer when
// there are not so many): only the entries that show are wrapped.
func lastLines(entries []entry, w, n int) []string {
	var rev [][]string
	got := 0
	for i := len(entries) - 1; i >= 0 && got < n; i-- {
		l := wrapEntry(entries[i], w)
		rev = append(rev, l)
		got += len(l)
	}
	lines := make([]string, 0, got)
	for i := len(rev) - 1; i >= 0; i-- {
		lines = append(lines, rev[i]...)
	}
	return lines[max(0, len(lines)-n):]
}

// linesFrom counts the lines entries[from:] take wrapped to w.
func linesFrom(entries []entry, from, w int) int {
	n := 0
	for _, en := range entries[min(from, len(entries)):] {
		n += len(wrapEntry(en, w))
	}
	return n
}

// detailPane lists the selected fleet cell's workers, one a line, in
// fixed columns.
func (m *Model) detailPane(w, h int) []string {
	g := &m.fleet
	lo := m.cursor * g.per
	hi := min(lo+g.per, g.total)
	if len(m.details) == 0 {
		if _, ok := m.src.(WorkerSource); !ok {
			return []string{fmt.Sprintf("workers %d–%d", lo, hi-1), stDim.Render("this source cannot list its workers")}
		}
		return []string{stDim.Render("no workers in this cell")}
	}
	// A narrow pane drops the state's name: its glyph says it.
	stateW, stateHead := 13, "state"
	if w < 52 {
		stateW, stateHead = 1, "s"
	}
	lines := []string{stTitle.Render(fmt.Sprintf("%-8s %-8s %-*s %7s %8s", "id", "version", stateW, stateHead, "mailbox", "attempts"))}
	for _, d := range m.details {
		if len(lines) >= h {
			lines[h-1] = stDim.Render(fmt.Sprintf("… %d more: a larger terminal shows smaller cells", len(m.details)-(h-2)))
			break
		}
		lk := stateLooks[clampState(d.State)]
		mb := fmt.Sprintf("%d/%d", d.Depth, d.Capacity)
		att := fmt.Sprint(d.ConnectAttempts)
		if m.live.Phase == PhaseRemote {
			mb, att = "–", "–" // the statuses do not carry them
		}
		state := lk.style.Render(lk.glyph)
		if stateW > 1 {
			state += fmt.Sprintf(" %-*s", stateW-2, d.State)
		}
		lines = append(lines, fmt.Sprintf("%-8s %-8s %s %7s %8s", cut(d.ID, 8), cut(d.Version, 8), state, mb, att))
	}
	return lines
}

// cut shortens s to n runes.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
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
		case result.Pass:
			tag = stGood.Render(fmt.Sprintf("%-4s", tag))
		case result.Fail:
			tag = stBad.Render(fmt.Sprintf("%-4s", tag))
		default:
			tag = stWarn.Render(fmt.Sprintf("%-4s", tag))
		}
		return tag + " " + en.text
	}
	kind := fmt.Sprintf("%-7s", en.label())
	text := en.text
	switch {
	case en.kind == kindLog && en.level == "error":
		kind, text = stBad.Render(kind), stBad.Render(text)
	case en.kind == kindLog && en.level == "warn":
		kind = stWarn.Render(kind)
	}
	switch en.kind {
	case "warning":
		kind, text = stWarn.Render(kind), stWarn.Render(text)
	case "control", kindKey:
		kind = stFocused.Render(fmt.Sprintf("%-7s", "control"))
		if en.kind == kindKey {
			text += stDim.Render(" …")
		}
	case kindNote:
		kind, text = stDim.Render(kind), stDim.Render(text)
	case kindLog:
		if en.level != "warn" && en.level != "error" {
			kind, text = stDim.Render(kind), stDim.Render(text)
		}
	}
	return stDim.Render(fmt.Sprintf("%7s", fmtSec(en.t))) + " " + kind + " " + text
}
