package report

import (
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// small is a run of ten workers that kept up.
func small() *result.Report {
	return &result.Report{
		Scenario: "s",
		Result: result.Result{
			Run:   result.RunInfo{Seed: 1, KeptUp: true},
			Fleet: result.FleetResult{Count: 10},
		},
	}
}

func TestCompareRules(t *testing.T) {
	var (
		exactLost = Metric{Name: "lost", Value: 0, Rule: exact(Lower).rule()}
		exactDead = Metric{Name: "outbox.dead_letters", Value: 3, Rule: exact(None).rule()}
		// The rules are written out: this tests Compare, not the defaults.
		band      = func(d Direction) Rule { return Rule{Kind: Band, Factor: 1.5, Abs: 10, Better: d} }
		tim       = func(d Direction) Rule { return Rule{Kind: Timing, Factor: 2, Abs: 0.25, Better: d} }
		bandBP    = Metric{Name: "relay.backpressure", Value: 150, Rule: band(None)}
		bandDepth = Metric{Name: "leader.mailbox.max_depth", Value: 150, Rule: band(Lower)}
		bandSmall = Metric{Name: "relay.backpressure", Value: 4, Rule: band(None)}
		ratio     = Metric{Name: "heartbeats.coalesced_ratio", Value: 0.8, Rule: Rule{Kind: Band, Factor: 1.1, Abs: 0.02, Better: Higher}}
		waitP99   = Metric{Name: "leader.mailbox.wait.p99", Value: 1, Rule: tim(Lower)}
		waitNone  = Metric{Name: "leader.mailbox.wait.p99", Value: 1, Rule: tim(None)}
		targets   = Metric{Name: "deploys[0].delivered", Value: 10, Rule: exact(None).rule()}
		badRule   = Metric{Name: "lost", Value: 0, Rule: Rule{Kind: "roughly"}}
		oldRule   = Metric{Name: "lost", Value: 0, Rule: Rule{Kind: tolerance}}
		atVersion = Metric{Name: `workers.at_version["2.1.0"]`, Value: 10, Rule: exact(None).rule()}
		setLost   = func(n int64) func(*result.Report) { return func(r *result.Report) { r.Result.Lost = n } }
		setDead   = func(n int) func(*result.Report) {
			return func(r *result.Report) { r.Result.Outbox.DeadLetters = n }
		}
		setBP = func(n uint64) func(*result.Report) {
			return func(r *result.Report) { r.Result.Relay.Backpressure = n }
		}
		setDepth = func(n int) func(*result.Report) {
			return func(r *result.Report) { r.Result.Leader.Mailbox.MaxDepth = n }
		}
		setRatio = func(v float64) func(*result.Report) {
			return func(r *result.Report) { r.Result.Heartbeat.CoalescedRatio = v }
		}
		setWait = func(s result.Seconds) func(*result.Report) {
			return func(r *result.Report) { r.Result.Leader.Mailbox.Wait.P99 = s }
		}
		behind     = func(r *result.Report) { r.Result.Run.KeptUp = false; r.Result.Run.LagMax = 7.5 }
		setVersion = func(n int) func(*result.Report) {
			return func(r *result.Report) { r.Result.Workers.AtVersion = map[string]int{"2.1.0": n} }
		}
	)
	const ok Outcome = "ok"
	for _, tc := range []struct {
		name         string
		m            Metric
		run          func(*result.Report)
		baseBehind   bool
		want         Outcome
		why          string
		wantCompared int
	}{
		{"exact pass", exactLost, setLost(0), false, ok, "", 1},
		{"exact regression", exactLost, setLost(2), false, Regression, "rose from 0 to 2, must equal 0; lower is better", 1},
		{"exact better", Metric{Name: "lost", Value: 3, Rule: exact(Lower).rule()}, setLost(0), false, Better, "fell from 3 to 0, must equal 3: lower is better", 1},
		{"exact no direction, lower", exactDead, setDead(1), false, Regression, "fell from 3 to 1, must equal 3", 1},
		{"exact no direction, higher", exactDead, setDead(4), false, Regression, "rose from 3 to 4", 1},
		{"exact map key", atVersion, setVersion(10), false, ok, "", 1},
		{"exact map key regression", atVersion, setVersion(9), false, Regression, "fell from 10 to 9", 1},

		{"band pass, up", bandBP, setBP(200), false, ok, "", 1},
		{"band pass, at the upper bound", bandBP, setBP(235), false, ok, "", 1},
		{"band pass, at the lower bound", bandBP, setBP(90), false, ok, "", 1},
		{"band regression up", bandBP, setBP(236), false, Regression, "rose from 150 to 236, allowed 90 to 235 (1.5× ± 10 of 150)", 1},
		{"band regression down, no direction", bandBP, setBP(89), false, Regression, "fell from 150 to 89, allowed 90 to 235", 1},
		{"band regression down to nothing", bandBP, setBP(0), false, Regression, "fell from 150 to 0", 1},
		{"band pass, abs for small values", bandSmall, setBP(16), false, ok, "", 1},
		{"band regression, abs", bandSmall, setBP(17), false, Regression, "allowed 0 to 16", 1},
		{"band better", bandDepth, setDepth(10), false, Better, "fell from 150 to 10, allowed 90 to 235 (1.5× ± 10 of 150): lower is better", 1},
		{"band worse with direction", bandDepth, setDepth(300), false, Regression, "rose from 150 to 300, allowed 90 to 235 (1.5× ± 10 of 150); lower is better", 1},
		{"ratio better", ratio, setRatio(0.99), false, Better, "higher is better", 1},
		{"ratio regression", ratio, setRatio(0.6), false, Regression, "fell from 0.8 to 0.6", 1},

		{"timing pass", waitP99, setWait(2.2), false, ok, "", 1},
		{"timing regression", waitP99, setWait(2.3), false, Regression, "rose from 1s to 2.3s, allowed 0.25s to 2.25s (2× ± 0.25s of 1s); lower is better", 1},
		{"timing better", waitP99, setWait(0.1), false, Better, "lower is better", 1},
		{"timing faster, no direction", waitNone, setWait(0.1), false, Regression, "fell from 1s to 0.1s", 1},
		{"timing not compared: run fell behind", waitP99, func(r *result.Report) { setWait(30)(r); behind(r) }, false, NotCompared, "not compared: run fell behind (lag max 7.5s)", 0},
		{"timing not compared: baseline fell behind", waitP99, setWait(30), true, NotCompared, "the baseline's run fell behind", 0},
		{"counts still compared when behind", exactLost, func(r *result.Report) { setLost(1)(r); behind(r) }, false, Regression, "rose from 0 to 1", 1},

		{"absent metric", targets, func(*result.Report) {}, false, Regression, "the run has no such metric", 0},
		{"invalid rule", badRule, setLost(0), false, Regression, `invalid rule: rule "roughly" unknown; valid: exact, band, timing`, 0},
		{"replaced rule", oldRule, setLost(0), false, Regression, `invalid rule: rule "tolerance" was replaced by "band"`, 0},
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
	base := Baseline{Scenario: "s", Seed: 1, FleetCount: 10, KeptUp: true, Metrics: []Metric{{Name: "lost", Rule: exact(Lower).rule()}}}
	for _, tc := range []struct {
		name string
		b    func(*Baseline)
		r    func(*result.Report)
		why  string
	}{
		{"fleet size", nil, func(r *result.Report) { r.Result.Fleet.Count = 1000; r.Result.Lost = 5 },
			"the baseline was captured with 10 workers and this run had 1000"},
		{"gateways in the run", nil, func(r *result.Report) {
			r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 5
			r.Result.Lost = 5
		},
			"the baseline was captured with a session per worker and this run had 2 gateways of up to 5 workers"},
		{"gateways in the baseline", func(b *Baseline) { b.Gateways, b.GatewaySize = 1, 10 }, nil,
			"the baseline was captured with 1 gateways of up to 10 workers and this run had a session per worker"},
		{"another gateway size", func(b *Baseline) { b.Gateways, b.GatewaySize = 2, 6 },
			func(r *result.Report) { r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 9 },
			"the baseline was captured with 2 gateways of up to 6 workers and this run had 2 gateways of up to 9 workers"},
		{"another scenario", func(b *Baseline) { b.Scenario = "t" }, nil, `the baseline is of "t", not "s"`},
		{"another variant", func(b *Baseline) { b.Variant = "x=1" }, nil, `the baseline is of "s" variant "x=1", not "s"`},
		{"run did not complete", nil, func(r *result.Report) { r.Err = "broker: listen: address in use" }, "the run did not complete: broker: listen"},
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

// capture is Capture for a test: its error fails the test.
func capture(t testing.TB, reps ...*result.Report) Baseline {
	t.Helper()
	b, err := Capture(reps...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCaptureThenCompare(t *testing.T) {
	r := herdReport()
	b := capture(t, r)
	if b.Scenario != r.Scenario || b.FleetCount != 1000 || b.Seed != 42 || !b.KeptUp || !b.Captured.Equal(r.Started) {
		t.Errorf("header = %+v", b)
	}
	c := Compare(b, r)
	if c.Skipped != "" || len(c.Diffs) != 0 || len(c.New) != 0 || len(c.Notes) != 0 {
		t.Fatalf("a run compared with its own baseline differs: %+v", c)
	}
	if c.Compared != len(b.Metrics) || c.Compared < 75 {
		t.Errorf("Compared = %d of %d metrics", c.Compared, len(b.Metrics))
	}

	// The rules Capture chose: from one run, each kind's default band.
	want := map[string]Rule{
		"lost":                        {Kind: Exact, Better: Lower},
		"commands.lost":               {Kind: Exact, Better: Lower},
		"telemetry.lost":              {Kind: Exact, Better: Lower},
		`workers.at_version["2.1.0"]`: {Kind: Exact},
		"workers.applied_twice":       {Kind: Exact, Better: Lower},
		"outbox.dead_letters":         {Kind: Exact},
		"deploys[0].delivered":        {Kind: Exact, Better: Higher},
		"relay.backpressure":          {Kind: Band, Factor: 3, Abs: 5},
		"leader.mailbox.max_depth":    {Kind: Band, Factor: 3, Abs: 5, Better: Lower},
		"relay.limit.min":             {Kind: Band, Factor: 2, Abs: 2},
		"heartbeats.coalesced_ratio":  {Kind: Band, Factor: 1.25, Abs: 0.05, Better: Higher},
		"leader.mailbox.wait.p99":     {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"deploys[0].duration":         {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"run.sim_seconds":             {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"heartbeats.age.p50":          {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
		"outbox.oldest_max":           {Kind: Timing, Factor: 3, Abs: 0.5, Better: Lower},
	}
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
		if m.Spread != (Spread{}) {
			t.Errorf("%s: spread %+v from one run; want none (not measured)", m.Name, m.Spread)
		}
	}
	for n, rule := range want {
		if got[n].Rule != rule {
			t.Errorf("%s: rule %+v, want %+v", n, got[n].Rule, rule)
		}
	}
	if got["leader.mailbox.max_depth"].Value != 500 || got[`workers.at_version["2.1.0"]`].Value != 1000 {
		t.Errorf("values not captured: %+v %+v", got["leader.mailbox.max_depth"], got[`workers.at_version["2.1.0"]`])
	}
	for _, n := range []string{"run.wall_seconds", "run.lag_max", "leader.ask_rtt.p99"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s captured; it measures the machine, not the system", n)
		}
	}
	for _, n := range []string{"run.seed", "run.speed", "fleet.count", `fleet.groups["default"]`, "leader.mailbox.capacity",
		"workers.mailbox.capacity", "relay.partitions", "relay.limit.initial", "commands.poisoned", "deploys[0].targets", "run.events"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s captured; it echoes the scenario's input", n)
		}
	}
	if !slices.Contains(b.Help, helpRuns(1)) || !strings.Contains(helpRuns(1), "not measured") {
		t.Errorf("a baseline of one run does not say its bands were not measured: %q", b.Help)
	}

	// A later run that grew: new metrics are named, not compared.
	r2 := herdReport()
	r2.Result.Deploys = append(r2.Result.Deploys, result.DeployResult{Version: "2.2.0", Targets: 4, Delivered: 4, Duration: 3})
	r2.Result.Run.Seed = 43
	c = Compare(b, r2)
	if !slices.Equal(c.New, []string{"deploys[1].delivered", "deploys[1].rejected", "deploys[1].early", "deploys[1].duration"}) {
		t.Errorf("New = %v", c.New)
	}
	if !slices.Equal(c.Notes, []string{"baseline seed 42, run seed 43"}) {
		t.Errorf("Notes = %v", c.Notes)
	}
}

// TestRuleTableComplete keeps the rule table in step with the Result
// schema: every number the Result type can hold (every field, whatever
// map keys or list lengths a run has) is given a rule or left out with a
// reason, and every entry of the tables names a real one. The scenario's
// inputs are left out as such; the timings are kept.
func TestRuleTableComplete(t *testing.T) {
	seen := map[string]bool{}
	timing := map[string]bool{}
	typeLeaves(reflect.TypeFor[result.Result](), "", seen, timing)
	for p := range seen {
		s, ruled := rules[p]
		why, skip := skipped[p]
		if ruled == skip {
			t.Errorf("%s: in rules %v, in skipped %v; want exactly one (add it to metrics.go)", p, ruled, skip)
		}
		if skip && why == "" {
			t.Errorf("skipped[%q]: no reason", p)
		}
		if !ruled {
			continue
		}
		if timing[p] != (s.Kind == Timing) {
			t.Errorf("%s: timing value %v but rule %s", p, timing[p], s.Kind)
		}
		if (s.Kind == Exact) != (s.Scale == nil) || (s.Kind == Timing && s.Scale != &timings) || (s.Kind == Band && s.Scale == &timings) {
			t.Errorf("%s: rule %s with scale %v", p, s.Kind, s.Scale)
		}
		if err := s.rule().Validate(); err != nil {
			t.Errorf("rules[%q]: %v", p, err)
		}
	}
	for p := range rules {
		if !seen[p] {
			t.Errorf("rules[%q]: no such metric in result.Result", p)
		}
	}
	for p := range skipped {
		if !seen[p] {
			t.Errorf("skipped[%q]: no such metric in result.Result", p)
		}
	}
	for _, p := range []string{"run.seed", "run.speed", "fleet.count", "fleet.groups[*]", "leader.mailbox.capacity",
		"workers.mailbox.capacity", "relay.partitions", "relay.limit.initial", "commands.poisoned"} {
		if !strings.HasPrefix(skipped[p], input) {
			t.Errorf("%s: skipped %q, want %q: it echoes the scenario", p, skipped[p], input)
		}
	}
	for _, p := range []string{"run.sim_seconds", "leader.mailbox.wait.p50", "leader.mailbox.wait.p99", "workers.mailbox.wait.p50",
		"workers.mailbox.wait.p99", "heartbeats.age.p50", "heartbeats.age.p99", "deploys[*].duration", "outbox.oldest_max"} {
		if rules[p].Kind != Timing {
			t.Errorf("%s: %v, want a timing rule: it measures how long the mechanism made something wait", p, rules[p])
		}
	}
	// herdReport, which the other tests use, holds every one of them.
	r := herdReport()
	for _, l := range leaves(&r.Result) {
		delete(seen, l.Pattern)
	}
	if len(seen) > 0 {
		t.Errorf("herdReport lacks %v", slices.Sorted(maps.Keys(seen)))
	}
}

// typeLeaves is leaves over a type: every number a value of t can hold,
// by pattern, whether its maps and lists are empty or not.
func typeLeaves(t reflect.Type, pattern string, seen, timing map[string]bool) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("expr"); tag != "" && tag != "-" {
				typeLeaves(t.Field(i).Type, dot(pattern, tag), seen, timing)
			}
		}
	case reflect.Map, reflect.Slice:
		typeLeaves(t.Elem(), pattern+"[*]", seen, timing)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		seen[pattern] = true
		timing[pattern] = t == secondsType
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

	for _, tc := range []struct {
		name  string
		reps  []*result.Report
		lines []string
	}{
		{"one run", []*result.Report{herdReport()}, []string{
			`    {"metric":"lost","value":0,"rule":"exact","better":"lower"},`,
			`    {"metric":"relay.backpressure","value":25,"rule":"band","factor":3,"abs":5},`,
			`    {"metric":"leader.mailbox.wait.p99","value":12.4,"rule":"timing","factor":3,"abs":0.5,"better":"lower"},`,
			`"fleet_count": 1000,`,
			`rule timing (seconds)`,
			`Captured from one run: the bands were not measured; each is the default of its kind of metric (count 3× ± 5, small number 2× ± 2, ratio 1.25× ± 0.05, seconds 3× ± 0.5s)`,
		}},
		{"three runs", noisyRuns(3, 1.1), []string{
			// min 0 is written: the spread is whole on every measured line.
			`    {"metric":"lost","value":0,"rule":"exact","better":"lower","runs":3,"min":0,"max":0},`,
			`    {"metric":"relay.backpressure","value":132,"rule":"band","factor":2.39,"abs":7.17,"runs":3,"min":120,"max":145},`,
			`Measured from 3 runs: value is their median; runs, min and max their spread.`,
			`s and k_min by kind of metric: count 3 and 1.25, small number 1 and 1.25, ratio 0.02 and 1.05, seconds 0.25 and 1.5.`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := capture(t, tc.reps...)
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
			// One metric a line, rules and spread beside the values, help
			// for the editor.
			for _, line := range tc.lines {
				if !strings.Contains(text, line) {
					t.Errorf("baseline file lacks %s", line)
				}
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("temporary files left beside the baseline: %v", entries)
			}
		})
	}
}

// herdCounts is herdReport with the counts of four mechanisms at values
// measured in the shipped scenarios' runs: the leader's "full" answers,
// coalesced heartbeats, the relay's backpressure and its skips of offline
// workers.
func herdCounts() *result.Report {
	r := herdReport()
	r.Result.Leader.AnsweredFull = 260
	r.Result.Heartbeat.Coalesced = 8610
	r.Result.Relay.Backpressure = 132
	r.Result.Relay.OfflineSkips = 129
	return r
}

// noisyRuns is n runs of herdCounts whose load-dependent counts differ:
// run i scales them by spread^(i - n/2), so the median run is the herd's
// own and the others stray by up to spread^(n/2) either way.
func noisyRuns(n int, spread float64) []*result.Report {
	reps := make([]*result.Report, n)
	for i := range reps {
		r := herdCounts()
		f := math.Pow(spread, float64(i-n/2))
		scale := func(v *uint64) { *v = uint64(math.Round(float64(*v) * f)) }
		scale(&r.Result.Relay.Backpressure)
		scale(&r.Result.Relay.OfflineSkips)
		scale(&r.Result.Leader.AnsweredFull)
		scale(&r.Result.Heartbeat.Coalesced)
		scale(&r.Result.Relay.Retries)
		r.Result.Leader.Mailbox.Wait.P99 *= result.Seconds(f)
		reps[i] = r
	}
	return reps
}

func TestLoadBaselineErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\": \"lost\" \"value\": 0}\n  ]\n}", ":4:"},
		{"unknown key", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\":\"lost\",\"value\":0,\"rule\":\"timing\",\"fator\":2}\n  ]\n}", `unknown field "fator"`},
		{"unknown rule", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"relay.backpressure","value":0,"rule":"roughly"}]}`,
			`metrics[1] relay.backpressure: rule "roughly" unknown; valid: exact, band, timing`},
		{"exact with a margin", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","abs":2}]}`, `rule "exact" takes no factor or abs`},
		{"timing factor", `{"scenario":"s","metrics":[{"metric":"run.sim_seconds","value":0,"rule":"timing","factor":0.5}]}`, `rule "timing" needs factor >= 1`},
		{"band without factor", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","abs":3}]}`, `rule "band" needs factor >= 1`},
		{"negative", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","factor":2,"abs":-1}]}`, `abs -1: must be a number >= 0`},
		{"rel on a band", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","factor":2,"rel":2}]}`, `metrics[0] relay.retries: rel belongs to the replaced tolerance rule; a "band" rule takes factor and abs`},
		{"direction", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","better":"down"}]}`, `better "down" unknown; valid: "lower", "higher"`},
		{"twice", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"lost","value":0,"rule":"exact"}]}`, `metrics[1] lost: listed twice`},
		{"no name", `{"scenario":"s","metrics":[{"value":0,"rule":"exact"}]}`, `metrics[0]: "metric" (its name) is missing`},
		{"no scenario", `{"metrics":[]}`, `"scenario" is missing`},
		{"wrong type", "{\n\"scenario\": \"s\",\n\"fleet_count\": \"many\"}", ":3:"},
		{"spread upside down", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":5,"rule":"band","factor":2,"abs":3,"runs":5,"min":9,"max":2}]}`, `metrics[0] relay.retries: min 9 is above max 2`},
		{"spread without runs", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":5,"rule":"band","factor":2,"abs":3,"min":1,"max":9}]}`, `give runs too`},
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

// oldFile is a baseline as it was written before bands replaced the
// tolerance rule: relay.backpressure and leader.mailbox.max_depth kept,
// the rest of the herd's metrics deleted by its user.
const oldFile = `{
  "scenario": "thundering-herd",
  "seed": 42,
  "fleet_count": 1000,
  "kept_up": true,
  "captured": "2026-03-14T09:26:53Z",
  "metrics": [
    {"metric":"lost","value":0,"rule":"exact","better":"lower"},
    {"metric":"fleet.count","value":1000,"rule":"exact"},
    {"metric":"relay.backpressure","value":25,"rule":"tolerance","rel":2,"abs":25},
    {"metric":"leader.mailbox.max_depth","value":500,"rule":"tolerance","rel":2,"abs":25,"better":"lower"},
    {"metric":"leader.mailbox.wait.p99","value":12.4,"rule":"timing","factor":3,"abs":0.5,"better":"lower"}
  ]
}
`

// TestToleranceRefused: a file with the replaced rule is refused with the
// file, line and metric and both fixes; updating it measures its metrics
// anew and keeps the user's deletions.
func TestToleranceRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.json")
	if err := os.WriteFile(path, []byte(oldFile), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadBaseline(path)
	for _, want := range []string{
		path + ":10:15: metrics[2] relay.backpressure: rule \"tolerance\" (and 1 more of its lines) was replaced by \"band\"",
		"sim check --update-baseline --repeat 10",
		`by hand in the new form: {"metric":"relay.backpressure","value":25,"rule":"band","factor":3,"abs":5}`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %s", err, want)
		}
	}

	if err := UpdateBaseline(path, noisyRuns(5, 1.1)...); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(path)
	if err != nil {
		t.Fatalf("the updated file does not load: %v", err)
	}
	var names []string
	for _, m := range b.Metrics {
		names = append(names, m.Name)
		if m.Runs != 5 {
			t.Errorf("%s: runs %d, want 5", m.Name, m.Runs)
		}
	}
	// fleet.count echoes the input: no longer measured, so dropped.
	if want := []string{"lost", "relay.backpressure", "leader.mailbox.max_depth", "leader.mailbox.wait.p99"}; !slices.Equal(names, want) {
		t.Errorf("metrics %v, want %v", names, want)
	}
	if m := b.Metrics[2]; m.Kind != Band || m.Better != Lower || m.Factor != 1.25 {
		t.Errorf("max_depth = %+v, want a measured band (the runs agreed: k_min), lower is better", m)
	}
}

// TestBandSymmetric: a band is symmetric in ratio: a tenth fails as ten
// times does, where a ±200% tolerance let a count fall to nothing; ten
// percent either way passes.
func TestBandSymmetric(t *testing.T) {
	for _, tc := range []struct {
		metric string
		value  float64
		set    func(*result.Report, float64)
	}{
		{"leader.answered_full", 260, func(r *result.Report, v float64) { r.Result.Leader.AnsweredFull = uint64(v) }},
		{"heartbeats.coalesced", 8610, func(r *result.Report, v float64) { r.Result.Heartbeat.Coalesced = uint64(v) }},
		{"relay.offline_skips", 129, func(r *result.Report, v float64) { r.Result.Relay.OfflineSkips = uint64(v) }},
		{"relay.backpressure", 132, func(r *result.Report, v float64) { r.Result.Relay.Backpressure = uint64(v) }},
		{"leader.mailbox.wait.p99", 12.4, func(r *result.Report, v float64) { r.Result.Leader.Mailbox.Wait.P99 = result.Seconds(v) }},
	} {
		m := Metric{Name: tc.metric, Value: tc.value, Rule: defaultRule(tc.metric, None)}
		b := Baseline{Scenario: "s", Seed: 1, FleetCount: 10, KeptUp: true, Metrics: []Metric{m}}
		for _, f := range []struct {
			times float64
			pass  bool
		}{{0, false}, {0.1, false}, {1 / 1.1, true}, {1, true}, {1.1, true}, {10, false}} {
			r := small()
			tc.set(r, math.Round(tc.value*f.times*100)/100)
			c := Compare(b, r)
			if c.Regressed() == f.pass {
				t.Errorf("%s %s × %g = %s: regressed %v, want %v (%+v)", tc.metric, num(tc.value), f.times, num(tc.value*f.times), c.Regressed(), !f.pass, c.Diffs)
			}
		}
	}
}

// TestTenfold: a baseline count ten times the run's, or a tenth of it,
// fails the comparison and names the metric, for the counts that a
// ±200% tolerance let fall to nothing; with one run's default bands and
// with bands measured from noisy runs alike.
func TestTenfold(t *testing.T) {
	runs := noisyRuns(5, 1.15)
	for _, tc := range []struct {
		name string
		b    Baseline
	}{
		{"default bands", capture(t, herdCounts())},
		{"measured bands", capture(t, runs...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range runs {
				if c := Compare(tc.b, r); c.Regressed() || c.Compared < 70 {
					t.Fatalf("one of the runs measured does not pass: %+v", c)
				}
			}
			for _, name := range []string{"leader.answered_full", "heartbeats.coalesced", "relay.backpressure", "relay.offline_skips"} {
				for _, times := range []float64{10, 0.1} {
					b := tc.b
					b.Metrics = slices.Clone(b.Metrics)
					i := slices.IndexFunc(b.Metrics, func(m Metric) bool { return m.Name == name })
					if i < 0 || b.Metrics[i].Value < 20 {
						t.Fatalf("%s: %+v; want a count of at least 20 in the herd", name, b.Metrics)
					}
					b.Metrics[i].Value *= times
					c := Compare(b, herdCounts())
					reg := c.Regressions()
					if len(reg) != 1 || reg[0].Metric != name {
						t.Errorf("%s × %g: regressions %+v, want %s alone", name, times, reg, name)
					}
				}
			}
		})
	}
}

// TestMeasuredBand: from several runs the value is the median, the spread
// is recorded, and factor and abs follow the documented formula.
func TestMeasuredBand(t *testing.T) {
	runs := noisyRuns(5, 1.2) // backpressure 132 × 1.2^-2 … 1.2^2: 92, 110, 132, 158, 190
	b := capture(t, runs...)
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	bp := got["relay.backpressure"]
	// r = max((190+3)/(132+3), (132+3)/(92+3)) = 1.4296; p = 1 + 25/5 = 6;
	// factor = 1.4296^6 = 8.536 → 8.54 (3 digits, up); abs = 3 × 8.54.
	want := Metric{Name: "relay.backpressure", Value: 132, Rule: Rule{Kind: Band, Factor: 8.54, Abs: 25.7}, Spread: Spread{Runs: 5, Min: 92, Max: 190}}
	if bp != want {
		t.Errorf("relay.backpressure = %+v\nwant %+v", bp, want)
	}
	if m := got["lost"]; m.Rule != (Rule{Kind: Exact, Better: Lower}) || m.Spread != (Spread{Runs: 5}) {
		t.Errorf("lost = %+v: an exact rule records its spread, and takes no band", m)
	}
	// A steady metric gets the narrowest band of its kind.
	if m := got["relay.limit.min"]; m.Factor != smalls.MinFactor || m.Abs != 1.25 {
		t.Errorf("relay.limit.min = %+v: want k_min %v and abs s × k_min", m, smalls.MinFactor)
	}
	if len(b.Warnings()) != 0 {
		t.Errorf("warnings %v", b.Warnings())
	}

	for _, tc := range []struct {
		name string
		vals []float64
		sc   *scale
		n    int
		k    float64
		abs  float64
	}{
		{"one run: the default", []float64{100}, &counts, 1, 3, 5},
		{"zeros", []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &counts, 10, 1.25, 3.75},
		{"a count of 0 to 3", []float64{0, 0, 0, 1, 3}, &counts, 5, 64, 192},
		// r = 123/103 = 1.194, p = 3.5
		{"ten runs", []float64{90, 95, 100, 100, 100, 100, 102, 105, 110, 120}, &counts, 10, 1.87, 5.61},
		// r = 103/83 = 1.241, p = 2.67
		{"fifteen runs: p = 2.67", []float64{80, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}, &counts, 15, 1.78, 5.34},
		// r = 0.85/0.75 = 1.133, p = 6
		{"seconds", []float64{0.5, 0.55, 0.6, 0.65, 0.7}, &timings, 5, 2.12, 0.53},
		// one slow run in five: r = 0.45/0.262 = 1.718, p = 6
		{"seconds, an outlier", []float64{0.01, 0.012, 0.011, 0.2, 0.013}, &timings, 5, 25.7, 6.43},
	} {
		m := median(tc.vals)
		k, abs := tc.sc.band(m, slices.Min(tc.vals), slices.Max(tc.vals), len(tc.vals))
		if math.Abs(k-tc.k) > 0.011 || math.Abs(abs-tc.abs) > 0.011*tc.abs {
			t.Errorf("%s: band %g× ± %g, want %g× ± %g", tc.name, k, abs, tc.k, tc.abs)
		}
	}
}

// TestCaptureRuns: the runs of a baseline are repeats of one run; a
// metric some run lacks is not kept; an exact metric the runs disagree on
// and a band too wide to catch a tenfold change are warned about.
func TestCaptureRuns(t *testing.T) {
	if _, err := Capture(); err == nil {
		t.Error("a baseline of no runs")
	}
	other := herdReport()
	other.Result.Fleet.Count = 300
	if _, err := Capture(herdReport(), other); err == nil || !strings.Contains(err.Error(), "run 2 of 2") {
		t.Errorf("runs of two sizes: err = %v", err)
	}

	runs := noisyRuns(5, 1.05)
	runs[1].Result.Lost = 2
	runs[2].Result.Relay.Retries = 100 * runs[2].Result.Relay.Retries
	runs[3].Result.Run.KeptUp = false
	runs[3].Result.Leader.Mailbox.Wait.P99 = 100 // a stalled run's timing
	runs[4].Result.Workers.AtVersion["9.9.9"] = 1
	b := capture(t, runs...)
	if !b.KeptUp {
		t.Error("kept_up false though four runs of five kept up")
	}
	for _, m := range b.Metrics {
		if m.Name == "leader.mailbox.wait.p99" && (m.Runs != 4 || m.Max == 100) {
			t.Errorf("%s measured from %d runs up to %g: want the 4 that kept up", m.Name, m.Runs, m.Max)
		}
	}
	behind := noisyRuns(5, 1.05)
	for _, r := range behind[:3] {
		r.Result.Run.KeptUp = false
	}
	if capture(t, behind...).KeptUp {
		t.Error("kept_up true though three runs of five fell behind: its timings would be compared")
	}
	for _, m := range b.Metrics {
		if strings.Contains(m.Name, "9.9.9") {
			t.Errorf("%s kept: one run of five has it", m.Name)
		}
	}
	w := strings.Join(b.Warnings(), "\n")
	for _, want := range []string{
		"lost: rule exact, but its 5 runs ranged from 0 to 2: find out why, or make it a band",
		"relay.retries: its 5 runs ranged from",
		"it cannot catch a tenfold change",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
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

// TestRecaptureKeepsEdits: updating a baseline refreshes its values and
// measures its bands, but keeps what a user edited: a deleted metric stays
// deleted, a direction or a choice of exact stays. A band is measured, not
// kept: a band widened by hand is sized from the runs again. A baseline of
// another size is captured afresh.
func TestRecaptureKeepsEdits(t *testing.T) {
	old := capture(t, herdReport())
	var kept []Metric
	for _, m := range old.Metrics {
		switch m.Name {
		case "relay.backpressure":
			continue // deleted by the user
		case "leader.mailbox.max_depth":
			m.Factor, m.Value = 10, 1 // widened, and a stale value
		case "relay.retries":
			m.Rule = Rule{Kind: Exact} // the user holds it exact
		case "leader.malformed":
			m.Rule = Rule{Kind: Band, Factor: 2, Abs: 1} // the user lets it move
		case "relay.delivered":
			m.Better = Higher
		}
		kept = append(kept, m)
	}
	old.Metrics = kept
	runs := noisyRuns(5, 1.1)
	b, err := Recapture(old, runs...)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Metric{}
	for _, m := range b.Metrics {
		got[m.Name] = m
	}
	if _, ok := got["relay.backpressure"]; ok {
		t.Error("a deleted metric came back")
	}
	if m := got["leader.mailbox.max_depth"]; m.Value != 500 || m.Factor != counts.MinFactor || m.Better != Lower || m.Runs != 5 {
		t.Errorf("max_depth = %+v, want the runs' value 500 with a measured band", m)
	}
	if m := got["relay.retries"]; m.Kind != Exact || m.Factor != 0 || m.Runs != 5 {
		t.Errorf("retries = %+v, want exact as the user made it", m)
	}
	if m := got["leader.malformed"]; m.Kind != Band || m.Factor != counts.MinFactor || m.Abs != counts.Slack*counts.MinFactor {
		t.Errorf("leader.malformed = %+v, want a band measured as a count", m)
	}
	if m := got["relay.delivered"]; m.Better != Higher {
		t.Errorf("relay.delivered = %+v, want the user's direction", m)
	}
	if len(b.Metrics) != len(kept) {
		t.Errorf("%d metrics, want the %d the file kept", len(b.Metrics), len(kept))
	}
	old.FleetCount++
	fresh, err := Recapture(old, runs...)
	if err != nil || len(fresh.Metrics) != len(capture(t, runs...).Metrics) {
		t.Errorf("a baseline of another size was not captured afresh: %d metrics, %v", len(fresh.Metrics), err)
	}
}

// TestCaptureGateways: a baseline records the runs' gateway layout, writes
// it to the file, and does not compare a run of another layout; a run of
// its own layout is compared.
func TestCaptureGateways(t *testing.T) {
	r := small()
	r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 5
	b := capture(t, r)
	if b.Gateways != 2 || b.GatewaySize != 5 {
		t.Fatalf("captured gateways %d of %d, want 2 of 5", b.Gateways, b.GatewaySize)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := SaveBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBaseline(path)
	if err != nil || got.Gateways != 2 || got.GatewaySize != 5 {
		t.Fatalf("read back: %v, gateways %d of %d", err, got.Gateways, got.GatewaySize)
	}
	if c := Compare(got, r); c.Skipped != "" || c.Compared == 0 {
		t.Errorf("same layout: %+v", c)
	}
	if c := Compare(got, small()); !strings.Contains(c.Skipped, "this run had a session per worker") {
		t.Errorf("a run without gateways compared: %+v", c)
	}
	if other := capture(t, small()); other.Gateways != 0 {
		t.Errorf("no gateways captured as %d", other.Gateways)
	}
}
