package report

import (
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// The tests here read the charts as a browser draws them: the SVG's text
// and lines, in the plot's coordinates (points, y up), each text's box
// measured with the font the SVG names.

// svgText is a <text> of a chart.
type svgText struct {
	x, y float64 // the baseline's start
	size float64
	fill string
	text string
}

// svgPath is a <path> of a chart: its stroke and its points.
type svgPath struct {
	stroke string
	pts    [][2]float64
}

// rect is a box in the chart's coordinates.
type rect struct{ x0, y0, x1, y1 float64 }

func (a rect) overlaps(b rect) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

func (a rect) union(b rect) rect {
	return rect{min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1)}
}

// box is where t's glyphs fall: its advance, from the descent to the
// ascent.
func (t svgText) box() rect {
	face := font.DefaultCache.Lookup(font.From(sans, vg.Length(t.size)), vg.Length(t.size))
	e := face.Extents()
	return rect{t.x, t.y - e.Descent.Points(), t.x + face.Width(t.text).Points(), t.y + e.Ascent.Points()}
}

var (
	styleRE = regexp.MustCompile(`([a-z-]+):([^;]+)`)
	pathRE  = regexp.MustCompile(`[ML]([-0-9.e]+),([-0-9.e]+)`)
)

// parseSVG reads a chart's texts and paths.
func parseSVG(t *testing.T, svg string) (texts []svgText, paths []svgPath) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		style := map[string]string{}
		for _, m := range styleRE.FindAllStringSubmatch(attr(el, "style"), -1) {
			style[m[1]] = strings.ToUpper(strings.TrimSpace(m[2]))
		}
		switch el.Name.Local {
		case "text":
			var body string
			if err := dec.DecodeElement(&body, &el); err != nil {
				t.Fatal(err)
			}
			x, _ := strconv.ParseFloat(attr(el, "x"), 64)
			y, _ := strconv.ParseFloat(attr(el, "y"), 64)
			size, _ := strconv.ParseFloat(strings.TrimSuffix(style["font-size"], "PX"), 64)
			fill := style["fill"]
			if fill == "" {
				fill = "#000000"
			}
			// Each text is drawn flipped back upright: its y is negated.
			texts = append(texts, svgText{x: x, y: -y, size: size, fill: fill, text: body})
		case "path":
			p := svgPath{stroke: style["stroke"]}
			for _, m := range pathRE.FindAllStringSubmatch(attr(el, "d"), -1) {
				x, _ := strconv.ParseFloat(m[1], 64)
				y, _ := strconv.ParseFloat(m[2], 64)
				p.pts = append(p.pts, [2]float64{x, y})
			}
			paths = append(paths, p)
		}
	}
	return texts, paths
}

// hex is a colour as the SVG writes it.
func hex(c interface{ RGBA() (r, g, b, a uint32) }) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// crowded is herdReport with its events bunched as a real timeline can
// bunch them: at the very start (under the legend), a burst of events a
// fraction of a second apart, pairs closer than a number's width, and a
// run of them at the very end of the time axis.
func crowded() *result.Report {
	r := herdReport()
	r.Records = nil
	for _, t := range []float64{0, 0.5, 1, 1.2, 2, 3, 40, 41, 41.5, 42, 42.2, 42.4, 42.6, 100, 150, 152, 154, 156, 290, 295, 298, 299, 299.5, 300} {
		r.Records = append(r.Records, result.Record{T: result.Seconds(t), Kind: "event", Text: "event"})
	}
	return r
}

// TestChartLabelsClear: on every chart, the events' numbers overlap
// neither each other nor any other text (the legend, the title, the
// axes), stay on the chart, and number every event exactly once (alone,
// or in a range such as 3–5); the legend's entries do not overlap.
func TestChartLabelsClear(t *testing.T) {
	for name, r := range map[string]*result.Report{"herd": herdReport(), "crowded": crowded()} {
		events := 0
		for _, rec := range r.Records {
			if rec.Kind == "event" {
				events++
			}
		}
		cs, err := charts(r)
		if err != nil {
			t.Fatal(err)
		}
		specs, _, _ := chartSpecs(r)
		for i, c := range cs {
			texts, _ := parseSVG(t, string(c.SVG))
			listed := map[string]bool{}
			for _, s := range specs[i].series {
				listed[s.Name] = !s.Unlisted
			}
			var labels, others []svgText
			var legend []rect
			for _, tx := range texts {
				switch {
				case tx.fill == hex(markerColor):
					labels = append(labels, tx)
				case listed[tx.text]:
					// The legend's entry with its sample of the line
					// before the name.
					b := tx.box()
					b.x0 -= thumbW + 4
					legend = append(legend, b)
				default:
					others = append(others, tx)
				}
			}
			where := name + ": " + c.Title
			for a := range legend {
				for b := range a {
					if legend[a].overlaps(legend[b]) {
						t.Errorf("%s: legend entries %d and %d overlap", where, b, a)
					}
				}
			}
			seen := make([]int, events+1)
			for a, la := range labels {
				ba := la.box()
				if ba.x0 < 0 || ba.x1 > chartWidth.Points() || ba.y1 > chartHeight.Points() {
					t.Errorf("%s: label %q off the chart: %+v", where, la.text, ba)
				}
				for _, lb := range labels[:a] {
					if ba.overlaps(lb.box()) {
						t.Errorf("%s: labels %q and %q overlap", where, lb.text, la.text)
					}
				}
				for _, l := range legend {
					if ba.overlaps(l) {
						t.Errorf("%s: label %q is on the legend", where, la.text)
					}
				}
				for _, o := range others {
					if ba.overlaps(o.box()) {
						t.Errorf("%s: label %q is on %q", where, la.text, o.text)
					}
				}
				first, last, isRange := strings.Cut(la.text, "–")
				lo, err1 := strconv.Atoi(first)
				hi, err2 := strconv.Atoi(last)
				if !isRange {
					hi, err2 = lo, nil
				}
				if err1 != nil || err2 != nil || lo < 1 || hi > events || lo > hi {
					t.Errorf("%s: label %q is not an event's number or a range of them", where, la.text)
					continue
				}
				for n := lo; n <= hi; n++ {
					seen[n]++
				}
			}
			for n := 1; n <= events; n++ {
				if seen[n] != 1 {
					t.Errorf("%s: event %d numbered %d times, want once", where, n, seen[n])
				}
			}
		}
	}
}

