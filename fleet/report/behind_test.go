package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestFellBehindNamesTheLag: where a report says a run fell behind — the
// baseline's "not compared", the Markdown summary, the HTML page, the key
// numbers — it names the lag that passed its threshold.
func TestFellBehindNamesTheLag(t *testing.T) {
	r := behindReport()
	r.Result.Run.LagP99, r.Result.Run.ServiceLagP99, r.Result.Run.LagThreshold = 0.2, 2.3, 1
	why := "service lag p99 2.3s > threshold 1s at speed 10"

	kept := behindReport()
	kept.Result.Run.KeptUp = true
	b, err := Capture(kept)
	if err != nil {
		t.Fatal(err)
	}
	notCompared := 0
	for _, d := range Compare(b, r).Diffs {
		if d.Outcome == NotCompared {
			notCompared++
			if d.Why != "not compared: run fell behind ("+why+")" {
				t.Errorf("%s: %q, want it to name the lag", d.Metric, d.Why)
			}
		}
	}
	if notCompared == 0 {
		t.Error("no timing left uncompared")
	}

	var md, page bytes.Buffer
	if err := Markdown(&md, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, one(r)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "could not keep up ("+mdText(why)+"): timing expectations were not judged") {
		t.Errorf("summary does not name the lag:\n%s", md.String())
	}
	if !strings.Contains(page.String(), "could not keep up ("+html.EscapeString(why)+"): timing expectations were not judged") {
		t.Error("HTML page does not name the lag")
	}
	if !strings.Contains(md.String(), "no: "+mdText(why)+"; timing expectations are not judged") {
		t.Error("key numbers do not name the lag")
	}
}
