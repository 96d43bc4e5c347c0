package report

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// small is a run of ten workers that kept up.
func small() *scenario.Report {
	return &scenario.Report{
		Scenario: "s",
		Result: scenario.Result{
			Run:   scenario.RunInfo{Seed: 1, KeptUp: true},
			Fleet: scenario.FleetResult{Count: 10},
		},
	}
}

func TestCompareRules(t *testing.T) {
	var (
		exactLost = Metric{Name: "lost", Value: 0, Rule: exact(Lower)}
		exactDead = Metric{Name: "outbox.dead_letters", Value: 3, Rule: exact(None)}
		// The rules are written out: this tests Compare, not the defaults.
		tol       = func(d Direction) Rule { return Rule{Kind: Tolerance, Rel: 0.5, Abs: 10, Better: d} }
		tim       = func(d Direction) Rule { return Rule{Kind: Timing, Factor: 2, Abs: 0.25, Better: d} }
		tolBP     = Metric{Name: "relay.backpressure", Value: 100, Rule: tol(None)}
		tolDepth  = Metric{Name: "leader.mailbox.max_depth", Value: 100, Rule: tol(Lower)}
		tolSmall  = Metric{Name: "relay.backpressure", Value: 4, Rule: tol(None)}
		ratio     = Metric{Name: "heartbeats.coalesced_ratio", Value: 0.8, Rule: Rule{Kind: Tolerance, Rel: ratioRel, Abs: ratioAbs, Better: Higher}}
		waitP99   = Metric{Name: "leader.mailbox.wait.p99", Value: 1, Rule: tim(Lower)}
		waitNone  = Metric{Name: "leader.mailbox.wait.p99", Value: 1, Rule: tim(None)}
		targets   = Metric{Name: "deploys[0].targets", Value: 10, Rule: exact(None)}
		badRule   = Metric{Name: "lost", Value: 0, Rule: Rule{Kind: "roughly"}}
		atVersion = Metric{Name: `workers.at_version["2.1.0"]`, Value: 10, Rule: exact(None)}
		setLost   = func(n int64) func(*scenario.Report) { return func(r *scenario.Report) { r.Result.Lost = n } }
		setDead   = func(n int) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Outbox.DeadLetters = n }
		}
		setBP = func(n uint64) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Relay.Backpressure = n }
		}
		setDepth = func(n int) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Leader.Mailbox.MaxDepth = n }
		}
		setRatio = func(v float64) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Heartbeat.CoalescedRatio = v }
		}
		setWait = func(s scenario.Seconds) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Leader.Mailbox.Wait.P99 = s }
		}
		behind     = func(r *scenario.Report) { r.Result.Run.KeptUp = false; r.Result.Run.LagMax = 7.5 }
		setVersion = func(n int) func(*scenario.Report) {
			return func(r *scenario.Report) { r.Result.Workers.AtVersion = map[string]int{"2.1.0": n} }
		}
	)
	const ok Outcome = "ok"
	for _, tc := range []struct {
		name         string
		m            Metric
		run          func(*scenario.Report)
		baseBehind   bool
		want         Outcome
		why          string
		wantCompared int
	}{
		{"exact pass", exactLost, setLost(0), false, ok, "", 1},
		{"exact regression", exactLost, setLost(2), false, Regression, "rose from 0 to 2, must equal 0; lower is better", 1},
		{"exact better", Metric{Name: "lost", Value: 3, Rule: exact(Lower)}, setLost(0), false, Better, "fell from 3 to 0, must equal 3: lower is better", 1},
		{"exact no direction, lower", exactDead, setDead(1), false, Regression, "fell from 3 to 1, must equal 3", 1},
		{"exact no direction, higher", exactDead, setDead(4), false, Regression, "rose from 3 to 4", 1},
		{"exact map key", atVersion, setVersion(10), false, ok, "", 1},
		{"exact map key regression", atVersion, setVersion(9), false, Regression, "fell from 10 to 9", 1},

		{"tolerance pass, relative", tolBP, setBP(149), false, ok, "", 1},
		{"tolerance pass, at the bound", tolBP, setBP(50), false, ok, "", 1},
		{"tolerance regression up", tolBP, setBP(151), false, Regression, "rose from 100 to 151, allowed 50 to 150 (±50% or ±10 of 100)", 1},
		{"tolerance regression down, no direction", tolBP, setBP(49), false, Regression, "fell from 100 to 49", 1},
		{"tolerance pass, absolute wins for small values", tolSmall, setBP(14), false, ok, "", 1},
		{"tolerance regression, absolute", tolSmall, setBP(15), false, Regression, "allowed 0 to 14", 1},
		{"tolerance better", tolDepth, setDepth(10), false, Better, "fell from 100 to 10, allowed 50 to 150 (±50% or ±10 of 100): lower is better", 1},
		{"tolerance worse with direction", tolDepth, setDepth(200), false, Regression, "rose from 100 to 200, allowed 50 to 150 (±50% or ±10 of 100); lower is better", 1},
		{"ratio better", ratio, setRatio(0.99), false, Better, "higher is better", 1},
		{"ratio regression", ratio, setRatio(0.6), false, Regression, "fell from 0.8 to 0.6", 1},

		{"timing pass", waitP99, setWait(2.2), false, ok, "", 1},
		{"timing regression", waitP99, setWait(2.3), false, Regression, "rose from 1s to 2.3s, allowed 0.25s to 2.25s (2× ± 0.25s of 1s); lower is better", 1},
		{"timing better", waitP99, setWait(0.1), false, Better, "lower is better", 1},
		{"timing faster, no direction", waitNone, setWait(0.1), false, Regression, "fell from 1s to 0.1s", 1},
		{"timing not compared: run fell behind", waitP99, func(r *scenario.Report) { setWait(30)(r); behind(r) }, false, NotCompared, "not compared: run fell behind (lag max 7.5s)", 0},
		{"timing not compared: baseline fell behind", waitP99, setWait(30), true, NotCompared, "the baseline's run fell behind", 0},
		{"counts still compared when behind", exactLost, func(r *scenario.Report) { setLost(1)(r); behind(r) }, false, Regression, "rose from 0 to 1", 1},

		{"absent metric", targets, func(*scenario.Report) {}, false, Regression, "the run has no such metric", 0},
		{"invalid rule", badRule, setLost(0), false, Regression, `invalid rule: rule "roughly" unknown; valid: exact, tolerance, timing`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := small()
			tc.run(r)
			b := Baseline{Scenario: "s", Seed: 1, FleetCount: 10, KeptUp: !tc.baseBehind, Metrics: []Metric{tc.m}}
			c := Compare(b, r)
			if c.Skipped != "" {
				t.Fatalf("skipped: %s", c.Skipped)
			}
			if c.Compared != tc.wantCompared {
				t.Errorf("Compared = %d, want %d", c.Compared, tc.wantCompared)
			}
			if tc.want == ok {
				if len(c.Diffs) != 0 {
					t.Fatalf("diffs = %+v, want none", c.Diffs)
				}
				return
			}
			if len(c.Diffs) != 1 {
				t.Fatalf("diffs = %+v, want one", c.Diffs)
			}
			d := c.Diffs[0]
			if d.Outcome != tc.want || !strings.Contains(d.Why, tc.why) {
				t.Errorf("got %s %q, want %s containing %q", d.Outcome, d.Why, tc.want, tc.why)
			}
			if d.Metric != tc.m.Name || d.Baseline != tc.m.Value || d.Rule != tc.m.Rule {
				t.Errorf("difference %+v does not carry the metric, baseline value and rule", d)
			}
			if c.Regressed() != (tc.want == Regression) {
				t.Errorf("Regressed() = %v", c.Regressed())
			}
		})
	}
}

