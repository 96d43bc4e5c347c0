package dash

import (
	"fmt"
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// col is one column of a chart: a series' envelope over the column's
// span of time, and its first and last value there (to join columns).
type col struct {
	agg
	ok   bool // the series has a value in the column
	seen bool // some sample falls in the column, with the series' value or not
}

// columns spreads the buckets of [from, to] over n columns and merges
// each column's buckets with get (ok false: the bucket has no value).
// Samples sparser than the columns (a remote leader's, every 2 s) leave
// columns with no sample at all (seen false), which a chart bridges: a
// column that has samples but no value of the series is a real gap.
func columns(h *history, from, to result.Seconds, n int, get func(b *bucket) (agg, bool)) []col {
	out := make([]col, n)
	if n <= 0 || to <= from {
		return out
	}
	dt := float64(to-from) / float64(n)
	at := func(t result.Seconds) int {
		return min(n-1, max(0, int(float64(t-from)/dt)))
	}
	bs := h.in(from, to)
	for i := range bs {
		a, ok := get(&bs[i])
		for c := at(bs[i].t0); c <= at(bs[i].t1); c++ {
			switch {
			case !ok:
				out[c].seen = true
			case !out[c].ok:
				out[c] = col{a, true, true}
			default:
				out[c].merge(a)
			}
		}
	}
	return out
}

// hold fills the columns between two samples with the value before
// them (sample and hold), so a series sampled more sparsely than the
// columns draws without holes; a gap the samples show (no value where
// there are samples) stays, and nothing is drawn before the first
// sample or after the last.
func hold(cs []col) []col {
	last := -1
	for i := range cs {
		switch {
		case cs[i].ok:
			if last >= 0 {
				v := cs[last].last
				for j := last + 1; j < i; j++ {
					cs[j] = col{agg{v, v, v, v}, true, false}
				}
			}
			last = i
		case cs[i].seen:
			last = -1
		}
	}
	return cs
}

func metricOf(m metric) func(b *bucket) (agg, bool) {
	return func(b *bucket) (agg, bool) { return b.m[m], true }
}

// peak is the largest value of cs (0 with none).
func peak(cs []col) float64 {
	p := 0.0
	for _, c := range cs {
		if c.ok {
			p = max(p, c.hi)
		}
	}
	return p
}

// bars are the eighths of a cell, for the column strips.
var bars = []rune(" ▁▂▃▄▅▆▇█")

// stripView draws cs as h rows of vertical bars, each column's highest
// value scaled to top: a peak inside a column is never averaged away.
func stripView(cs []col, h int, top float64, st lipgloss.Style) []string {
	rows := make([][]rune, h)
	for r := range rows {
		rows[r] = []rune(strings.Repeat(" ", len(cs)))
	}
	if top <= 0 {
		top = 1
	}
	for x, c := range cs {
		if !c.ok || c.hi <= 0 {
			continue
		}
		// At least one eighth, so a small non-zero value shows.
		eighths := max(1, int(math.Round(c.hi/top*float64(8*h))))
		for r := h - 1; r >= 0 && eighths > 0; r-- {
			rows[r][x] = bars[min(8, eighths)]
			eighths -= 8
		}
	}
	out := make([]string, h)
	for r := range rows {
		out[r] = st.Render(string(rows[r]))
	}
	return out
}

// strip is one labelled series of the leader and outbox panes: the
// label, the bars over the window, and the peak the bars are scaled to,
// in fixed widths so nothing moves as the numbers change.
type strip struct {
	label string
	m     metric
	style lipgloss.Style
	unit  func(float64) string
}

const (
	stripLabel = 8 // "reject/s"
	stripPeak  = 7 // "  12.3k"
)

// stripLines draws s over [from, to] in w×h: the label on its first row,
// the peak on its last.
func stripLines(hist *history, s strip, from, to result.Seconds, w, h int) []string {
	bw := w - stripLabel - stripPeak - 2
	if bw < 4 || h < 1 {
		return nil
	}
	cs := hold(columns(hist, from, to, bw, metricOf(s.m)))
	p := peak(cs)
	body := stripView(cs, h, p, s.style)
	out := make([]string, h)
	for r := range body {
		label, right := strings.Repeat(" ", stripLabel), strings.Repeat(" ", stripPeak)
		if r == 0 {
			label = fmt.Sprintf("%-*s", stripLabel, s.label)
		}
		if r == h-1 {
			right = fmt.Sprintf("%*s", stripPeak, s.unit(p))
		}
		out[r] = label + " " + body[r] + " " + stDim.Render(right)
	}
	return out
}

// axisRow is a time axis for a chart whose plot starts at column left
// and is n columns wide: simulated seconds at ticks at least 10 apart.
func axisRow(from, to result.Seconds, left, n int) string {
	row := []rune(strings.Repeat(" ", left+n))
	if n < 6 {
		return string(row)
	}
	ticks := max(1, n/12)
	for i := 0; i <= ticks; i++ {
		x := i * (n - 1) / ticks
		label := []rune(fmtSec(from + (to-from)*result.Seconds(float64(x)/float64(max(1, n-1)))))
		at := left + x
		switch {
		case i == ticks:
			at = left + n - len(label) // the last label ends at the edge
		case i > 0:
			at -= len(label) / 2
		}
		at = max(0, at)
		if at+len(label) > len(row) {
			continue
		}
		// Keep a space between labels.
		if at > 0 && row[at-1] != ' ' {
			continue
		}
		copy(row[at:], label)
	}
	return stDim.Render(string(row))
}

// limitLine is one line of the relay chart.
type limitLine struct {
	style lipgloss.Style
	get   func(b *bucket) (agg, bool)
}

// maxLines is how many partitions the relay chart draws one line for;
// with more, it draws the lowest and the highest limit instead.
var maxLines = len(lineColours)

// limitLines picks the chart's lines for n partitions.
func limitLines(n int) []limitLine {
	part := func(p int) func(b *bucket) (agg, bool) {
		return func(b *bucket) (agg, bool) {
			if p >= len(b.limits) || math.IsNaN(b.limits[p].lo) {
				return agg{}, false
			}
			return b.limits[p], true
		}
	}
	if n <= maxLines {
		lines := make([]limitLine, n)
		for p := range n {
			lines[p] = limitLine{lipgloss.NewStyle().Foreground(lineColours[p]), part(p)}
		}
		return lines
	}
	extreme := func(hi bool) func(b *bucket) (agg, bool) {
		return func(b *bucket) (agg, bool) {
			var out agg
			ok := false
			for p := range b.limits {
				a, have := part(p)(b)
				if !have {
					continue
				}
				if !ok {
					out, ok = a, true
					continue
				}
				if hi {
					out = agg{max(out.first, a.first), max(out.last, a.last), max(out.lo, a.lo), max(out.hi, a.hi)}
				} else {
					out = agg{min(out.first, a.first), min(out.last, a.last), min(out.lo, a.lo), min(out.hi, a.hi)}
				}
			}
			return out, ok
		}
	}
	return []limitLine{
		{lipgloss.NewStyle().Foreground(lineColours[0]), extreme(true)},
		{lipgloss.NewStyle().Foreground(lineColours[1]), extreme(false)},
	}
}

// limitChart draws the AIMD limit per partition over [from, to] as w×h
// braille lines (2×4 dots a cell, so a short chart still shows the
// sawtooth: the slow additive climb and the sharp multiplicative drop),
// with the scale on the left and simulated time below. A column that
// spans several samples draws their whole range, so a tooth narrower
// than a dot is not lost; samples sparser than the dots are joined by
// lines. Nil when there is no room or no data.
func limitChart(hist *history, lines []limitLine, from, to result.Seconds, w, h int) []string {
	if w < 12 || h < 3 || len(hist.buckets) == 0 || len(lines) == 0 {
		return nil
	}
	gh := h - 1 // the axis row
	dots := make([][]col, len(lines))
	top := 1.0
	for _, b := range hist.in(from, to) {
		for _, ln := range lines {
			if a, ok := ln.get(&b); ok {
				top = max(top, a.hi)
			}
		}
	}
	top = math.Ceil(top * 1.1) // headroom: the peaks do not run along the top edge
	gutter := len(fmtNum(top)) + 1
	gw := w - gutter
	if gw < 4 {
		return nil
	}
	for i, ln := range lines {
		dots[i] = columns(hist, from, to, 2*gw, ln.get)
	}
	c := canvas.New(gw, gh)
	for i, ln := range lines {
		g := graph.NewBrailleGrid(gw, gh, 0, float64(2*gw-1), 0, top)
		var prev canvas.Point
		have := false
		for x, d := range dots[i] {
			switch {
			case d.seen && !d.ok:
				have = false // the series has a gap here: not bridged
				continue
			case !d.ok:
				continue // no sample here: the line joins the ones either side
			}
			p := func(v float64) canvas.Point { return g.GridPoint(canvas.Float64Point{X: float64(x), Y: v}) }
			first := p(d.first)
			if have {
				for _, q := range graph.GetLinePoints(prev, first) {
					g.Set(q)
				}
			}
			for _, q := range graph.GetLinePoints(p(d.lo), p(d.hi)) {
				g.Set(q)
			}
			prev, have = p(d.last), true
		}
		graph.DrawBraillePatterns(&c, canvas.Point{}, g.BraillePatterns(), ln.style)
	}
	plot := strings.Split(canvasView(&c), "\n")
	out := make([]string, 0, h)
	for r, l := range plot {
		g := strings.Repeat(" ", gutter-1)
		switch r {
		case 0:
			g = fmt.Sprintf("%*s", gutter-1, fmtNum(top))
		case len(plot) - 1:
			g = fmt.Sprintf("%*s", gutter-1, "0")
		}
		out = append(out, stDim.Render(g)+stBorder.Render("│")+l)
	}
	return append(out, axisRow(from, to, gutter, gw))
}

// canvasView is canvas.Model.View rendered by runs of one colour instead
// of cell by cell: ntcharts styles every cell on its own, which made the
// relay chart three quarters of a frame's cost. Every style this package
// puts on a canvas differs only in its foreground colour.
func canvasView(c *canvas.Model) string {
	var sb strings.Builder
	var run []rune
	var fg lipgloss.TerminalColor = lipgloss.NoColor{}
	flush := func() {
		if len(run) > 0 {
			sb.WriteString(lipgloss.NewStyle().Foreground(fg).Render(string(run)))
			run = run[:0]
		}
	}
	for y := range c.Height() {
		if y > 0 {
			flush()
			sb.WriteByte('\n')
		}
		for x := range c.Width() {
			cell := c.Cell(canvas.Point{X: x, Y: y})
			r := cell.Rune
			if r == 0 {
				r = ' '
			}
			// A blank takes the current run's colour: nothing shows it.
			if r != ' ' {
				if f := cell.Style.GetForeground(); f != fg {
					flush()
					fg = f
				}
			}
			run = append(run, r)
		}
	}
	flush()
	return sb.String()
}

// windowTitle says which part of the run the charts show, for the
// panes' titles: "" for the whole run.
func windowTitle(v view, from, to result.Seconds) string {
	if v.whole() {
		return ""
	}
	return fmt.Sprintf(" [%s–%s]", fmtSec(from), fmtSec(to))
}
