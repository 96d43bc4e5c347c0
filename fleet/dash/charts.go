package dash

import (
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// sparkView draws the newest w values as a w×h sparkline, scaled to the
// largest value shown (ntcharts would otherwise start its scale at 1,
// which flattens values in seconds).
func sparkView(values []float64, w, h int, st lipgloss.Style) string {
	if w < 1 || h < 1 {
		return ""
	}
	if len(values) > w {
		values = values[len(values)-w:]
	}
	peak := 0.0
	for _, v := range values {
		peak = max(peak, v)
	}
	opts := []sparkline.Option{sparkline.WithStyle(st)}
	if peak > 0 {
		opts = append(opts, sparkline.WithMaxValue(peak))
	}
	sl := sparkline.New(w, h, opts...)
	sl.PushAll(values)
	sl.DrawColumnsOnly()
	return canvasView(&sl.Canvas)
}

// maxLines is how many partitions the relay chart draws one line for;
// with more, it draws the lowest and the highest limit instead.
var maxLines = len(lineColours)

// limitLine is one line of the relay chart.
type limitLine struct {
	style lipgloss.Style
	value func(s *scenario.Sample) (float64, bool)
}

// limitLines picks the chart's lines for n partitions.
func limitLines(n int) []limitLine {
	if n <= maxLines {
		lines := make([]limitLine, n)
		for p := range n {
			lines[p] = limitLine{
				style: lipgloss.NewStyle().Foreground(lineColours[p]),
				value: func(s *scenario.Sample) (float64, bool) {
					if p >= len(s.Limits) {
						return 0, false
					}
					return float64(s.Limits[p]), true
				},
			}
		}
		return lines
	}
	extreme := func(pick func(a, b int) int) func(s *scenario.Sample) (float64, bool) {
		return func(s *scenario.Sample) (float64, bool) {
			if len(s.Limits) == 0 {
				return 0, false
			}
			v := s.Limits[0]
			for _, l := range s.Limits[1:] {
				v = pick(v, l)
			}
			return float64(v), true
		}
	}
	return []limitLine{
		{lipgloss.NewStyle().Foreground(lineColours[0]), extreme(func(a, b int) int { return max(a, b) })},
		{lipgloss.NewStyle().Foreground(lineColours[1]), extreme(func(a, b int) int { return min(a, b) })},
	}
}

// limitChart draws the AIMD limit per partition against simulated time
// as a w×h ntcharts line chart. The lines are braille (2×4 dots a cell),
// so a short chart still shows the sawtooth: the slow additive climb and
// the sharp multiplicative drop. "" when there is no room or no data.
func limitChart(samples []scenario.Sample, lines []limitLine, w, h int) string {
	if w < 12 || h < 2 || len(samples) == 0 || len(lines) == 0 {
		return ""
	}
	// One braille dot column per sample at most: older samples scroll
	// off the left, so each tooth of the saw stays several dots wide.
	if keep := 2 * w; len(samples) > keep {
		samples = samples[len(samples)-keep:]
	}
	minX, maxX := float64(samples[0].T), float64(samples[len(samples)-1].T)
	if maxX <= minX {
		maxX = minX + 1
	}
	top := 1.0
	for i := range samples {
		for _, ln := range lines {
			if v, ok := ln.value(&samples[i]); ok {
				top = max(top, v)
			}
		}
	}
	// Headroom, so the peaks do not run along the top edge.
	top = math.Ceil(top * 1.1)

	// The time axis takes two rows: only when the lines keep six.
	xStep := 0
	if h >= 8 {
		xStep = max(10, w/4)
	}
	lc := linechart.New(w, h, minX, maxX, 0, top,
		linechart.WithXYSteps(xStep, 2),
		linechart.WithStyles(stBorder, stDim, stLine),
		linechart.WithXLabelFormatter(func(_ int, v float64) string { return fmtSec(scenario.Seconds(v)) }),
	)
	gw, gh := lc.GraphWidth(), lc.GraphHeight()
	if gw < 2 || gh < 1 {
		return ""
	}
	lc.DrawXYAxisAndLabel()
	at := canvas.Point{X: lc.Origin().X + 1, Y: 0}
	for _, ln := range lines {
		g := graph.NewBrailleGrid(gw, gh, minX, maxX, 0, top)
		var prev canvas.Point
		have := false
		for i := range samples {
			v, ok := ln.value(&samples[i])
			if !ok {
				have = false
				continue
			}
			p := g.GridPoint(canvas.Float64Point{X: float64(samples[i].T), Y: v})
			if !have {
				prev = p
			}
			for _, q := range graph.GetLinePoints(prev, p) {
				g.Set(q)
			}
			prev, have = p, true
		}
		graph.DrawBraillePatterns(&lc.Canvas, at, g.BraillePatterns(), ln.style)
	}
	return canvasView(&lc.Canvas)
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