func TestCompareSkips(t *testing.T) {
	base := Baseline{Scenario: "s", Seed: 1, FleetCount: 10, KeptUp: true, Metrics: []Metric{{Name: "lost", Rule: exact(Lower)}}}
	for _, tc := range []struct {
		name string
		b    func(*Baseline)
		r    func(*scenario.Report)
		why  string
	}{
		{"fleet size", nil, func(r *scenario.Report) { r.Result.Fleet.Count = 1000; r.Result.Lost = 5 },
			"the baseline was captured with 10 workers and this run had 1000"},
		{"another scenario", func(b *Baseline) { b.Scenario = "t" }, nil, `the baseline is of "t", not "s"`},
		{"another variant", func(b *Baseline) { b.Variant = "x=1" }, nil, `the baseline is of "s" variant "x=1", not "s"`},
		{"run did not complete", nil, func(r *scenario.Report) { r.Err = "broker: listen: address in use" }, "the run did not complete: broker: listen"},
		{"baseline run did not complete", func(b *Baseline) { b.Err = "timeout" }, nil, "the baseline's run did not complete (timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			if tc.b != nil {
				tc.b(&b)
			}
			r := small()
			if tc.r != nil {
				tc.r(r)
			}
			c := Compare(b, r)
			if !strings.Contains(c.Skipped, tc.why) {
				t.Errorf("Skipped = %q, want it to contain %q", c.Skipped, tc.why)
			}
			if len(c.Diffs) != 0 || c.Compared != 0 || c.Regressed() {
				t.Errorf("a skipped comparison compared: %+v", c)
			}
		})
	}
}

