package report

import "github.com/fleetsim/fleetsim/fleet/result"

// leaf is one number of a Result, named as the expectations name it
// (result.Walk).
type leaf = result.Leaf

// leaves lists every number of res in field order (map keys sorted), named
// by the expr tags: the names a user writes in expect: and reads in a
// baseline file.
func leaves(res *result.Result) []leaf {
	var out []leaf
	result.Walk(res, func(l leaf) { out = append(out, l) })
	return out
}

// A scale is a kind of metric's noise: the band a metric of it gets when
// its noise was not measured (a baseline captured from one run), and the
// floors of a band measured from several runs (band.go). docs/REPORTS.md
// explains the choice.
type scale struct {
	Name string
	// Factor and Abs are the default band.
	Factor, Abs float64
	// Slack is the absolute noise a measured band always allows, in the
	// metric's unit: a count's ±few, a timer's resolution. It keeps small
	// counts from reading as large ratios (1 against 3 is not a 3×
	// change); a measured band's abs is Slack × its factor.
	Slack float64
	// MinFactor is the narrowest measured band: runs that happened to
	// agree do not make a band of nothing.
	MinFactor float64
}

var (
	// Counts that load decides: the order of events decides how many asks
	// meet a full mailbox. Unmeasured, 3× either way: a scenario of one's
	// own may race (a herd's rejections once differed 2.5× between two
	// runs), while a mechanism switched off (an unbounded mailbox, a
	// static limit, append instead of overwrite) moves them tenfold or
	// more, or to nothing. Measured, the floor is narrow: on the virtual
	// clock a shipped scenario's counts are the same in every run.
	counts = scale{Name: "count", Factor: 3, Abs: 5, Slack: 3, MinFactor: 1.1}
	// Small numbers (AIMD limits, attempts): a step of 1 is a large ratio.
	smalls = scale{Name: "small number", Factor: 2, Abs: 2, Slack: 1, MinFactor: 1.1}
	// Ratios in [0, 1].
	ratios = scale{Name: "ratio", Factor: 1.25, Abs: 0.05, Slack: 0.02, MinFactor: 1.05}
	// Simulated seconds. On the virtual clock a timing depends on the
	// machine not at all: the slack is what the wire's whole milliseconds
	// (sent_ms) and a few timers falling in another order could move.
	// Unmeasured, as wide as a count's band.
	timings = scale{Name: "seconds", Factor: 3, Abs: 0.5, Slack: 0.02, MinFactor: 1.1}
)

var scales = []*scale{&counts, &smalls, &ratios, &timings}

// spec is how Capture compares a metric: its rule's kind, the scale of a
// band or a timing, and its better direction.
type spec struct {
	Kind   RuleKind
	Scale  *scale // nil for Exact
	Better Direction
}

// rule is s's rule with the default band of its scale.
func (s spec) rule() Rule {
	r := Rule{Kind: s.Kind, Better: s.Better}
	if s.Scale != nil {
		r.Factor, r.Abs = s.Scale.Factor, s.Scale.Abs
	}
	return r
}

func exact(d Direction) spec    { return spec{Kind: Exact, Better: d} }
func count(d Direction) spec    { return spec{Kind: Band, Scale: &counts, Better: d} }
func smallNum(d Direction) spec { return spec{Kind: Band, Scale: &smalls, Better: d} }
func fraction(d Direction) spec { return spec{Kind: Band, Scale: &ratios, Better: d} }
func timing(d Direction) spec   { return spec{Kind: Timing, Scale: &timings, Better: d} }

// specOf is how Capture compares the registry's metric m (its rule:
// exact, or a band of its kind's scale); false when a baseline leaves it
// out.
func specOf(m result.Metric) (spec, bool) {
	better := Direction(m.Better)
	switch m.Keep {
	case result.Exact:
		return exact(better), true
	case result.Band:
		switch m.Kind {
		case result.Small:
			return smallNum(better), true
		case result.Ratio:
			return fraction(better), true
		case result.Timing:
			return timing(better), true
		}
		return count(better), true
	}
	return spec{}, false
}

// specFor is how Capture compares l; false when a baseline leaves it out.
// A number the registry lacks (its test fails on one) is kept as a count,
// or a timing.
func specFor(l leaf) (spec, bool) {
	m, ok := result.Lookup(l.Pattern)
	if !ok {
		if l.Timing {
			return timing(None), true
		}
		return count(None), true
	}
	return specOf(m)
}
