package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

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
			"the baseline was captured with 10 workers and this run has 1000"},
		{"gateways in the run", nil, func(r *result.Report) {
			r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 5
			r.Result.Lost = 5
		},
			"the baseline was captured with a session per worker and this run has 2 gateways of up to 5 workers"},
		{"gateways in the baseline", func(b *Baseline) { b.Gateways, b.GatewaySize = 1, 10 }, nil,
			"the baseline was captured with 1 gateway of up to 10 workers and this run has a session per worker"},
		{"another gateway size", func(b *Baseline) { b.Gateways, b.GatewaySize = 2, 6 },
			func(r *result.Report) { r.Result.Fleet.Gateways, r.Result.Fleet.GatewaySize = 2, 9 },
			"the baseline was captured with 2 gateways of up to 6 workers and this run has 2 gateways of up to 9 workers"},
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
