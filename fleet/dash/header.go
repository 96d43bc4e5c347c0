package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// speedText is the run's speed ceiling and, when the source measures
// it, the pace it reached: "×10 (at ×9.8)" (a machine that cannot give
// simulated time that pace only slows it down), "–" for a source that
// knows neither.
func speedText(l *result.Live) string {
	switch {
	case l.Speed > 0 && l.Rate > 0:
		return fmtSpeed(l.Speed) + " (at " + fmtSpeed(l.Rate) + ")"
	case l.Speed > 0:
		return fmtSpeed(l.Speed)
	case l.Rate > 0:
		return fmtSpeed(l.Rate)
	}
	return "–"
}

// headerView is two lines: what runs and how far it is; then the next
// event, the leader and the paused marker (and the lag, when the run fell
// behind its schedule).
func (m *Model) headerView(w int) string {
	l := &m.live
	name := l.Scenario
	if name == "" {
		name = "(scenario)"
	}
	if l.Variant != "" {
		name += " [" + l.Variant + "]"
	}
	phase := l.Phase
	if phase == "" {
		phase = "starting"
	}
	if phase == result.PhaseDone && l.Report != nil {
		switch l.Report.Outcome() {
		case result.Pass:
			phase = stGood.Render("done: PASSED")
		case result.NotJudged:
			phase = stBad.Render("done: NOT JUDGED")
		default:
			phase = stBad.Render("done: FAILED")
		}
	}
	if l.Phase == PhaseRemote {
		return fit(stTitle.Render(name)+"  "+phase+"  attached "+fmtSec(l.Now), w) + "\n" + fit(remoteLine(l), w)
	}
	left := stTitle.Render(name) + "  " + phase + "  " + fmt.Sprintf("%s / %s", pad(fmtSec(l.Now), 5), fmtSec(l.Duration))
	right := fmt.Sprintf("speed %-5s  seed %d", speedText(l), l.Seed)
	frac := 0.0
	if l.Duration > 0 {
		frac = min(1, max(0, float64(l.Now/l.Duration)))
	}
	line1 := left
	bw := w - ansi.StringWidth(left) - ansi.StringWidth(right) - 4
	if bw >= 12 {
		bar := m.bar
		bar.FullColor = string(colAccent)
		bar.Width = bw
		line1 += "  " + bar.ViewAs(frac) + "  " + right
	} else {
		line1 += "  " + right
	}

	var items []string
	if l.Behind {
		// On the virtual clock only a wait on the wall clock inside the
		// process puts a run behind its schedule.
		items = append(items, stWarn.Render("lag "+fmtSec(l.Lag)+" BEHIND its schedule: timing checks will not be judged"))
	}
	switch {
	case l.Next != "":
		items = append(items, fmt.Sprintf("next in %s: %s at %s", pad(fmtSec(max(0, l.NextAt-l.Now)), 5), l.Next, fmtSec(l.NextAt)))
	case l.Phase != result.PhaseDone:
		items = append(items, "next: none left")
	}
	if hasSample(*l) && !l.Latest.LeaderUp {
		items = append(items, stBad.Render("leader DOWN"))
	}
	if l.Target != "" {
		items = append(items, "target "+l.Target)
	}
	line2 := strings.Join(items, "  ·  ")
	if l.Paused {
		p := stPaused.Render(" PAUSED ")
		// The marker keeps its place at the right edge; the rest gives way.
		room := w - ansi.StringWidth(p) - 1
		line2 = fit(line2, max(0, room)) + " " + p
	}
	return fit(line1, w) + "\n" + fit(line2, w)
}

// remoteLine is the second header line of a remote leader: how fresh its
// stats are instead of lag and the next event, which it has not.
func remoteLine(l *result.Live) string {
	items := []string{"no stats yet"}
	if hasSample(*l) {
		items[0] = "stats " + fmtSec(max(0, l.Now-l.Latest.T)) + " old"
		if !l.Latest.LeaderUp {
			items = append(items, stBad.Render("leader DOWN"))
		}
	}
	if l.Target != "" {
		items = append(items, "target "+l.Target)
	}
	items = append(items, stDim.Render("no timeline"))
	return strings.Join(items, "  ·  ")
}

// footerView is the short help, or why the run keys are off, with
// "? help" and "q quit" always at its right end: the other keys give
// way on a narrow terminal, never those two.
func (m *Model) footerView(w int) string {
	h := m.help
	tail := h.ShortHelpView([]key.Binding{m.keys.Help, m.keys.Quit})
	prefix := ""
	switch {
	case m.ctl == nil:
		prefix = stWarn.Render("read-only") + " · "
	case m.live.Phase == result.PhaseDone:
		prefix = stDim.Render("run finished") + " · "
	}
	room := w - ansi.StringWidth(prefix) - ansi.StringWidth(tail) - 3
	if room < 0 {
		return fit(tail, w)
	}
	h.Width = room
	left := h.ShortHelpView(m.keys.ShortHelp())
	if ansi.StringWidth(left) > room {
		left = ansi.Truncate(left, room, "…")
	}
	left = prefix + left
	gap := max(1, w-ansi.StringWidth(left)-ansi.StringWidth(tail))
	return fit(left+strings.Repeat(" ", gap)+tail, w)
}

// helpView is the help overlay, centred in the body.
func (m *Model) helpView(w, h int) string {
	hm := help.New()
	hm.ShowAll = true
	var lines []string
	lines = append(lines, strings.Split(hm.FullHelpView(m.keys.FullHelp()), "\n")...)
	lines = append(lines, "")
	switch {
	case m.ctl == nil:
		lines = append(lines, stWarn.Render("space + - p h k d are disabled: this is a read-only"),
			stWarn.Render("view (no in-process runner to steer)."))
	case m.live.Phase == result.PhaseDone:
		lines = append(lines, stDim.Render("The run has finished: space + - p h k d do nothing."))
	default:
		lines = append(lines, stDim.Render("Keys that change the run are logged in the event pane"),
			stDim.Render("and recorded in the run's report. + and - step the speed"),
			stDim.Render(fmt.Sprintf("from %s to %s.", fmtSpeed(MinKeySpeed), fmtSpeed(MaxKeySpeed))))
	}
	lines = append(lines, "",
		stDim.Render("The charts show the whole run in simulated seconds;"),
		stDim.Render("[ ] zoom and ← → pan over it (on the fleet pane the"),
		stDim.Render("arrows select a cell and list its workers)."))
	var legend []string
	for _, s := range stateOrder {
		lk := stateLooks[s]
		legend = append(legend, lk.style.Render(lk.glyph)+" "+s.String())
	}
	lines = append(lines, "", "fleet: "+strings.Join(legend, "  "),
		stDim.Render("A cell standing for several workers shows their majority"),
		stDim.Render("state (a tie shows the worse one)."))
	bw := 2
	for _, l := range lines {
		bw = max(bw, ansi.StringWidth(l)+4)
	}
	bw = min(bw, w)
	bh := min(len(lines)+2, h)
	padded := make([]string, len(lines))
	for i, l := range lines {
		padded[i] = " " + l
	}
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box("Help (? or esc to close)", true, bw, bh, padded))
}
