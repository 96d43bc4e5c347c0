package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestUnfinishedDeploy: a deploy that did not finish has no duration
// (result.Never). A baseline captured from such a run leaves the
// duration out; a run whose deploy did not finish, compared with a
// baseline in which it did, regresses; the report says "did not finish"
// and its JSON has null.
func TestUnfinishedDeploy(t *testing.T) {
	finished := herdReport()
	unfinished := herdReport()
	unfinished.Result.Deploys[0].Duration = result.Never
	unfinished.Result.Deploys[0].Delivered--

	b, err := Capture(unfinished)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Metrics {
		if m.Name == "deploys[0].duration" {
			t.Errorf("a baseline of an unfinished deploy keeps its duration: %+v", m)
		}
	}
	if _, err := json.Marshal(b); err != nil {
		t.Errorf("baseline: %v", err)
	}

	base, err := Capture(finished)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(base, unfinished)
	var dur *Difference
	for i, d := range c.Diffs {
		if d.Metric == "deploys[0].duration" {
			dur = &c.Diffs[i]
		}
	}
	if dur == nil || dur.Outcome != Regression || !dur.Absent || !strings.Contains(dur.Why, "did not finish") {
		t.Errorf("an unfinished deploy against a finished baseline: %+v; want a regression saying it did not finish", dur)
	}
	if len(c.New) != 0 {
		t.Errorf("new metrics %v, want none", c.New)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("comparison: %v", err)
	}

	// A run that fell behind does not judge its timings, an unfinished
	// deploy's among them; its comparison still writes as JSON.
	unfinished.Result.Run.KeptUp = false
	c = Compare(base, unfinished)
	for _, d := range c.Diffs {
		if d.Metric == "deploys[0].duration" && (d.Outcome != NotCompared || !d.Absent) {
			t.Errorf("behind: %+v, want not compared, no value", d)
		}
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("comparison of a run behind: %v", err)
	}

	if got := deployOutcome(unfinished.Result.Deploys[0]); !strings.Contains(got, "did not finish") {
		t.Errorf("report says %q, want it to say the deploy did not finish", got)
	}
	js, err := json.Marshal(unfinished.Result.Deploys[0])
	if err != nil || !strings.Contains(string(js), `"duration":null`) {
		t.Errorf("JSON %s (%v), want duration null", js, err)
	}
}
