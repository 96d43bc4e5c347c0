package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// page is what a test reads from a rendered page: it is parsed as XML, so
// a tag left open or a stray < fails the test.
type page struct {
	svgs    []string // aria-label of each top-level <svg>
	hrefs   []string
	scripts int
	text    string
}

func parsePage(t *testing.T, doc []byte) page {
	t.Helper()
	var p page
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	depth := 0 // inside an svg
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line, _ := dec.InputPos()
			t.Fatalf("not well-formed at line %d: %v", line, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "svg":
				if depth == 0 {
					p.svgs = append(p.svgs, attr(tok, "aria-label"))
				}
				depth++
			case "script", "link", "img", "iframe", "object":
				p.scripts++
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "href" || a.Name.Local == "src" {
					p.hrefs = append(p.hrefs, a.Value)
				}
			}
		case xml.EndElement:
			if tok.Name.Local == "svg" {
				depth--
			}
		case xml.CharData:
			if depth == 0 {
				text.Write(tok)
			}
		}
	}
	p.text = text.String()
	return p
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestHTML(t *testing.T) {
	r := herdReport()
	var buf bytes.Buffer
	if err := HTML(&buf, one(r)); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	want := []string{
		"Relay: AIMD limit per partition", "Leader mailbox depth", "Outbox depth", "Outbox oldest message age",
		"Workers online and at the target version", "Throughput", "Leader mailbox rejections", "Relay backpressure",
	}
	if strings.Join(p.svgs, "|") != strings.Join(want, "|") {
		t.Errorf("charts = %q, want one <svg> each for %q", p.svgs, want)
	}
	// Self-contained: nothing to fetch, nothing to run.
	if p.scripts != 0 || len(p.hrefs) != 0 {
		t.Errorf("page loads or runs something: %d elements, hrefs %v", p.scripts, p.hrefs)
	}
	doc := buf.String()
	if strings.Contains(doc, "<script>") || !strings.Contains(doc, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more") {
		t.Error("the warning's text is not escaped")
	}
	for _, s := range []string{
		"thundering-herd", "failed", "1 of 5 expectations failed",
		"leader mailbox max depth / capacity", "500 / 500 (reject)",
		"relay never stalls", "relay.limit.min >= 5", "relay.limit.min = 4",
		"heal: partitioned workers reconnect at once", // the timeline
		`"max_depth": 500`,                            // the full result
	} {
		if !strings.Contains(p.text, s) {
			t.Errorf("page text lacks %q", s)
		}
	}
}

func TestHTMLWithoutSamples(t *testing.T) {
	for _, r := range []*result.Report{brokenReport(), small()} {
		var buf bytes.Buffer
		if err := HTML(&buf, one(r)); err != nil {
			t.Fatal(err)
		}
		p := parsePage(t, buf.Bytes())
		if len(p.svgs) != 0 || !strings.Contains(p.text, "nothing to chart") {
			t.Errorf("%s: %d charts without samples", r.Scenario, len(p.svgs))
		}
	}
	var buf bytes.Buffer
	if err := HTML(&buf, one(brokenReport())); err != nil {
		t.Fatal(err)
	}
	if p := parsePage(t, buf.Bytes()); !strings.Contains(p.text, "The run did not complete: restart leader") {
		t.Error("the run's error is not shown")
	}
}

func TestIndex(t *testing.T) {
	reps, cmp := goldenSet(t)
	var buf bytes.Buffer
	if err := Index(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	if len(p.hrefs) != len(reps) || p.hrefs[0] != "thundering-herd.html" || p.hrefs[4] != "mailbox-policies--leader.mailbox.policy=block.html" {
		t.Errorf("links = %v", p.hrefs)
	}
	for _, s := range []string{"3 of 7 runs passed, 4 failed; 1 run stopped before its end, not judged; 2 comparisons across a sweep's variants held.", "Comparisons across the variants", "drop-oldest serves as much", "Sweep: mailbox-policies", "8,001", "4,110", "4,338", "2 baseline regressions"} {
		if !strings.Contains(p.text, s) {
			t.Errorf("index lacks %q", s)
		}
	}
}

// TestChartsShowTheMechanisms: the data drawn is what a person must see:
// four saw-toothing limits, the herd reaching the leader's capacity, the
// partition's dip in online workers, and the events as markers.
func TestChartsShowTheMechanisms(t *testing.T) {
	specs, tmax, marks := chartSpecs(herdReport())
	if tmax != 300 || len(marks) != 3 || marks[1].T != 120 || marks[1].Label != "2" {
		t.Errorf("tmax %v, markers %+v", tmax, marks)
	}
	byTitle := map[string]chartSpec{}
	for _, s := range specs {
		byTitle[s.title] = s
	}
	aimd := byTitle["Relay: AIMD limit per partition"]
	if len(aimd.series) != 4 {
		t.Fatalf("%d partitions drawn, want 4", len(aimd.series))
	}
	for _, s := range aimd.series {
		if falls := drops(s.Points); falls < 4 {
			t.Errorf("%s falls %d times: no sawtooth", s.Name, falls)
		}
	}
	mb := byTitle["Leader mailbox depth"]
	if len(mb.series) < 2 || mb.series[1].Name != "capacity" || peak(mb.series[0].Points) != peak(mb.series[1].Points) {
		t.Errorf("the herd does not reach the drawn capacity: %v", mb.series)
	}
	online := byTitle["Workers online and at the target version"].series[0]
	if v := at(online.Points, 90); v != 600 {
		t.Errorf("online during the partition = %v, want 600", v)
	}
	rej := byTitle["Leader mailbox rejections"].series[0]
	if at(rej.Points, 100) != 0 || peak(rej.Points) < 100 {
		t.Errorf("rejections: none before the heal and a spike after: peak %v", peak(rej.Points))
	}
}

func drops(pts plotter.XYs) int {
	n := 0
	for i := 1; i < len(pts); i++ {
		if pts[i].Y < pts[i-1].Y {
			n++
		}
	}
	return n
}

func peak(pts plotter.XYs) float64 {
	m := 0.0
	for _, p := range pts {
		m = max(m, p.Y)
	}
	return m
}

func at(pts plotter.XYs, x float64) float64 {
	for _, p := range pts {
		if p.X == x {
			return p.Y
		}
	}
	return -1
}

func TestRate(t *testing.T) {
	ss := []result.Sample{
		{T: 0, Delivered: 0},
		{T: 2, Delivered: 10},  // 5/s
		{T: 2, Delivered: 12},  // no time passed: skipped
		{T: 3, Delivered: 20},  // 8/s
		{T: 4, Delivered: 6},   // reset (a leader restart): 6 new
		{T: 4.5, Delivered: 6}, // idle
	}
	got := rate(ss, func(s result.Sample) uint64 { return s.Delivered })
	want := plotter.XYs{{X: 2, Y: 5}, {X: 3, Y: 8}, {X: 4, Y: 6}, {X: 4.5, Y: 0}}
	if len(got) != len(want) {
		t.Fatalf("rate = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rate[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}
