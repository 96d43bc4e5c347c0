package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// chart is one chart of the HTML report: an inline SVG drawn with
// gonum/plot, and a caption that says what to look for.
type chart struct {
	Title   string
	Caption string
	SVG     template.HTML
}

// The size of every chart: wide and low, so that charts stacked on a page
// share one time axis a reader can scan down.
const (
	chartWidth  = 10 * vg.Inch
	chartHeight = 3 * vg.Inch
)

// sans is the charts' font. gonum/plot measures text with the Liberation
// fonts it embeds in the binary; Liberation Sans has Arial's metrics, so
// the page's font-family fallback (Arial, Helvetica) keeps labels in place
// on machines without Liberation.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette is for series within one chart: distinct hues that stay distinct
// for the common forms of colour blindness (Okabe–Ito).
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xFF}, // green
	color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, // purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky
	color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermilion
	color.RGBA{0xF0, 0xE4, 0x42, 0xFF}, // yellow
	color.RGBA{0x00, 0x00, 0x00, 0xFF}, // black
}

var (
	limitColor  = color.RGBA{0xC0, 0x00, 0x00, 0xFF} // a capacity or total: a bound, in red
	markerColor = color.RGBA{0x80, 0x80, 0x80, 0xFF}
)

// maxLegend is the most series a chart's legend lists.
const maxLegend = 8

// series is one line of a chart.
type series struct {
	Name   string
	Points plotter.XYs
	Color  color.Color
	Dashed bool
	Step   plotter.StepKind
	// Unlisted leaves the series out of the legend (a sixteenth partition
	// would only hide the data behind a tall legend).
	Unlisted bool
}

// charts draws r's samples over simulated time. The timeline's events are
// dashed vertical markers numbered as in the page's timeline table. It
// returns no charts when there are fewer than two samples.
func charts(r *result.Report) ([]chart, error) {
	specs, tmax, marks := chartSpecs(r)
	out := make([]chart, 0, len(specs))
	for _, s := range specs {
		svg, err := render(s.title, s.ylabel, tmax, s.series, marks)
		if err != nil {
			return nil, fmt.Errorf("report: chart %q: %w", s.title, err)
		}
		out = append(out, chart{Title: s.title, Caption: s.caption, SVG: svg})
	}
	return out, nil
}

// chartSpec is a chart before it is drawn.
type chartSpec struct {
	title, caption, ylabel string
	series                 []series
}

