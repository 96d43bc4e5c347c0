package dash

import (
	"fmt"
	"strings"

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
	if l.Phase == PhaseRemote {
		// The name says it is remote, and where: no phase word repeats it.
		// How long attached keeps its place; a long name gives way.
		at := "  attached " + fmtSec(l.Now)
		if room := w - ansi.StringWidth(at); ansi.StringWidth(name) > room {
			name = ansi.Truncate(name, max(0, room), "…")
		}
		return fit(stTitle.Render(name)+at, w) + "\n" + fit(remoteLine(l), w)
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
	at := "  " + phase + "  " + fmt.Sprintf("%s / %s", pad(fmtSec(l.Now), 5), fmtSec(l.Duration))
	right := fmt.Sprintf("speed %-5s  seed %d", speedText(l), l.Seed)
	left := stTitle.Render(name) + m.variantText(w-ansi.StringWidth(name+at+right)-4) + at
	if ansi.StringWidth(left+right)+2 > w {
		right = "speed " + speedText(l) // the seed gives way first
	}
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

// variantText names the variant after the scenario's name: in a sweep
// "variant 2 of 3" and its values, as fully as room allows (the
// count always shows); a variant outside a sweep in brackets.
func (m *Model) variantText(room int) string {
	sw, name := m.opts.Sweep, m.live.Variant
	if !sw.on() {
		if name == "" {
			return ""
		}
		return " [" + name + "]"
	}
	pos := fmt.Sprintf("variant %d of %d", sw.Variant, sw.Variants)
	for _, s := range []string{name, sw.Label} {
		if s != "" && ansi.StringWidth(pos+": "+s)+2 <= room {
			return "  " + stTitle.Render(pos) + ": " + s
		}
	}
	return "  " + stTitle.Render(pos)
}

// remoteLine is the second header line of a remote leader: how fresh its
// stats are instead of lag and the next event, which it has not.
func remoteLine(l *result.Live) string {
	items := []string{"no stats yet"}
	if hasSample(*l) {
		if t, ok := lastReport(l); ok {
			items[0] = "stats " + fmtSec(max(0, l.Now-t)) + " old"
		}
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

// lastReport is when the newest report of a remote leader came: while
// the leader is down, the latest sample is the dashboard's own, a marker
// of the outage, not a report.
func lastReport(l *result.Live) (result.Seconds, bool) {
	if l.Latest.LeaderUp {
		return l.Latest.T, true
	}
	for i := len(l.History) - 1; i >= 0; i-- {
		if l.History[i].LeaderUp {
			return l.History[i].T, true
		}
	}
	return 0, false
}

// footerView is the short help, or why the run keys are off, with
// "? help" and what q does (in a sweep, "q next variant" and "ctrl+c stop
// sweep") always at its right end: the other keys give way on a narrow
// terminal, never those.
func (m *Model) footerView(w int) string {
	h := m.help
	tail := h.ShortHelpView(m.keys.tail())
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