func TestCaptureThenCompare(t *testing.T) {
	r := herdReport()
	b := Capture(r)
	if b.Scenario != r.Scenario || b.FleetCount != 1000 || b.Seed != 42 || !b.KeptUp || !b.Captured.Equal(r.Started) {
		t.Errorf("header = %+v", b)
	}
	c := Compare(b, r)
	if c.Skipped != "" || len(c.Diffs) != 0 || len(c.New) != 0 || len(c.Notes) != 0 {
		t.Fatalf("a run compared with its own baseline differs: %+v", c)
	}
	if c.Compared != len(b.Metrics) || c.Compared < 80 {
		t.Errorf("Compared = %d of %d metrics", c.Compared, len(b.Metrics))
	}

	// The rules Capture chose, for the metrics the issue names.
	want := map[string]Rule{
		"lost":                        exact(Lower),
		"commands.lost":               exact(Lower),
		"telemetry.lost":              exact(Lower),
		"fleet.count":                 exact(None),
		`workers.at_version["2.1.0"]`: exact(None),
		"workers.applied_twice":       exact(Lower),
		"outbox.dead_letters":         exact(None),
		"deploys[0].targets":          exact(None),
		"deploys[0].delivered":        exact(Higher),
		"relay.backpressure":          {Kind: Tolerance, Rel: 2, Abs: 25},
		"leader.mailbox.max_depth":    {Kind: Tolerance, Rel: 2, Abs: 25, Better: Lower},
		"leader.mailbox.wait.p99":     {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"deploys[0].duration":         {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
	}
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	for n, rule := range want {
		if got[n].Rule != rule {
			t.Errorf("%s: rule %+v, want %+v", n, got[n].Rule, rule)
		}
	}
	if got["leader.mailbox.max_depth"].Value != 500 || got[`workers.at_version["2.1.0"]`].Value != 1000 {
		t.Errorf("values not captured: %+v %+v", got["leader.mailbox.max_depth"], got[`workers.at_version["2.1.0"]`])
	}
	for _, n := range []string{"run.wall_seconds", "run.seed", "leader.ask_rtt.p99", "run.lag_max"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s captured; it measures the machine, not the system", n)
		}
	}

	// A later run that grew: new metrics are named, not compared.
	r2 := herdReport()
	r2.Result.Deploys = append(r2.Result.Deploys, scenario.DeployRes{Version: "2.2.0", Targets: 4, Delivered: 4, Duration: 3})
	r2.Result.Run.Seed = 43
	c = Compare(b, r2)
	if !slices.Equal(c.New, []string{"deploys[1].targets", "deploys[1].delivered", "deploys[1].rejected", "deploys[1].duration"}) {
		t.Errorf("New = %v", c.New)
	}
	if !slices.Equal(c.Notes, []string{"baseline seed 42, run seed 43"}) {
		t.Errorf("Notes = %v", c.Notes)
	}
}

// TestRuleTableComplete keeps the rule table in step with the Result
// schema: every number a fully populated Result has is given a rule or
// left out with a reason, and every entry of the tables names a real one.
func TestRuleTableComplete(t *testing.T) {
	r := herdReport()
	seen := map[string]bool{}
	for _, l := range leaves(&r.Result) {
		seen[l.Pattern] = true
		_, ruled := rules[l.Pattern]
		_, skip := skipped[l.Pattern]
		if ruled == skip {
			t.Errorf("%s: in rules %v, in skipped %v; want exactly one (add it to metrics.go)", l.Pattern, ruled, skip)
		}
		if ruled && l.Timing != (rules[l.Pattern].Kind == Timing) {
			t.Errorf("%s: timing value %v but rule %s", l.Pattern, l.Timing, rules[l.Pattern].Kind)
		}
	}
	for p := range rules {
		if !seen[p] {
			t.Errorf("rules[%q]: no such metric in scenario.Result", p)
		}
		if err := rules[p].Validate(); err != nil {
			t.Errorf("rules[%q]: %v", p, err)
		}
	}
	for p := range skipped {
		if !seen[p] {
			t.Errorf("skipped[%q]: no such metric in scenario.Result", p)
		}
	}
}

func TestBaselineFile(t *testing.T) {
	dir := t.TempDir()
	path := BaselinePath(filepath.Join(dir, "baselines"), "mailbox-policies", "leader.mailbox.policy=reject")
	if filepath.Base(path) != "mailbox-policies--leader.mailbox.policy=reject.json" {
		t.Errorf("path = %s", path)
	}
	_, err := LoadBaseline(path)
	if !errors.Is(err, ErrNoBaseline) || !strings.Contains(err.Error(), path) {
		t.Fatalf("missing baseline: err = %v, want ErrNoBaseline naming the path", err)
	}

	b := Capture(herdReport())
	if err := SaveBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("round trip changed the baseline:\ngot  %+v\nwant %+v", got, b)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// One metric a line, rules beside the values, help for the editor.
	for _, line := range []string{
		`    {"metric":"lost","value":0,"rule":"exact","better":"lower"},`,
		`    {"metric":"relay.backpressure","value":25,"rule":"tolerance","rel":2,"abs":25},`,
		`    {"metric":"leader.mailbox.wait.p99","value":12.4,"rule":"timing","factor":3,"abs":0.5,"better":"lower"},`,
		`"fleet_count": 1000,`,
		`rule timing (seconds)`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("baseline file lacks %s", line)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left beside the baseline: %v", entries)
	}
}

func TestLoadBaselineErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\": \"lost\" \"value\": 0}\n  ]\n}", ":4:"},
		{"unknown key", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\":\"lost\",\"value\":0,\"rule\":\"timing\",\"fator\":2}\n  ]\n}", `unknown field "fator"`},
		{"unknown rule", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"relay.backpressure","value":0,"rule":"roughly"}]}`,
			`metrics[1] relay.backpressure: rule "roughly" unknown; valid: exact, tolerance, timing`},
		{"exact with a margin", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","abs":2}]}`, `rule "exact" takes no rel, abs or factor`},
		{"timing factor", `{"scenario":"s","metrics":[{"metric":"run.sim_seconds","value":0,"rule":"timing","factor":0.5}]}`, `needs factor >= 1`},
		{"negative", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"tolerance","rel":-1}]}`, `rel -1: must be a number >= 0`},
		{"direction", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","better":"down"}]}`, `better "down" unknown; valid: "lower", "higher"`},
		{"twice", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"lost","value":0,"rule":"exact"}]}`, `metrics[1] lost: listed twice`},
		{"no name", `{"scenario":"s","metrics":[{"value":0,"rule":"exact"}]}`, `metrics[0]: "metric" (its name) is missing`},
		{"no scenario", `{"metrics":[]}`, `"scenario" is missing`},
		{"wrong type", "{\n\"scenario\": \"s\",\n\"fleet_count\": \"many\"}", ":3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadBaseline(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want the path and %q", err, tc.want)
			}
			if errors.Is(err, ErrNoBaseline) {
				t.Error("a malformed baseline is not a missing one")
			}
		})
	}
}

func TestSaveBaselineRejectsInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.json")
	err := SaveBaseline(path, Baseline{Scenario: "s", Metrics: []Metric{{Name: "lost", Rule: Rule{Kind: "nearly"}}}})
	if err == nil || !strings.Contains(err.Error(), `rule "nearly" unknown`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("an invalid baseline was written")
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct{ scenario, variant, want string }{
		{"thundering-herd", "", "thundering-herd"},
		{"mailbox-policies", "leader.mailbox.policy=drop-oldest", "mailbox-policies--leader.mailbox.policy=drop-oldest"},
		{"sweep", "a=1,b=2", "sweep--a=1,b=2"},
		{"sweep", "path=/tmp/x", "sweep--path=_tmp_x-"},
		{"sweep", "label=two words", "sweep--label=two_words-"},
		{".hidden", "", "_hidden-"},
		{"", "", "unnamed"},
		{"dots", "v=1.", "dots--v=1_-"},
	} {
		got := FileName(tc.scenario, tc.variant)
		if !strings.HasPrefix(got, tc.want) || (strings.HasSuffix(tc.want, "-") && len(got) != len(tc.want)+8) {
			t.Errorf("FileName(%q, %q) = %q, want %q (+ hash when lossy)", tc.scenario, tc.variant, got, tc.want)
		}
	}
	// Lossy names stay distinct, and long ones fit a file system.
	if a, b := FileName("s", "x=a/b"), FileName("s", "x=a:b"); a == b {
		t.Errorf("%q and %q collide", a, b)
	}
	long := FileName(strings.Repeat("s", 300), strings.Repeat("v", 300))
	if len(long) > 230 {
		t.Errorf("len = %d", len(long))
	}
}

// TestRecaptureKeepsEdits: updating a baseline refreshes its values but
// keeps what a user edited: a deleted metric stays deleted, a widened rule
// stays wide. A baseline of another size is captured afresh.
func TestRecaptureKeepsEdits(t *testing.T) {
	r := herdReport()
	old := Capture(r)
	wide := Rule{Kind: Tolerance, Rel: 10, Abs: 100}
	var kept []Metric
	for _, m := range old.Metrics {
		switch m.Name {
		case "relay.backpressure":
			continue // deleted by the user
		case "leader.mailbox.max_depth":
			m.Rule, m.Value = wide, 1 // widened, and a stale value
		}
		kept = append(kept, m)
	}
	old.Metrics = kept
	b := Recapture(old, r)
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	if _, ok := got["relay.backpressure"]; ok {
		t.Error("a deleted metric came back")
	}
	if m := got["leader.mailbox.max_depth"]; m.Rule != wide || m.Value != float64(r.Result.Leader.Mailbox.MaxDepth) {
		t.Errorf("max_depth = %+v, want the widened rule with the run's value %d", m, r.Result.Leader.Mailbox.MaxDepth)
	}
	if len(b.Metrics) != len(kept) {
		t.Errorf("%d metrics, want the %d the file kept", len(b.Metrics), len(kept))
	}
	old.FleetCount++
	if fresh := Recapture(old, r); len(fresh.Metrics) != len(Capture(r).Metrics) {
		t.Errorf("a baseline of another size was not captured afresh: %d metrics", len(fresh.Metrics))
	}
}
