package judge_test

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

const judgeFile = `
name: judge
duration: 1m
fleet: {count: 10}
expect:
  - lost == 0
  - name: depth bounded
    check: leader.mailbox.max_depth <= leader.mailbox.capacity
  - workers.at_version["2.1.0"] == fleet.count
  - leader.mailbox.wait.p99 < 2
  - all(deploys, .duration < 60)
  - deploys[0].delivered == 10
  - heartbeats.coalesced_ratio >= 0.8
`

func TestJudge(t *testing.T) {
	s := parseText(t, judgeFile)
	timing := []bool{false, false, false, true, true, false, false}
	for i, e := range s.Expect {
		if e.Timing != timing[i] {
			t.Errorf("%q: Timing = %v, want %v", e.Check, e.Timing, timing[i])
		}
	}

	good := result.Result{
		Run:       result.RunInfo{Speed: 50, KeptUp: true},
		Fleet:     result.FleetResult{Count: 10},
		Workers:   result.WorkersResult{AtVersion: map[string]int{"2.1.0": 10}},
		Leader:    result.LeaderResult{Mailbox: result.MailboxResult{Capacity: 1000, MaxDepth: 999, Wait: result.Quantiles{P99: 1.5}}},
		Heartbeat: result.HeartbeatResult{CoalescedRatio: 0.9},
		Deploys:   []result.DeployResult{{Delivered: 10, Duration: 30}},
	}
	for _, v := range judge.Expectations(s, good) {
		if v.Status != result.Pass {
			t.Errorf("good run: %+v", v)
		}
	}

	bad := good
	bad.Lost = 3
	bad.Workers.AtVersion = map[string]int{"2.1.0": 9, "1.0.0": 1}
	bad.Leader.Mailbox.MaxDepth = 1412
	bad.Leader.Mailbox.Wait.P99 = 3.25
	bad.Heartbeat.CoalescedRatio = 0.5
	bad.Deploys = nil
	want := []result.Verdict{
		{Name: "lost == 0", Check: "lost == 0", Status: result.Fail, Detail: "lost = 3"},
		{Name: "depth bounded", Check: "leader.mailbox.max_depth <= leader.mailbox.capacity", Status: result.Fail,
			Detail: "leader.mailbox.max_depth = 1412, leader.mailbox.capacity = 1000"},
		{Name: `workers.at_version["2.1.0"] == fleet.count`, Check: `workers.at_version["2.1.0"] == fleet.count`, Status: result.Fail,
			Detail: `workers.at_version["2.1.0"] = 9, fleet.count = 10`},
		{Name: "leader.mailbox.wait.p99 < 2", Check: "leader.mailbox.wait.p99 < 2", Status: result.Fail, Detail: "leader.mailbox.wait.p99 = 3.25s"},
		{Name: "all(deploys, .duration < 60)", Check: "all(deploys, .duration < 60)", Status: result.Pass},
		{Name: "deploys[0].delivered == 10", Check: "deploys[0].delivered == 10", Status: result.Fail},
		{Name: "heartbeats.coalesced_ratio >= 0.8", Check: "heartbeats.coalesced_ratio >= 0.8", Status: result.Fail,
			Detail: "heartbeats.coalesced_ratio = 0.5"},
	}
	got := judge.Expectations(s, bad)
	if len(got) != len(want) {
		t.Fatalf("got %d verdicts, want %d", len(got), len(want))
	}
	for i := range want {
		if i == 5 {
			// An evaluation error (no deploy 0) fails with expr's message.
			if got[i].Status != result.Fail || !strings.Contains(got[i].Detail, "out of range") {
				t.Errorf("verdict %d = %+v, want a Fail saying index out of range", i, got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("verdict %d\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	behind := bad
	behind.Run.KeptUp = false
	for i, v := range judge.Expectations(s, behind) {
		switch {
		case timing[i] && (v.Status != result.NotJudged || v.Detail != "machine could not keep up at speed 50"):
			t.Errorf("timing check %q on a run behind: %+v", v.Check, v)
		case !timing[i] && v.Status == result.NotJudged:
			t.Errorf("count check %q not judged on a run behind", v.Check)
		}
	}
}

// TestBehindNamesTheLag: a run that fell behind says which lag passed the
// threshold and by how much, and its timing checks carry that as the reason
// they were not judged.
func TestBehindNamesTheLag(t *testing.T) {
	ok := result.RunInfo{Speed: 50, LagP99: 0.2, ServiceLagP99: 0.5, DeliveryLagP99: 1, LagThreshold: 1}
	for _, tc := range []struct {
		name string
		set  func(*result.RunInfo)
		want string
	}{
		{"kept up (a p99 equal to the threshold passes)", func(*result.RunInfo) {}, ""},
		{"timer", func(r *result.RunInfo) { r.LagP99 = 1.5 }, "timer lag p99 1.5s > threshold 1s at speed 50"},
		{"service", func(r *result.RunInfo) { r.ServiceLagP99 = 2.3 }, "service lag p99 2.3s > threshold 1s at speed 50"},
		{"delivery", func(r *result.RunInfo) { r.DeliveryLagP99 = 1.0004 }, "delivery lag p99 1s > threshold 1s at speed 50"},
		{"two", func(r *result.RunInfo) { r.LagP99, r.ServiceLagP99 = 3, 120.25 },
			"timer lag p99 3s > threshold 1s, service lag p99 120.25s > threshold 1s at speed 50"},
		{"no threshold recorded", func(r *result.RunInfo) { r.LagP99, r.LagThreshold = 3, 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.set(&r)
			if got := r.Behind(); got != tc.want {
				t.Errorf("Behind() = %q, want %q", got, tc.want)
			}
		})
	}

	s := &scenario.Scenario{Expect: []scenario.Expect{{Check: "leader.mailbox.wait.p99 <= 1"}, {Check: "lost == 0"}}}
	res := result.Result{Run: ok}
	res.Run.ServiceLagP99, res.Run.KeptUp = 2.3, false
	got := judge.Expectations(s, res)
	if got[0].Status != result.NotJudged || got[0].Detail != "service lag p99 2.3s > threshold 1s at speed 50" {
		t.Errorf("timing check on a run whose service fell behind: %+v", got[0])
	}
	if got[1].Status != result.Pass {
		t.Errorf("count check on a run whose service fell behind: %+v, want judged (pass)", got[1])
	}
}

// A Scenario built in code has no compiled checks: Expectations compiles them, and
// a check that does not compile fails rather than passing.
func TestJudgeUncompiled(t *testing.T) {
	s := &scenario.Scenario{Expect: []scenario.Expect{{Check: "lost == 0"}, {Name: "typo", Check: "lsot == 0"}, {Check: "run.lag_max < 1"}}}
	got := judge.Expectations(s, result.Result{Lost: 0})
	if got[0].Status != result.Pass || got[0].Name != "lost == 0" {
		t.Errorf("verdict 0 = %+v", got[0])
	}
	if got[1].Status != result.Fail || !strings.Contains(got[1].Detail, `unknown name "lsot" (did you mean lost?)`) {
		t.Errorf("verdict 1 = %+v", got[1])
	}
	if got[2].Status != result.NotJudged {
		t.Errorf("verdict 2 = %+v, want not judged (KeptUp false)", got[2])
	}
}

// Timing values are plain numbers in every form a check can take.
func TestCheckForms(t *testing.T) {
	r := result.Result{Lost: 0, Deploys: []result.DeployResult{{Duration: 3, Delivered: 5, Targets: 5}, {Duration: 4, Delivered: 5, Targets: 5}},
		Leader: result.LeaderResult{Mailbox: result.MailboxResult{Wait: result.Quantiles{P99: 0.25}}}, Heartbeat: result.HeartbeatResult{Age: result.Quantiles{Max: 31}}}
	for _, c := range []struct {
		check  string
		timing bool
		want   bool
	}{
		{"sum(deploys, .duration) < 10", true, true},
		{"max(leader.mailbox.wait.p99, heartbeats.age.max) < 30", true, false},
		{"leader.mailbox.wait.p99 * 4 == 1", true, true},
		{"all(deploys, .delivered == .targets)", false, true},
		{"len(deploys) == 2 and lost == 0", false, true},
		{"deploys[1].duration - deploys[0].duration == 1", true, true},
	} {
		comp, err := expect.Compile(c.check)
		if err != nil {
			t.Errorf("%s: %v", c.check, err)
			continue
		}
		if comp.Timing != c.timing {
			t.Errorf("%s: timing %v, want %v", c.check, comp.Timing, c.timing)
		}
		s := &scenario.Scenario{Expect: []scenario.Expect{{Check: c.check}}}
		r.Run.KeptUp = true
		if got := judge.Expectations(s, r)[0]; (got.Status == result.Pass) != c.want {
			t.Errorf("%s: %+v, want pass = %v", c.check, got, c.want)
		}
	}
	if _, err := expect.Compile("now() != nil"); err == nil {
		t.Error("now() compiles: a verdict would depend on the wall clock")
	}
}

// A division by zero is not judged, naming the divisor and its value: in
// floating point fleet.count / 0 is +Inf, and the check would pass.
// Other divisions give what expr gives (a float64 for /).
func TestJudgeDivisionByZero(t *testing.T) {
	r := result.Result{Run: result.RunInfo{KeptUp: true}, Fleet: result.FleetResult{Count: 10},
		Leader: result.LeaderResult{Mailbox: result.MailboxResult{Wait: result.Quantiles{P99: 0.5}}}, Outbox: result.OutboxResult{Enqueued: 5}}
	lost2 := r
	lost2.Lost = 2
	for _, c := range []struct {
		check  string
		r      result.Result
		status result.Status
		detail string
	}{
		{"fleet.count / lost > 1", r, result.NotJudged, "not judged: division by zero (the divisor lost = 0)"},
		{"fleet.count / lost > 1", lost2, result.Pass, ""},
		{"fleet.count / lost > 6", lost2, result.Fail, "fleet.count = 10, lost = 2"},
		{"fleet.count % lost == 1", r, result.NotJudged, "not judged: division by zero (the divisor lost = 0)"},
		{"fleet.count % lost == 0", lost2, result.Pass, ""},
		{"leader.mailbox.wait.p99 / heartbeats.age.max < 1", r, result.NotJudged, "not judged: division by zero (the divisor heartbeats.age.max = 0)"},
		{"fleet.count / (lost / 2) > 1", r, result.NotJudged, "not judged: division by zero (the divisor lost / 2 = 0)"},
		{"lost == 0 || fleet.count / lost > 1", r, result.Pass, ""}, // never divides
		{"fleet.count / 4 == 2.5", r, result.Pass, ""},
		{"fleet.count % 4 == 2", r, result.Pass, ""},
		{"leader.mailbox.wait.p99 / 2 == 0.25", r, result.Pass, ""},
		{"outbox.enqueued / fleet.count == 0.5", r, result.Pass, ""},
		{"all(deploys, .delivered / .targets >= 1)", result.Result{Deploys: []result.DeployResult{{Delivered: 3}}}, result.NotJudged,
			"not judged: division by zero (the divisor .targets = 0)"},
	} {
		s := &scenario.Scenario{Expect: []scenario.Expect{{Check: c.check}}}
		got := judge.Expectations(s, c.r)[0]
		if got.Status != c.status || got.Detail != c.detail {
			t.Errorf("%s: %s %q, want %s %q", c.check, got.Status, got.Detail, c.status, c.detail)
		}
	}
	// A division the type checker refuses is still refused.
	if _, err := expect.Compile(`deploys[0].version / 2 > 1`); err == nil {
		t.Error("text / 2 compiles")
	}
}

// parseText parses a scenario file given as text.
func parseText(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}
