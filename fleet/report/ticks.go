package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// ticks marks a chart's axis at a round step (1, 2, 2.5 or 5 times a power
// of ten), each label with the decimals the step needs and no more: 750,
// not 750.00; 0.25 where the step is a quarter. On an axis of whole counts
// (messages, workers, a relay limit) the step is whole too, so no tick
// falls between two counts. gonum/plot's DefaultTicks picks its decimals
// from the step's mantissa instead, and labels 250, 500, 750 as 250.00.
type ticks struct {
	// n is about how many labelled ticks the axis gets.
	n int
	// whole keeps the step a whole number.
	whole bool
}

// Ticks implements plot.Ticker.
func (t ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo, 0)}}
	}
	step, mantissa, exp := niceStep((hi-lo)/float64(max(t.n, 1)), t.whole)
	dec := max(0, -exp)
	if mantissa == 2.5 {
		dec = max(0, 1-exp)
	}
	var out []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for i := first; i*step <= hi+step*1e-9; i++ {
		out = append(out, plot.Tick{Value: i * step, Label: tickLabel(i*step, dec)})
	}
	// Unlabelled ticks between the labelled ones, where they fall on a
	// round value too (and on a whole one on a whole axis).
	minor := step / 5
	if mantissa == 2 {
		minor = step / 4
	}
	if t.whole && minor != math.Trunc(minor) {
		minor = step / 2
	}
	if t.whole && minor != math.Trunc(minor) {
		return out
	}
	k := math.Round(step / minor)
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+minor*1e-9; i++ {
		if math.Mod(i, k) != 0 {
			out = append(out, plot.Tick{Value: i * minor})
		}
	}
	return out
}

// niceStep is the round step nearest raw (by ratio): mantissa × 10^exp,
// the mantissa 1, 2, 2.5 or 5; at least 1, and never 2.5, when whole.
func niceStep(raw float64, whole bool) (step, mantissa float64, exp int) {
	if whole && raw <= 1 {
		return 1, 1, 0
	}
	e0 := int(math.Floor(math.Log10(raw)))
	best := math.Inf(1)
	for e := e0; e <= e0+1; e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if m == 2.5 && whole && e < 1 {
				continue
			}
			if d := math.Abs(math.Log(m * math.Pow10(e) / raw)); d < best {
				best, step, mantissa, exp = d, m*math.Pow10(e), m, e
			}
		}
	}
	return step, mantissa, exp
}

// tickLabel is v with dec decimals; whole values have thousands
// separators, as the report's other numbers do.
func tickLabel(v float64, dec int) string {
	if v == 0 {
		v = 0 // no "-0"
	}
	if dec == 0 && math.Abs(v) < 1e15 {
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}
