package report

import (
	"fmt"
	"math"
	"strconv"
)

// RuleKind names how a baseline compares a metric.
type RuleKind string

const (
	// Exact: the run must have the baseline's value. For what the
	// scenario's timeline decides (lost, workers at a version, dead
	// letters).
	Exact RuleKind = "exact"
	// Band: the run's value must lie from baseline / Factor − Abs to
	// baseline × Factor + Abs. For numbers that load decides
	// (backpressure, a mailbox's maximum depth): a band is symmetric in
	// ratio, so a fall to a tenth fails exactly as a rise to tenfold does;
	// Abs is the slack that small counts and zeros need.
	Band RuleKind = "band"
	// Timing: a Band in seconds, for result.Seconds values; not
	// compared when either run fell behind its schedule.
	Timing RuleKind = "timing"
)

// tolerance is the rule Band replaced: ±rel × value or ±abs, whose lower
// edge clamped to 0 at rel >= 1, so a count could fall to nothing and
// pass. A file that still has it is refused with the way out.
const tolerance RuleKind = "tolerance"

// Direction is which way a metric improves.
type Direction string

const (
	// None: neither way is better; any change beyond the rule is a
	// regression.
	None Direction = ""
	// Lower: a value below what the rule allows is reported as better,
	// not as a regression (lost going down).
	Lower Direction = "lower"
	// Higher: a value above what the rule allows is better.
	Higher Direction = "higher"
)

// Rule is how one metric of a baseline is compared. It is stored beside the
// metric's value in the baseline file, where a user can edit it.
type Rule struct {
	Kind RuleKind `json:"rule"`
	// Factor is a Band's or a Timing's ratio (2: from half to twice the
	// baseline, before Abs).
	Factor float64 `json:"factor,omitempty"`
	// Abs widens a Band or a Timing on both sides, in the metric's unit
	// (seconds for a Timing).
	Abs float64 `json:"abs,omitempty"`
	// Better is the direction in which a change is an improvement.
	Better Direction `json:"better,omitempty"`
}

// String describes r as the Markdown and JUnit outputs show it:
// "exact", "3× ± 5", "2× ± 0.25s"; with ", lower is better".
func (r Rule) String() string {
	var s string
	switch r.Kind {
	case Exact:
		s = "exact"
	case Band:
		s = fmt.Sprintf("%s× ± %s", num(r.Factor), num(r.Abs))
	case Timing:
		s = fmt.Sprintf("%s× ± %ss", num(r.Factor), num(r.Abs))
	default:
		s = string(r.Kind)
	}
	if r.Better != None {
		s += ", " + string(r.Better) + " is better"
	}
	return s
}

// Validate reports what is wrong with r, naming the valid choices.
func (r Rule) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"abs", r.Abs}, {"factor", r.Factor}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("%s %v: must be a number >= 0", f.name, f.v)
		}
	}
	switch r.Kind {
	case Exact:
		if r.Abs != 0 || r.Factor != 0 {
			return fmt.Errorf(`rule "exact" takes no factor or abs (use "band" for a margin)`)
		}
	case Band, Timing:
		if r.Factor < 1 {
			return fmt.Errorf(`rule %q needs factor >= 1 (2: from half to twice the value, before abs), got %v`, r.Kind, r.Factor)
		}
	case tolerance:
		return fmt.Errorf(`rule "tolerance" was replaced by "band" (from value/factor - abs to value*factor + abs)`)
	default:
		return fmt.Errorf("rule %q unknown; valid: exact, band, timing", r.Kind)
	}
	switch r.Better {
	case None, Lower, Higher:
	default:
		return fmt.Errorf(`better %q unknown; valid: "lower", "higher", or leave it out`, r.Better)
	}
	return nil
}

// bounds is the range of values r accepts around base.
func (r Rule) bounds(base float64) (lo, hi float64) {
	switch r.Kind {
	case Band, Timing:
		if base < 0 {
			// A ratio band about a negative value: the factor widens
			// it downwards too.
			lo, hi = base*r.Factor-r.Abs, base/r.Factor+r.Abs
		} else {
			lo, hi = base/r.Factor-r.Abs, base*r.Factor+r.Abs
		}
	default:
		return base, base
	}
	// Counts and times are never negative: say "0 to 20", not "-10 to 20".
	if base >= 0 && lo < 0 {
		lo = 0
	}
	return lo, hi
}

// judge compares got with base under r: ok when within the rule; else
// Better when the change is in r's better direction, or Regression; why
// says which and by how much.
func (r Rule) judge(base, got float64) (ok bool, out Outcome, why string) {
	lo, hi := r.bounds(base)
	if got >= lo && got <= hi {
		return true, "", ""
	}
	unit := ""
	if r.Kind == Timing {
		unit = "s"
	}
	plain := r
	plain.Better = None
	allowed := "must equal " + num(base) + unit
	if r.Kind != Exact {
		allowed = fmt.Sprintf("allowed %s%s to %s%s (%s of %s%s)", num(lo), unit, num(hi), unit, plain, num(base), unit)
	}
	moved := "rose"
	if got < base {
		moved = "fell"
	}
	change := fmt.Sprintf("%s from %s%s to %s%s", moved, num(base), unit, num(got), unit)
	if (r.Better == Lower && got < lo) || (r.Better == Higher && got > hi) {
		return false, Better, fmt.Sprintf("%s, %s: %s is better (capture a new baseline to keep the gain)", change, allowed, r.Better)
	}
	if r.Better != None {
		return false, Regression, fmt.Sprintf("%s, %s; %s is better", change, allowed, r.Better)
	}
	return false, Regression, fmt.Sprintf("%s, %s", change, allowed)
}

// num formats a metric's value: integers as integers, fractions with four
// significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
