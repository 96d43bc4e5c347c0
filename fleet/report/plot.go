package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A chart is drawn in bands, top down: the title; the legend, in rows
// across the chart; the events' numbers, over the lines that mark them;
// then the axes and the data. The legend and the numbers sit above the
// data, not on it, so neither hides a line nor each other; and the data
// area needs no room left over for a legend drawn inside it.

// Text sizes, in points.
const (
	titleSize  = 12
	axisSize   = 10
	tickSize   = 9
	legendSize = 9
	labelSize  = 8
)

// Spacing of the bands, in points.
const (
	bandGap   = 4  // between the title, the legend, the numbers and the data
	legendGap = 12 // between two entries of the legend
	thumbW    = 16 // an entry's sample of its line
	labelGap  = 3  // the least room between two event numbers
	// labelRows is the most rows the events' numbers are staggered over;
	// numbers that would not fit even so are merged into a range.
	labelRows = 2
)

// render draws one chart and returns its SVG element, ready to inline.
// gonum/plot panics on some inputs it considers programming errors; a
// report must not take the process down with it.
func render(s chartSpec, tmax float64, marks []marker) (svg template.HTML, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("drawing: %v", v)
		}
	}()
	d, err := newDrawing(s, tmax, marks)
	if err != nil {
		return "", err
	}
	c := vgsvg.New(chartWidth, chartHeight)
	d.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	doc := buf.String()
	// Inline SVG needs no XML prolog; the svg element starts the chart.
	i := strings.Index(doc, "<svg")
	if i < 0 {
		return "", fmt.Errorf("no <svg> element in the plot's output")
	}
	doc = `<svg role="img" aria-label="` + html.EscapeString(s.title) + `"` + doc[i+len("<svg"):]
	// The SVG is gonum/plot's own markup, with its text already escaped
	// (vgsvg escapes every string it writes), so it is trusted as HTML.
	return template.HTML(doc), nil
}

// drawing is one chart laid out: the plot (axes, grid, lines, the events'
// dashed lines) and what is drawn above it.
type drawing struct {
	p      *plot.Plot
	legend []legendEntry
	marks  []marker
}

// legendEntry is a series in the legend: its name beside a sample of its
// line.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// newDrawing lays out one chart: the time axis from 0 to tmax, the y axis
// from 0 to the top of the series on its scale (see chartSpec.fit).
func newDrawing(s chartSpec, tmax float64, marks []marker) (*drawing, error) {
	p := plot.New()
	p.Title.Text = s.title
	p.Title.TextStyle.Font = font.From(sans, titleSize)
	p.X.Label.Text = "simulated time (s)"
	p.Y.Label.Text = s.ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, axisSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xE4}
	grid.Horizontal.Color = color.Gray{0xE4}
	p.Add(grid)
	if len(marks) > 0 {
		p.Add(markers{marks: marks})
	}
	d := &drawing{p: p, marks: marks}
	top, whole := 0.0, true
	for _, l := range s.series {
		if len(l.Points) == 0 {
			continue
		}
		line, err := plotter.NewLine(l.Points)
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", l.Name, err)
		}
		line.Color = l.Color
		line.Width = vg.Points(1.2)
		line.StepStyle = l.Step
		if l.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		if !l.Unlisted {
			d.legend = append(d.legend, legendEntry{l.Name, line})
		}
		if l.above {
			continue // named in the legend, off the scale
		}
		p.Add(line)
		for _, pt := range l.Points {
			top = max(top, pt.Y)
			whole = whole && pt.Y == math.Trunc(pt.Y)
		}
	}
	// One time axis for every chart of the page, from the start.
	p.X.Min, p.X.Max = 0, tmax
	p.X.Tick.Marker = ticks{n: 8}
	// A little room over the highest point, so it does not run along
	// the frame.
	p.Y.Min, p.Y.Max = 0, math.Max(top*1.05, 1)
	p.Y.Tick.Marker = ticks{n: 4, whole: whole}
	return d, nil
}

