package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// ErrNoBaseline is returned (wrapped, with the path) by LoadBaseline when
// the file does not exist: the caller decides whether that fails a check or
// means "capture one".
var ErrNoBaseline = errors.New("no baseline")

// Baseline is the numbers that later runs of a scenario are compared with,
// each with the rule that compares it: one run's, or the medians of
// several runs with bands sized from their spread. It is stored as JSON at
// BaselinePath, one metric a line, for a person to read and edit.
type Baseline struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant,omitempty"`
	// Seed, FleetCount and KeptUp describe the runs the baseline was
	// captured from: a run at another fleet size is not compared, and a
	// run that fell behind gives no timings to compare with. The timings
	// are measured from the runs that kept up; KeptUp is false, and the
	// timings are never compared, unless at least half of the runs did.
	Seed       uint64 `json:"seed"`
	FleetCount int    `json:"fleet_count"`
	// Gateways and GatewaySize are the runs' fleet.gateways and
	// fleet.gateway_size (0, left out of the file: a session per worker):
	// counts behind gateways say nothing about a fleet of sessions, so a
	// run of another gateway layout is not compared either.
	Gateways    int       `json:"gateways,omitempty"`
	GatewaySize int       `json:"gateway_size,omitempty"`
	KeptUp      bool      `json:"kept_up"`
	Captured    time.Time `json:"captured"`
	// Err is the captured run's error: a baseline of a run that did not
	// complete compares nothing.
	Err string `json:"error,omitempty"`
	// Help explains the rules to whoever edits the file; it is written by
	// Capture and ignored when comparing.
	Help    []string `json:"help,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// Metric is one number of a baseline: its expression path (the name an
// expect: line uses), its value, its rule and, when the value was measured
// over several runs, their spread.
type Metric struct {
	Name  string  `json:"metric"`
	Value float64 `json:"value"`
	Rule
	Spread
}

// Spread is what the runs a metric was measured from saw: how many, and
// the lowest and highest value (Value is their median). Runs 0: not
// measured (captured from one run, or written by hand), and a band is the
// default of its kind of metric.
type Spread struct {
	Runs int     `json:"runs,omitempty"`
	Min  float64 `json:"min,omitempty"`
	Max  float64 `json:"max,omitempty"`
}

// help is the text Capture puts at the top of every baseline file, with
// helpRuns after the rules.
var help = []string{
	"Each metric is compared with the run's value by its rule. Edit a rule or a value, or delete a metric's line to stop comparing it.",
	"rule exact: the run must have this value.",
	"rule band: from value/factor - abs to value*factor + abs, so a fall to a tenth fails as a rise to tenfold does (abs: slack for small counts and zeros).",
	"rule timing (seconds): the same band; not compared when the run or this baseline's run fell behind its schedule.",
	"better lower or higher: a change that way beyond the rule is reported as better, not as a regression.",
	"A run at another fleet size (fleet_count) or gateway layout (gateways, gateway_size) is not compared. docs/REPORTS.md has the details.",
}

// helpRuns says where the bands of a baseline captured from n runs came
// from: the formula and each kind's s and k_min, or each kind's default.
func helpRuns(n int) string {
	var kinds []string
	for _, sc := range scales {
		if n > 1 {
			kinds = append(kinds, fmt.Sprintf("%s %s and %s", sc.Name, num(sc.Slack), num(sc.MinFactor)))
		} else {
			r := Rule{Kind: Band, Factor: sc.Factor, Abs: sc.Abs}
			if sc == &timings {
				r.Kind = Timing
			}
			kinds = append(kinds, fmt.Sprintf("%s %s", sc.Name, r))
		}
	}
	if n > 1 {
		return fmt.Sprintf("Measured from %d runs: value is their median; runs, min and max their spread. "+
			"factor = max(k_min, r^p) with r = max((max+s)/(value+s), (value+s)/(min+s)) and p = max(2.5, 1+25/runs); abs = s*factor. "+
			"s and k_min by kind of metric: %s.", n, strings.Join(kinds, ", "))
	}
	return "Captured from one run: the bands were not measured; each is the default of its kind of metric (" + strings.Join(kinds, ", ") +
		"). sim check --update-baseline --repeat 10 measures them."
}

// Capture makes a baseline of reps, runs of one scenario variant at one
// fleet size and seed: every number of the Result that a baseline keeps
// (docs/REPORTS.md lists the ones it leaves out, and why), present in
// every run, each with its rule. From one run the values are that run's
// and the bands their kind's defaults; from several, each value is the
// median of the runs and its band is sized from their spread (band.go),
// which the metric's line records.
func Capture(reps ...*result.Report) (Baseline, error) {
	b, _, err := captureRuns(reps)
	return b, err
}

// measured is one metric over the runs of a capture.
type measured struct {
	leaf leaf // as the first run has it
	spec spec
	vals []float64 // a value per run
}

// metric is m as a baseline line compared by s.
func (m measured) metric(s spec) Metric {
	v := median(m.vals)
	out := Metric{Name: m.leaf.Path, Value: v, Rule: Rule{Kind: s.Kind, Better: s.Better}}
	n := len(m.vals)
	lo, hi := slices.Min(m.vals), slices.Max(m.vals)
	if s.Scale != nil {
		out.Factor, out.Abs = s.Scale.band(v, lo, hi, n)
	}
	if n > 1 {
		out.Spread = Spread{Runs: n, Min: lo, Max: hi}
	}
	return out
}

func captureRuns(reps []*result.Report) (Baseline, []measured, error) {
	if len(reps) == 0 {
		return Baseline{}, nil, errors.New("a baseline needs at least one run")
	}
	r0 := reps[0]
	for i, r := range reps[1:] {
		if r.Scenario != r0.Scenario || r.Variant != r0.Variant || r.Result.Fleet.Count != r0.Result.Fleet.Count || r.Result.Run.Seed != r0.Result.Run.Seed ||
			r.Result.Fleet.Gateways != r0.Result.Fleet.Gateways || r.Result.Fleet.GatewaySize != r0.Result.Fleet.GatewaySize {
			return Baseline{}, nil, fmt.Errorf("run %d of %d is %s at %d workers, seed %d; run 1 is %s at %d workers, seed %d: a baseline is measured from repeats of one run",
				i+2, len(reps), label(r.Scenario, r.Variant), r.Result.Fleet.Count, r.Result.Run.Seed,
				label(r0.Scenario, r0.Variant), r0.Result.Fleet.Count, r0.Result.Run.Seed)
		}
	}
	b := Baseline{
		Scenario:   r0.Scenario,
		Variant:    r0.Variant,
		Seed:       r0.Result.Run.Seed,
		FleetCount: r0.Result.Fleet.Count,
		Gateways:   r0.Result.Fleet.Gateways, GatewaySize: r0.Result.Fleet.GatewaySize,
		Captured: r0.Started,
		Help:     slices.Insert(slices.Clone(help), 4, helpRuns(len(reps))),
		Metrics:  []Metric{},
	}
	keptUp := 0
	for i, r := range reps {
		if r.Result.Run.KeptUp {
			keptUp++
		}
		if r.Err != "" && b.Err == "" {
			b.Err = r.Err
			if len(reps) > 1 {
				b.Err = fmt.Sprintf("run %d of %d: %s", i+1, len(reps), r.Err)
			}
		}
	}
	b.KeptUp = 2*keptUp >= len(reps)
	// A metric some run lacks (a map key no worker ended at) would be
	// absent from a later run as often: only what every run has is kept.
	// A time that never came (result.Never: a deploy that did not finish)
	// is no value to compare with, and is left out alike.
	// A timing is measured from the runs that kept up, when enough did: a
	// run that fell behind distorts it, and a later run that does is not
	// compared on it either.
	byPath := make([]map[string]float64, len(reps))
	for i, r := range reps {
		byPath[i] = map[string]float64{}
		for _, l := range leaves(&r.Result) {
			byPath[i][l.Path] = l.Value
		}
	}
	var ms []measured
	for _, l := range leaves(&r0.Result) {
		s, keep := specFor(l)
		if !keep {
			continue
		}
		m := measured{leaf: l, spec: s, vals: make([]float64, 0, len(reps))}
		complete := true
		for i, vs := range byPath {
			v, ok := vs[l.Path]
			if !ok || math.IsInf(v, 0) {
				complete = false
				break
			}
			if l.Timing && b.KeptUp && !reps[i].Result.Run.KeptUp {
				continue
			}
			m.vals = append(m.vals, v)
		}
		if !complete {
			continue
		}
		ms = append(ms, m)
		b.Metrics = append(b.Metrics, m.metric(s))
	}
	return b, ms, nil
}

// Recapture makes a baseline of reps (as Capture) that keeps old's edits:
// the metrics old has (a line a user deleted stays deleted), each with its
// better direction, and exact where the user made it exact (or a band
// where the user made an exact metric a band). Values and bands come from
// reps: a band is measured, not kept. A metric of old that the runs lack
// is dropped, as is one a baseline no longer keeps (an input echoed
// back). An old baseline of another scenario, variant, fleet size or
// gateway layout is not an edit of this one: Recapture then returns
// Capture(reps...).
func Recapture(old Baseline, reps ...*result.Report) (Baseline, error) {
	b, ms, err := captureRuns(reps)
	if err != nil || old.Scenario != b.Scenario || old.Variant != b.Variant || old.FleetCount != b.FleetCount ||
		old.Gateways != b.Gateways || old.GatewaySize != b.GatewaySize || len(old.Metrics) == 0 {
		return b, err
	}
	now := make(map[string]measured, len(ms))
	for _, m := range ms {
		now[m.leaf.Path] = m
	}
	b.Metrics = []Metric{}
	for _, om := range old.Metrics {
		m, ok := now[om.Name]
		if !ok {
			continue
		}
		s := m.spec
		s.Better = om.Better
		switch {
		case om.Kind == Exact:
			s.Kind, s.Scale = Exact, nil
		case s.Scale == nil && m.leaf.Timing:
			s.Kind, s.Scale = Timing, &timings
		case s.Scale == nil:
			s.Kind, s.Scale = Band, &counts
		}
		b.Metrics = append(b.Metrics, m.metric(s))
	}
	return b, nil
}

// UpdateBaseline records reps, repeats of one run, as the baseline at path:
// Recapture over the file there if it is a baseline (one written before
// bands replaced the tolerance rule included), Capture otherwise.
func UpdateBaseline(path string, reps ...*result.Report) error {
	old, err := loadBaseline(path, true)
	if err != nil && !errors.Is(err, ErrNoBaseline) {
		return fmt.Errorf("%w (fix or delete the file to capture it afresh)", err)
	}
	b, err := Recapture(old, reps...)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return SaveBaseline(path, b)
}

// Warnings lists what a reviewer of b should look at before committing
// it: captured runs that fell behind (their timings are never compared),
// an exact metric whose runs disagreed (the timeline does not decide it
// after all, or something is flaky), and a measured band so wide that a
// tenfold change stays inside it.
func (b Baseline) Warnings() []string {
	var out []string
	if !b.KeptUp && b.Err == "" {
		out = append(out, "more than half of the captured runs fell behind their schedule, so this baseline's timings are never compared: capture it again on a machine that keeps up")
	}
	for _, m := range b.Metrics {
		if m.Runs < 2 {
			continue
		}
		spread := fmt.Sprintf("its %d runs ranged from %s to %s", m.Runs, num(m.Min), num(m.Max))
		switch {
		case m.Kind == Exact && m.Min != m.Max:
			out = append(out, fmt.Sprintf("%s: rule exact, but %s: find out why, or make it a band", m.Name, spread))
		case m.Kind != Exact && m.Factor > 10:
			out = append(out, fmt.Sprintf("%s: %s, so its band is %s: it cannot catch a tenfold change; steady the scenario or measure more runs", m.Name, spread, m.Rule))
		}
	}
	return out
}

// BaselinePath is where the baseline of a scenario (and sweep variant) is
// stored under dir: dir/<scenario>.json or dir/<scenario>--<variant>.json,
// made file-safe by FileName.
func BaselinePath(dir, scenarioName, variant string) string {
	return filepath.Join(dir, FileName(scenarioName, variant)+".json")
}
