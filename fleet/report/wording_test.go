package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestDescriptionOnce: summary.md says a scenario's description once: in
// its sweep's section for a sweep's variants, under its first run for
// repeats of one scenario.
func TestDescriptionOnce(t *testing.T) {
	reps, cmp := goldenSet(t)
	again := herdReport()
	again.Started = again.Started.Add(1)
	reps = append(reps, again)
	var buf bytes.Buffer
	if err := Markdown(&buf, judged(reps, cmp)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, d := range []string{
		mdText(sweepReports()[0].Description),
		mdText(herdReport().Description),
		mdText(behindReport().Description),
	} {
		if n := strings.Count(md, d); n != 1 {
			t.Errorf("the description %q is said %d times, want once", d, n)
		}
	}
}

// TestWordingAgreesWithCounts: a count of one reads in the singular
// wherever a summary counts runs, expectations, partitions, workers,
// gateways or metrics.
func TestWordingAgreesWithCounts(t *testing.T) {
	r := small()
	r.Result.Fleet = result.FleetResult{Count: 1, Online: 1, Gateways: 1, GatewaySize: 1}
	r.Result.Relay.Partitions = 1
	r.Verdicts = []result.Verdict{{Name: "nothing lost", Check: "lost == 0", Status: result.Fail, Detail: "lost = 1"}}
	c := Comparison{Scenario: r.Scenario, Compared: 1}

	var md, idx bytes.Buffer
	if err := Markdown(&md, judged([]*result.Report{r}, []Comparison{c})); err != nil {
		t.Fatal(err)
	}
	if err := Index(&idx, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	page := parsePage(t, idx.Bytes())
	for _, want := range []string{
		"**0 of 1 run passed, 1 failed.**",
		"1 of 1 expectation failed",
		"relay limit at the end: sum of 1 partition |",
		"| fleet | 1 worker, 1 online at the end; behind 1 gateway of up to 1 |",
		"(1 metric compared)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if !strings.Contains(page.text, "0 of 1 run passed, 1 failed.") {
		t.Errorf("index.html lacks %q", "0 of 1 run passed, 1 failed.")
	}
	if got := gatewayText(1, 1); got != "1 gateway of up to 1 worker" {
		t.Errorf("gatewayText(1, 1) = %q", got)
	}
}

// TestLimitRangeReadsAsObserved: the relay limit's min and max are what
// the run saw, not its configured bounds, and the summaries say so.
func TestLimitRangeReadsAsObserved(t *testing.T) {
	r := herdReport()
	var term, md bytes.Buffer
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, judged([]*result.Report{r}, nil)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		term.String(): "relay limit per partition ... initial 4 · observed 4–15",
		md.String():   "| relay limit per partition | initial 4, observed 4–15 |",
	} {
		if !strings.Contains(name, want) {
			t.Errorf("lacks %q:\n%s", want, name)
		}
	}
	flat := result.LimitRange{Initial: 50, Min: 50, Max: 50}
	if got := limitRange(flat, ", "); got != "initial 50, observed 50 throughout" {
		t.Errorf("a limit that did not move: %q", got)
	}
}