// draw draws the chart on dc: the bands above the data are measured
// first, then the plot is drawn below them, then the bands.
func (d *drawing) draw(dc draw.Canvas) {
	// The time axis's place does not depend on the height given to the
	// bands, so the events' numbers can be laid out before it is.
	area := d.p.DataCanvas(dc)
	trX, _ := d.p.Transforms(&area)
	var at []labelAt
	for _, m := range d.marks {
		// Numbered only within the time axis, as their lines are drawn.
		if x := trX(m.T); area.ContainsX(x) {
			at = append(at, labelAt{x, m.Label})
		}
	}
	labels, rows := layoutLabels(at, area.Min.X, area.Max.X, labelFace.Width)
	legend, legendRows := layoutLegend(d.legend, area.Min.X, dc.Max.X)

	lineH := legendFace.Extents().Height
	labelH := labelFace.Extents().Height
	band := bandGap + vg.Length(legendRows)*lineH
	if rows > 0 {
		band += bandGap + vg.Length(rows)*labelH
	}
	d.p.Title.Padding = band + bandGap
	d.p.Draw(dc)

	// The legend under the title, one row after another.
	titleH := d.p.Title.TextStyle.Rectangle(d.p.Title.Text).Size().Y
	top := dc.Max.Y - titleH - bandGap
	ext := legendFace.Extents()
	for _, e := range legend {
		bottom := top - vg.Length(e.row+1)*lineH
		thumb := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: e.x, Y: bottom + ext.Descent},
			Max: vg.Point{X: e.x + thumbW, Y: bottom + ext.Descent + ext.Ascent*0.7},
		}}
		e.thumb.Thumbnail(&thumb)
		dc.SetColor(color.Black)
		dc.FillString(legendFace, vg.Point{X: e.x + thumbW + legendFace.Width(" "), Y: bottom + ext.Descent}, e.name)
	}

	// The events' numbers just above the data, row 0 lowest.
	dataTop := d.p.DataCanvas(dc).Max.Y
	dc.SetColor(markerColor)
	for _, l := range labels {
		bottom := dataTop + 2 + vg.Length(l.row)*labelH
		dc.FillString(labelFace, vg.Point{X: l.x0, Y: bottom + labelFace.Extents().Descent}, l.text)
	}
}

// The faces the bands are written in, measured as the SVG's fonts are.
var (
	legendFace = font.DefaultCache.Lookup(font.From(sans, legendSize), legendSize)
	labelFace  = font.DefaultCache.Lookup(font.From(sans, labelSize), labelSize)
)

// placedEntry is a legend entry at its place: x, and which row.
type placedEntry struct {
	legendEntry
	x   vg.Length
	row int
}

// layoutLegend puts the entries in rows from left to right, starting a
// new row where the next entry would pass right.
func layoutLegend(entries []legendEntry, left, right vg.Length) ([]placedEntry, int) {
	if len(entries) == 0 {
		return nil, 0
	}
	out := make([]placedEntry, 0, len(entries))
	x, row := left, 0
	for _, e := range entries {
		w := thumbW + legendFace.Width(" "+e.name)
		if x > left && x+w > right {
			x, row = left, row+1
		}
		out = append(out, placedEntry{e, x, row})
		x += w + legendGap
	}
	return out, row + 1
}

// labelAt is an event's number and where its line is.
type labelAt struct {
	x    vg.Length
	text string
}

// eventLabel is the number of an event over its line, or, for events too
// close together to number one by one, the range of their numbers ("3–5")
// over their lines.
type eventLabel struct {
	text        string
	first, last int // the events it numbers, by place along the time axis
	x0, x1      vg.Length
	row         int
}

// layoutLabels places the events' numbers between lo and hi (the data
// area, clear of the y axis's labels), each centred over its line (moved
// in from an edge) in the lowest of labelRows rows where it clears the
// labels before it by labelGap. An event with no such place joins the
// label before it, which then reads as a range centred over the range's
// lines; if that range has no place either, it joins the label before it
// in turn. So every event is numbered and no two labels touch, whatever
// the events' spacing. It returns the labels, left to right, and the rows
// they take.
func layoutLabels(at []labelAt, lo, hi vg.Length, width func(string) vg.Length) ([]eventLabel, int) {
	sorted := slices.Clone(at)
	slices.SortStableFunc(sorted, func(a, b labelAt) int { return cmp.Compare(a.x, b.x) })
	var out []eventLabel
	for i := range sorted {
		l := eventLabel{first: i, last: i}
		for !placeLabel(&l, out, sorted, lo, hi, width) {
			l.first = out[len(out)-1].first
			out = out[:len(out)-1]
		}
		out = append(out, l)
	}
	rows := 0
	for _, l := range out {
		rows = max(rows, l.row+1)
	}
	return out, rows
}

// placeLabel sets l's text and place after the labels before it, and
// reports whether it found room; with none before it always does.
func placeLabel(l *eventLabel, before []eventLabel, at []labelAt, lo, hi vg.Length, width func(string) vg.Length) bool {
	l.text = at[l.first].text
	if l.last != l.first {
		l.text += "–" + at[l.last].text
	}
	w := width(l.text)
	mid := (at[l.first].x + at[l.last].x) / 2
	l.x0 = max(lo, min(mid-w/2, hi-w))
	l.x1 = l.x0 + w
	for l.row = range labelRows {
		free := true
		for _, b := range before {
			free = free && (b.row != l.row || b.x1+labelGap <= l.x0)
		}
		if free {
			return true
		}
	}
	return false
}

// marker is a timeline event on a chart.
type marker struct {
	T     float64
	Label string
}

// markers draws the events as dashed vertical lines over the whole data
// area; their numbers are drawn above it. It is not a plot.DataRanger:
// the events do not change the axes.
type markers struct{ marks []marker }

// Plot implements plot.Plotter.
func (m markers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: markerColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	for _, mk := range m.marks {
		x := trX(mk.T)
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
	}
}