// TestLayoutLabelsMerges: numbers closer than their width are staggered
// over the rows, then merged into ranges; numbers far apart stay alone in
// the lowest row.
func TestLayoutLabelsMerges(t *testing.T) {
	width := func(s string) vg.Length { return vg.Length(5 * len([]rune(s))) }
	var at []labelAt
	for i, x := range []vg.Length{0, 1, 2, 3, 100, 200} {
		at = append(at, labelAt{x, strconv.Itoa(i + 1)})
	}
	got, rows := layoutLabels(at, 0, 300, width)
	var texts []string
	for _, l := range got {
		texts = append(texts, fmt.Sprintf("%s@%d", l.text, l.row))
	}
	if want := "1@0 2–4@1 5@0 6@0"; strings.Join(texts, " ") != want || rows != 2 {
		t.Errorf("labels %s over %d rows, want %s over 2", strings.Join(texts, " "), rows, want)
	}
}

// TestTicks: every label of an axis carries the decimals its step needs
// and no more, and an axis of whole counts has whole ticks only.
func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		whole  bool
		want   string
	}{
		{0, 787.5, true, "0 200 400 600"},
		{0, 787.5, false, "0 200 400 600"},
		{0, 3.15, true, "0 1 2 3"},
		{0, 1, true, "0 1"},
		{0, 1.05, false, "0.00 0.25 0.50 0.75 1.00"},
		{0, 0.42, false, "0.0 0.1 0.2 0.3 0.4"},
		{0, 12_600, true, "0 2,500 5,000 7,500 10,000 12,500"},
		{0, 300, false, "0 50 100 150 200 250 300"},
	} {
		n := 4
		if c.hi == 300 {
			n = 8
		}
		var labels []string
		for _, tk := range (ticks{n: n, whole: c.whole}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if c.whole && tk.Value != math.Trunc(tk.Value) {
				t.Errorf("%v–%v whole: a tick at %v", c.lo, c.hi, tk.Value)
			}
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("%v–%v whole %v: labels %q, want %q", c.lo, c.hi, c.whole, got, c.want)
		}
	}
}

// TestChartTicksWhole: in the page, a chart of counts (the outbox's depth,
// 600 at most: gonum/plot's own ticks label it 0.00, 250.00, 500.00,
// 750.00) labels its axis with whole numbers.
func TestChartTicksWhole(t *testing.T) {
	r := herdReport()
	for i := range r.Samples {
		r.Samples[i].OutboxDepth = 600 * i / (len(r.Samples) - 1)
	}
	cs, err := charts(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Title != "Outbox depth" {
			continue
		}
		texts, _ := parseSVG(t, string(c.SVG))
		n := 0
		for _, tx := range texts {
			if tx.size != tickSize {
				continue
			}
			n++
			if strings.Contains(tx.text, ".") {
				t.Errorf("tick label %q on an axis of counts", tx.text)
			}
		}
		if n < 4 {
			t.Errorf("%d tick labels", n)
		}
		return
	}
	t.Fatal("no outbox chart")
}

