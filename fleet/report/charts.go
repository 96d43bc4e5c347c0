package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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
	// Bound marks a bound the data is held against (a capacity, the
	// fleet's size), drawn on the chart's scale only where the data comes
	// near it (chartSpec.fit).
	Bound bool
	// above is set on a Bound left off the chart's scale: the legend
	// names it with its value, and its line is not drawn.
	above bool
}

// charts draws r's samples over simulated time. The timeline's events are
// dashed vertical markers numbered as in the page's timeline table. It
// returns no charts when there are fewer than two samples.
func charts(r *result.Report) ([]chart, error) {
	specs, tmax, marks := chartSpecs(r)
	out := make([]chart, 0, len(specs))
	for _, s := range specs {
		svg, err := render(s, tmax, marks)
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
	marks = eventMarks(r.Records)

	if relay, ok := relayLimitChart(r); ok {
		specs = append(specs, relay)
	}

	specs = append(specs, leaderMailboxChart(ss))

	specs = append(specs,
		chartSpec{"Outbox depth", "Commands stored in the leader's durable outbox, not yet delivered: rises with each deploy wave, falls as the relay delivers.", "messages", []series{
			{Name: "depth", Points: points(ss, func(s result.Sample) float64 { return float64(s.OutboxDepth) }), Color: palette[0]},
			{Name: "deliveries in flight", Points: points(ss, func(s result.Sample) float64 { return float64(s.InFlight) }), Color: palette[1]},
		}},
		chartSpec{"Outbox oldest message age", "How long the oldest undelivered command has waited.", "seconds", []series{
			{Name: "oldest age", Points: points(ss, func(s result.Sample) float64 { return float64(s.OutboxOldest) }), Color: palette[5]},
		}},
	)

	specs = append(specs, workersChart(r, tmax))

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

	if polls, ok := jobRequestsChart(r); ok {
		specs = append(specs, polls)
	}

	for i := range specs {
		specs[i].fit()
	}
	return specs, tmax, marks
}

// eventMarks numbers the run's timeline events, for the charts' markers.
func eventMarks(recs []result.Record) []marker {
	var marks []marker
	n := 0
	for _, rec := range recs {
		if rec.Kind == "event" {
			n++
			marks = append(marks, marker{T: float64(rec.T), Label: strconv.Itoa(n)})
		}
	}
	return marks
}

// relayLimitChart is the AIMD sawtooth: one step line per partition
// (false when the samples hold no relay limit).
func relayLimitChart(r *result.Report) (chartSpec, bool) {
	ss := r.Samples
	parts := 0
	for _, s := range ss {
		parts = max(parts, len(s.Limits))
	}
	if parts == 0 {
		return chartSpec{}, false
	}
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
	title, caption := relayChart(r)
	if parts > maxLegend {
		caption += fmt.Sprintf(" %d partitions, one line each.", parts)
	}
	return chartSpec{title, caption, "concurrent deliveries", lines}, true
}

// leaderMailboxChart is the leader mailbox's depth, with its capacity and
// the heartbeats queued when there are any.
func leaderMailboxChart(ss []result.Sample) chartSpec {
	depth := series{Name: "depth", Points: points(ss, func(s result.Sample) float64 { return float64(s.LeaderDepth) }), Color: palette[0]}
	capLine := series{Name: "capacity", Points: points(ss, func(s result.Sample) float64 { return float64(s.LeaderCapacity) }), Color: limitColor, Dashed: true, Step: plotter.PostStep, Bound: true}
	hb := series{Name: "heartbeats queued", Points: points(ss, func(s result.Sample) float64 { return float64(s.HeartbeatsQueued) }), Color: palette[2]}
	mailbox := []series{depth}
	if anyPositive(capLine.Points) {
		mailbox = append(mailbox, capLine)
	}
	if anyPositive(hb.Points) {
		mailbox = append(mailbox, hb)
	}
	return chartSpec{"Leader mailbox depth", "Requests waiting at the leader. A herd of reconnecting workers fills it to its capacity; past that the leader answers \"full, retry after\" instead of queueing.", "messages", mailbox}
}

// jobRequestsChart is the pulling workers' poll traffic at the leader:
// job requests received per second, and those answered "drained" (false
// when the leader received none: a run without pulling workers, or a
// report written before the samples counted them).
func jobRequestsChart(r *result.Report) (chartSpec, bool) {
	ss := r.Samples
	received := rate(ss, func(s result.Sample) uint64 { return s.JobRequests })
	if !anyPositive(received) {
		return chartSpec{}, false
	}
	return chartSpec{"Job requests at the leader", "Per second: job requests the pulling workers' polls brought to the leader, and those answered \"drained\" (nothing to do). After a leader restart the workers whose polls went unanswered all ask again at once unless their poll interval has jitter: a herd shows as a spike.", "per second", []series{
		{Name: "received", Points: received, Color: palette[0], Step: plotter.PreStep},
		{Name: "answered drained", Points: rate(ss, func(s result.Sample) uint64 { return s.JobsDrained }), Color: palette[1], Step: plotter.PreStep},
	}}, true
}

// workersChart is the workers online, at the target version and busy,
// under the fleet's size.
func workersChart(r *result.Report, tmax float64) chartSpec {
	ss := r.Samples
	workers := []series{
		{Name: "online", Points: points(ss, func(s result.Sample) float64 { return float64(s.Online) }), Color: palette[0]},
		{Name: "at target version", Points: points(ss, func(s result.Sample) float64 { return float64(s.AtTarget) }), Color: palette[2]},
		{Name: "busy", Points: points(ss, func(s result.Sample) float64 { return float64(s.Busy) }), Color: palette[1]},
	}
	if c := r.Result.Fleet.Count; c > 0 {
		workers = append(workers, series{Name: "fleet", Points: plotter.XYs{{X: 0, Y: float64(c)}, {X: tmax, Y: float64(c)}}, Color: limitColor, Dashed: true, Bound: true})
	}
	return chartSpec{"Workers online and at the target version", "Workers connected, and workers running the latest deployed version: a partition cuts the first, a deploy raises the second in waves.", "workers", workers}
}

// boundShare is how near the data must come to a bound for the bound to
// be drawn on the chart's scale: a depth of 100 drawn under a capacity of
// 1,000 is a flat line at the bottom, which hides what the depth did.
const boundShare = 1.0 / 3

// fit scales the chart to its data: a Bound the data stays under a third
// of is left off the scale, named in the legend with its value ("capacity
// 1,000, above the chart") and in the caption.
func (s *chartSpec) fit() {
	data, bound := 0.0, 0.0
	for _, l := range s.series {
		if l.Bound {
			bound = max(bound, top(l.Points))
		} else {
			data = max(data, top(l.Points))
		}
	}
	if bound <= 0 || data >= bound*boundShare {
		return
	}
	for i := range s.series {
		l := &s.series[i]
		if !l.Bound || len(l.Points) == 0 {
			continue
		}
		v := thousands(int64(math.Round(top(l.Points))))
		s.caption += fmt.Sprintf(" Drawn to the scale of the data, which stays under a third of the %s (%s): the %s is above the chart.", l.Name, v, l.Name)
		l.Name += " " + v + ", above the chart"
		l.above = true
	}
}

// top is the highest point of pts, 0 when none is positive.
func top(pts plotter.XYs) float64 {
	m := 0.0
	for _, p := range pts {
		m = max(m, p.Y)
	}
	return m
}

// relayChart titles the relay's chart by what its limits were: "Relay:
// AIMD limit per partition", or "Relay: static limit 8 per partition", as
// the dashboard names its relay pane, with a caption that says how to read
// it. A report does not record the strategy, so it is read from the
// limits: only an AIMD limit moves (a static one never does), and an AIMD
// limit below its max rises with every delivery, so limits that stayed at
// one value while the relay delivered acted as a static limit. A relay
// that delivered nothing shows neither.
func relayChart(r *result.Report) (title, caption string) {
	const base = "Each partition's relay may run this many deliveries at once."
	lim := r.Result.Relay.Limit
	moved := lim.Min != lim.Max || lim.Decreases > 0
	held := lim.Initial // or, in a report without it, the first limit sampled
	for _, s := range r.Samples {
		for _, l := range s.Limits {
			if held <= 0 {
				held = l
			}
			moved = moved || l != held
		}
	}
	switch {
	case moved:
		return "Relay: AIMD limit per partition", base + " +1 for every success, halved on a \"full\" answer at most once per window (the \"full\" answers to deliveries in flight together count once). A sawtooth means the relay is finding the workers' capacity and backing off."
	case r.Result.Relay.Delivered > 0:
		return fmt.Sprintf("Relay: static limit %d per partition", held), base + fmt.Sprintf(" The limit stayed at %d through every delivery, as a static limit does (an AIMD limit below its max rises with each success): \"full\" answers cause retries, not a slower pace.", held)
	}
	return "Relay: limit per partition", base + " The relay delivered nothing in this run, so its limits did not move."
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
