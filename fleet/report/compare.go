package report

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Outcome is what a compared metric's difference means.
type Outcome string

const (
	// Regression: the run is worse than the baseline allows.
	Regression Outcome = "regression"
	// Better: outside the rule, in the metric's better direction.
	Better Outcome = "better"
	// NotCompared: the metric was not compared (a timing on a run that fell
	// behind); Why says why.
	NotCompared Outcome = "not_compared"
)

// Comparison is a run compared with its baseline.
type Comparison struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant,omitempty"`
	// Skipped says why nothing was compared (a baseline of another fleet
	// size, a run that did not complete); empty when the run was compared.
	Skipped string `json:"skipped,omitempty"`
	// Compared counts the metrics judged (within the rule, better or
	// regressed).
	Compared int `json:"compared"`
	// Diffs are the metrics that regressed, improved beyond their rule or
	// could not be compared, in the baseline's order.
	Diffs []Difference `json:"diffs,omitempty"`
	// New names the run's metrics that the baseline does not have (a
	// metric deleted from the file, a new deploy): not compared.
	New []string `json:"new,omitempty"`
	// Notes are remarks that do not fail the comparison ("baseline seed 1,
	// run seed 2").
	Notes []string `json:"notes,omitempty"`
}

// Difference is one metric outside its rule, or not compared.
type Difference struct {
	Metric   string  `json:"metric"`
	Baseline float64 `json:"baseline"`
	Got      float64 `json:"got"`
	// Absent is set when the run has no such metric, or no value for it
	// (a deploy that did not finish has no duration); Got is then 0.
	Absent  bool    `json:"absent,omitempty"`
	Rule    Rule    `json:"rule"`
	Outcome Outcome `json:"outcome"`
	// Why says what the rule allowed and how the value moved.
	Why string `json:"why"`
}

// Regressions returns the differences that are regressions.
func (c Comparison) Regressions() []Difference {
	var out []Difference
	for _, d := range c.Diffs {
		if d.Outcome == Regression {
			out = append(out, d)
		}
	}
	return out
}

// Regressed reports whether any metric regressed.
func (c Comparison) Regressed() bool { return len(c.Regressions()) > 0 }

// count returns how many differences have outcome o.
func (c Comparison) count(o Outcome) int {
	n := 0
	for _, d := range c.Diffs {
		if d.Outcome == o {
			n++
		}
	}
	return n
}

// gatewayText describes a gateway layout for a message.
func gatewayText(gateways, size int) string {
	if gateways == 0 {
		return "a session per worker"
	}
	return fmt.Sprintf("%s of up to %s", plural(gateways, "gateway", "gateways"), plural(size, "worker", "workers"))
}

// Shape is what the runs of a baseline and a later run must share to be
// compared: the fleet's size and its gateway layout (fleet.count,
// fleet.gateways and fleet.gateway_size). It is known before a run starts,
// so a check can refuse a baseline of another shape before it runs
// anything.
type Shape struct {
	Workers     int
	Gateways    int // 0: a session per worker
	GatewaySize int
}

// ShapeOf is the shape of a run's result.
func ShapeOf(res *result.Result) Shape {
	return Shape{Workers: res.Fleet.Count, Gateways: res.Fleet.Gateways, GatewaySize: res.Fleet.GatewaySize}
}

// Mismatch says why a run of shape s cannot be compared with b, naming
// both sizes; "" when it can.
func (b Baseline) Mismatch(s Shape) string {
	switch {
	case b.FleetCount != s.Workers:
		return fmt.Sprintf("the baseline was captured with %d workers and this run has %d: counts at different sizes do not compare", b.FleetCount, s.Workers)
	case b.Gateways != s.Gateways || b.GatewaySize != s.GatewaySize:
		return fmt.Sprintf("the baseline was captured with %s and this run has %s: counts of other sessions do not compare",
			gatewayText(b.Gateways, b.GatewaySize), gatewayText(s.Gateways, s.GatewaySize))
	}
	return ""
}

// Compare compares r with b by each metric's rule. A run that cannot be
// compared meaningfully (another scenario or variant, another fleet size
// or gateway layout,
// a run or baseline run that did not complete) compares nothing and says
// why in Skipped.
func Compare(b Baseline, r *result.Report) Comparison {
	c := Comparison{Scenario: r.Scenario, Variant: r.Variant}
	res := &r.Result
	switch {
	case b.Scenario != r.Scenario || b.Variant != r.Variant:
		c.Skipped = fmt.Sprintf("the baseline is of %s, not %s", label(b.Scenario, b.Variant), label(r.Scenario, r.Variant))
	case r.Err != "":
		c.Skipped = "the run did not complete: " + r.Err
	case b.Err != "":
		c.Skipped = "the baseline's run did not complete (" + b.Err + "): capture it again"
	default:
		if why := b.Mismatch(ShapeOf(res)); why != "" {
			c.Skipped = why + "; capture a baseline at this size"
		}
	}
	if c.Skipped != "" {
		return c
	}
	if b.Seed != res.Run.Seed {
		c.Notes = append(c.Notes, fmt.Sprintf("baseline seed %d, run seed %d", b.Seed, res.Run.Seed))
	}

	got := make(map[string]leaf)
	var order []leaf
	for _, l := range leaves(res) {
		got[l.Path] = l
		order = append(order, l)
	}
	inBaseline := make(map[string]bool, len(b.Metrics))
	for _, m := range b.Metrics {
		inBaseline[m.Name] = true
		d := Difference{Metric: m.Name, Baseline: m.Value, Rule: m.Rule}
		l, ok := got[m.Name]
		never := ok && math.IsInf(l.Value, 0) // no number: JSON has no infinity
		if never {
			l.Value, d.Absent = 0, true
		}
		switch {
		case !ok:
			d.Absent, d.Outcome = true, Regression
			d.Why = "the run has no such metric (a deploy or a group fewer than the baseline)"
		case m.Rule.Validate() != nil:
			d.Got, d.Outcome = l.Value, Regression
			d.Why = "invalid rule: " + m.Rule.Validate().Error()
		case m.Kind == Timing && !res.Run.KeptUp:
			d.Got, d.Outcome = l.Value, NotCompared
			why := res.Run.Behind()
			if why == "" { // a report without its lags
				why = fmt.Sprintf("lag max %ss", num(float64(res.Run.LagMax)))
			}
			d.Why = "not compared: run fell behind (" + why + ")"
		case m.Kind == Timing && !b.KeptUp:
			d.Got, d.Outcome = l.Value, NotCompared
			d.Why = "not compared: the baseline's run fell behind; capture it again on a machine that keeps up"
		case never:
			d.Outcome = Regression
			d.Why = "the run has no value: it never came (a deploy that did not finish)"
		default:
			c.Compared++
			ok, out, why := m.Rule.judge(m.Value, l.Value)
			if ok {
				continue
			}
			d.Got, d.Outcome, d.Why = l.Value, out, why
		}
		c.Diffs = append(c.Diffs, d)
	}
	for _, l := range order {
		if _, keep := specFor(l); keep && !inBaseline[l.Path] && !math.IsInf(l.Value, 0) {
			c.New = append(c.New, l.Path)
		}
	}
	return c
}

// label names a scenario and variant in a sentence.
func label(scenarioName, variant string) string {
	if variant == "" {
		return fmt.Sprintf("%q", scenarioName)
	}
	return fmt.Sprintf("%q variant %q", scenarioName, variant)
}