// chartSpecs lays out r's charts: what each shows, the time axis's end and
// the event markers.
func chartSpecs(r *result.Report) (specs []chartSpec, tmax float64, marks []marker) {
	ss := r.Samples
	if len(ss) < 2 {
		return nil, 0, nil
	}
	tmax = float64(ss[len(ss)-1].T)
	n := 0
	for _, rec := range r.Records {
		if rec.Kind == "event" {
			n++
			marks = append(marks, marker{T: float64(rec.T), Label: strconv.Itoa(n)})
		}
	}

	// The AIMD sawtooth: one step line per partition.
	parts := 0
	for _, s := range ss {
		parts = max(parts, len(s.Limits))
	}
	if parts > 0 {
		var lines []series
		for p := range parts {
			var pts plotter.XYs
			for _, s := range ss {
				if p < len(s.Limits) {
					pts = append(pts, plotter.XY{X: float64(s.T), Y: float64(s.Limits[p])})
				}
			}
			lines = append(lines, series{Name: fmt.Sprintf("partition %d", p), Points: pts, Color: palette[p%len(palette)], Step: plotter.PostStep, Unlisted: parts > maxLegend})
		}
		caption := "Each partition's relay may run this many deliveries at once: +1 for every success, halved on a \"full\" answer at most once per window (the \"full\" answers to deliveries in flight together count once). A sawtooth means the relay is finding the workers' capacity and backing off."
		if parts > maxLegend {
			caption += fmt.Sprintf(" %d partitions, one line each.", parts)
		}
		specs = append(specs, chartSpec{"AIMD limit per partition", caption, "concurrent deliveries", lines})
	}

	depth := series{Name: "depth", Points: points(ss, func(s result.Sample) float64 { return float64(s.LeaderDepth) }), Color: palette[0]}
	capLine := series{Name: "capacity", Points: points(ss, func(s result.Sample) float64 { return float64(s.LeaderCapacity) }), Color: limitColor, Dashed: true, Step: plotter.PostStep}
	hb := series{Name: "heartbeats queued", Points: points(ss, func(s result.Sample) float64 { return float64(s.HeartbeatsQueued) }), Color: palette[2]}
	mailbox := []series{depth}
	if anyPositive(capLine.Points) {
		mailbox = append(mailbox, capLine)
	}
	if anyPositive(hb.Points) {
		mailbox = append(mailbox, hb)
	}
	specs = append(specs, chartSpec{"Leader mailbox depth", "Requests waiting at the leader. A herd of reconnecting workers fills it to its capacity; past that the leader answers \"full, retry after\" instead of queueing.", "messages", mailbox})

	specs = append(specs,
		chartSpec{"Outbox depth", "Commands stored in the leader's durable outbox, not yet delivered: rises with each deploy wave, falls as the relay delivers.", "messages", []series{
			{Name: "depth", Points: points(ss, func(s result.Sample) float64 { return float64(s.OutboxDepth) }), Color: palette[0]},
			{Name: "deliveries in flight", Points: points(ss, func(s result.Sample) float64 { return float64(s.InFlight) }), Color: palette[1]},
		}},
		chartSpec{"Outbox oldest message age", "How long the oldest undelivered command has waited.", "seconds", []series{
			{Name: "oldest age", Points: points(ss, func(s result.Sample) float64 { return float64(s.OutboxOldest) }), Color: palette[5]},
		}},
	)

	workers := []series{
		{Name: "online", Points: points(ss, func(s result.Sample) float64 { return float64(s.Online) }), Color: palette[0]},
		{Name: "at target version", Points: points(ss, func(s result.Sample) float64 { return float64(s.AtTarget) }), Color: palette[2]},
		{Name: "busy", Points: points(ss, func(s result.Sample) float64 { return float64(s.Busy) }), Color: palette[1]},
	}
	if c := r.Result.Fleet.Count; c > 0 {
		workers = append(workers, series{Name: "fleet", Points: plotter.XYs{{X: 0, Y: float64(c)}, {X: tmax, Y: float64(c)}}, Color: limitColor, Dashed: true})
	}
	specs = append(specs, chartSpec{"Workers online and at the target version", "Workers connected, and workers running the latest deployed version: a partition cuts the first, a deploy raises the second in waves.", "workers", workers})

	specs = append(specs, chartSpec{"Throughput", "Per second of simulated time, from the counters' differences between samples.", "per second", []series{
		{Name: "delivered by the relay", Points: rate(ss, func(s result.Sample) uint64 { return s.Delivered }), Color: palette[0], Step: plotter.PreStep},
		{Name: "accepted by the leader mailbox", Points: rate(ss, func(s result.Sample) uint64 { return s.LeaderAccepted }), Color: palette[2], Step: plotter.PreStep},
	}})

	// Two charts, not one: a herd's rejections run to hundreds a second
	// and would flatten the relay's few "full" answers to nothing.
	shed := []series{
		{Name: "rejected", Points: rate(ss, func(s result.Sample) uint64 { return s.LeaderRejected }), Color: palette[5], Step: plotter.PreStep},
	}
	if dropped := rate(ss, func(s result.Sample) uint64 { return s.LeaderDropped }); anyPositive(dropped) {
		shed = append(shed, series{Name: "dropped", Points: dropped, Color: palette[3], Step: plotter.PreStep})
	}
	specs = append(specs,
		chartSpec{"Leader mailbox rejections", "Per second: requests the leader's full mailbox answered \"full, retry after\" (or dropped, by its policy). A herd shows as a spike that dies away as the workers back off with jitter.", "per second", shed},
		chartSpec{"Relay backpressure", "Per second: \"full\" answers the relay got from workers (the first of each window halves a partition's limit), and the retries they caused.", "per second", []series{
			{Name: "backpressure (\"full\" answers)", Points: rate(ss, func(s result.Sample) uint64 { return s.Backpressure }), Color: palette[0], Step: plotter.PreStep},
			{Name: "retries", Points: rate(ss, func(s result.Sample) uint64 { return s.Retries }), Color: palette[1], Step: plotter.PreStep},
		}},
	)

	return specs, tmax, marks
}