// mailboxChart is the leader mailbox's chart of r, read from its SVG: the
// data area's height (the y axis's length), the depth line's height, the
// paths in the capacity's colour and the legend's words.
func mailboxChart(t *testing.T, r *result.Report) (area, depth float64, capacity []svgPath, legend string) {
	t.Helper()
	cs, err := charts(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Title != "Leader mailbox depth" {
			continue
		}
		texts, paths := parseSVG(t, string(c.SVG))
		for _, p := range paths {
			lo, hi := math.Inf(1), math.Inf(-1)
			left, right := math.Inf(1), math.Inf(-1)
			vertical := len(p.pts) == 2 && p.pts[0][0] == p.pts[1][0]
			for _, pt := range p.pts {
				lo, hi = min(lo, pt[1]), max(hi, pt[1])
				left, right = min(left, pt[0]), max(right, pt[0])
			}
			switch {
			case right-left <= thumbW+1 && !vertical:
				// a legend entry's sample of its line
			case p.stroke == "#000000" && vertical:
				area = max(area, hi-lo) // the y axis is the longest
			case p.stroke == hex(palette[0]):
				depth = max(depth, hi-lo)
			case p.stroke == hex(limitColor):
				capacity = append(capacity, p)
			}
		}
		for _, tx := range texts {
			if tx.size == legendSize {
				legend += tx.text + "|"
			}
		}
		return area, depth, capacity, legend
	}
	t.Fatal("no mailbox chart")
	return
}

// TestDepthScaledToData: a depth of 0 to 100 under a capacity of 1,000
// fills most of the chart's height, and the legend says where the
// capacity is; a depth that reaches its capacity is drawn under the
// capacity's line.
func TestDepthScaledToData(t *testing.T) {
	low := herdReport()
	for i := range low.Samples {
		s := &low.Samples[i]
		s.LeaderCapacity, s.LeaderDepth, s.HeartbeatsQueued = 1000, i%101, 0
	}
	area, depth, capacity, legend := mailboxChart(t, low)
	if area == 0 || depth < 0.8*area {
		t.Errorf("a depth of 0–100 under a capacity of 1,000 spans %.0f of the chart's %.0f points", depth, area)
	}
	if len(capacity) != 0 || !strings.Contains(legend, "capacity 1,000, above the chart") {
		t.Errorf("capacity off the scale: %d lines drawn, legend %q", len(capacity), legend)
	}

	area, depth, capacity, _ = mailboxChart(t, herdReport())
	if len(capacity) == 0 || depth < 0.8*area {
		t.Fatalf("the herd fills the mailbox: depth spans %.0f of %.0f points, %d capacity lines", depth, area, len(capacity))
	}
	top := math.Inf(-1)
	for _, p := range capacity {
		for _, pt := range p.pts {
			top = max(top, pt[1])
		}
	}
	if top < depth {
		t.Errorf("capacity drawn at %.0f, under the depth's peak", top)
	}
}

// TestRelayChartTitle: the relay's chart is titled by its limits'
// strategy, as the dashboard titles its relay pane.
func TestRelayChartTitle(t *testing.T) {
	static := herdReport()
	for i := range static.Samples {
		static.Samples[i].Limits = []int{50, 50, 50, 50}
	}
	static.Result.Relay.Limit = result.LimitRange{Initial: 50, Min: 50, Max: 50, Final: 200}
	idle := herdReport()
	for i := range idle.Samples {
		idle.Samples[i].Limits = []int{10, 10}
	}
	idle.Result.Relay.Limit = result.LimitRange{Initial: 10, Min: 10, Max: 10, Final: 20}
	idle.Result.Relay.Delivered = 0
	for _, c := range []struct {
		name string
		r    *result.Report
		want string
	}{
		{"aimd", herdReport(), "Relay: AIMD limit per partition"},
		{"static", static, "Relay: static limit 50 per partition"},
		{"nothing delivered", idle, "Relay: limit per partition"},
	} {
		cs, err := charts(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if cs[0].Title != c.want || !strings.Contains(string(cs[0].SVG), `aria-label="`+c.want+`"`) {
			t.Errorf("%s: relay chart %q, want %q", c.name, cs[0].Title, c.want)
		}
		if c.name != "aimd" && strings.Contains(cs[0].Caption, "sawtooth") {
			t.Errorf("%s: caption describes AIMD: %s", c.name, cs[0].Caption)
		}
	}
}

// TestJobRequestsChart: a run with pulling workers gets a chart of the
// job requests the leader received per second, whose peak is the herd's;
// a run without them gets none.
func TestJobRequestsChart(t *testing.T) {
	const title = "Job requests at the leader"
	find := func(r *result.Report) *chartSpec {
		specs, _, _ := chartSpecs(r)
		for i := range specs {
			if specs[i].title == title {
				return &specs[i]
			}
		}
		return nil
	}
	if c := find(herdReport()); c != nil {
		t.Errorf("a run whose leader received no job request has the chart %q", title)
	}
	pull := herdReport()
	var n uint64
	for i := range pull.Samples {
		s := &pull.Samples[i]
		if i == 5 {
			n += 900 // the herd: every worker asks at once
		}
		n += 10
		s.JobRequests, s.JobsDrained = n, n/2
	}
	c := find(pull)
	if c == nil {
		t.Fatalf("a pull run has no chart %q", title)
	}
	dt := float64(pull.Samples[5].T - pull.Samples[4].T)
	if got, want := top(c.series[0].Points), 910/dt; got != want {
		t.Errorf("peak of job requests received: %v a second, want %v", got, want)
	}
	if len(c.series) != 2 || !anyPositive(c.series[1].Points) {
		t.Errorf("drained answers not drawn: %d series", len(c.series))
	}
}