// points is one gauge of the samples.
func points(ss []result.Sample, get func(result.Sample) float64) plotter.XYs {
	pts := make(plotter.XYs, 0, len(ss))
	for _, s := range ss {
		y := get(s)
		if math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: float64(s.T), Y: y})
	}
	return pts
}

// rate is a cumulative counter's rate per simulated second between
// consecutive samples, plotted at the later one. A counter that goes down
// was reset (a restarted leader), so the new value is all new.
func rate(ss []result.Sample, get func(result.Sample) uint64) plotter.XYs {
	pts := make(plotter.XYs, 0, len(ss))
	for i := 1; i < len(ss); i++ {
		dt := float64(ss[i].T - ss[i-1].T)
		if dt <= 0 {
			continue
		}
		cur, prev := get(ss[i]), get(ss[i-1])
		d := cur
		if cur >= prev {
			d = cur - prev
		}
		pts = append(pts, plotter.XY{X: float64(ss[i].T), Y: float64(d) / dt})
	}
	return pts
}

func anyPositive(pts plotter.XYs) bool {
	for _, p := range pts {
		if p.Y > 0 {
			return true
		}
	}
	return false
}

// render draws one chart and returns its SVG element, ready to inline.
// gonum/plot panics on some inputs it considers programming errors; a
// report must not take the process down with it.
func render(title, ylabel string, tmax float64, lines []series, marks []marker) (svg template.HTML, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("drawing: %v", v)
		}
	}()
	p, err := newPlot(title, ylabel, tmax, lines, marks)
	if err != nil {
		return "", err
	}
	c := vgsvg.New(chartWidth, chartHeight)
	p.Draw(draw.New(c))
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
	doc = `<svg role="img" aria-label="` + html.EscapeString(title) + `"` + doc[i+len("<svg"):]
	// The SVG is gonum/plot's own markup, with its text already escaped
	// (vgsvg escapes every string it writes), so it is trusted as HTML.
	return template.HTML(doc), nil
}

// newPlot lays out one chart.
func newPlot(title, ylabel string, tmax float64, lines []series, marks []marker) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.X.Label.Text = "simulated time (s)"
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = 4
	p.Legend.ThumbnailWidth = 16

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xE4}
	grid.Horizontal.Color = color.Gray{0xE4}
	p.Add(grid)
	if len(marks) > 0 {
		p.Add(markers{marks: marks})
	}
	listed := 0
	for _, s := range lines {
		if len(s.Points) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.Points)
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", s.Name, err)
		}
		l.Color = s.Color
		l.Width = vg.Points(1.2)
		l.StepStyle = s.Step
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
		if !s.Unlisted {
			p.Legend.Add(s.Name, l)
			listed++
		}
	}
	// One time axis for every chart of the page, from the start.
	p.X.Min, p.X.Max = 0, tmax
	// Room above the data for the legend, which is drawn inside the plot:
	// about a line of the legend per 7% of the height.
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max*(1.15+0.07*float64(listed)), 1)
	return p, nil
}

// marker is a timeline event on a chart.
type marker struct {
	T     float64
	Label string
}

// markers draws the events as dashed vertical lines over the whole data
// area, each numbered at its top. It is not a plot.DataRanger: the events
// do not change the axes.
type markers struct{ marks []marker }

// Plot implements plot.Plotter.
func (m markers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: markerColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	label := text.Style{Color: markerColor, Font: font.From(sans, 8), XAlign: draw.XLeft, YAlign: draw.YTop, Handler: p.TextHandler}
	for _, mk := range m.marks {
		x := trX(mk.T)
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		c.FillText(label, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(1)}, mk.Label)
	}
}
