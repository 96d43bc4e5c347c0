package report

import (
	"math"
	"slices"
)

// A measured band (a baseline captured from several runs of one scenario)
// is sized from the spread of the runs. With m the median of the runs'
// values (the baseline's value), lo and hi the lowest and highest, n the
// number of runs and s and k_min the metric's scale:
//
//	r      = max((hi + s) / (m + s), (m + s) / (lo + s))
//	factor = max(k_min, r^p), p = max(2, 1 + 15/n)
//	abs    = s × factor
//
// r is how far the runs strayed from their median, as a ratio; counted
// with s added, a count of 1 against 3 is not a 3× change. The band then
// holds every run of the measurement (it is the band of the values offset
// by s, widened) with room beyond the furthest: p times as far from the
// median as that run, in ratio. Few runs underestimate the spread, so p
// grows as n falls: 4 at 5 runs, 2.5 at 10, 2 from 15. TestBandFalseAlarms
// measures what that buys: from 5 runs or more, a further run of the same
// noise falls outside the band about once in 200 or less, whether the runs
// agree within ±20% or differ 2× (a herd's rejections on a shared
// machine); docs/REPORTS.md has the table.

// band is the band a metric of scale sc gets from n runs with median m,
// lowest value lo and highest hi; with fewer than two runs nothing was
// measured and it is the scale's default.
func (sc *scale) band(m, lo, hi float64, n int) (factor, abs float64) {
	if n < 2 {
		return sc.Factor, sc.Abs
	}
	s := sc.Slack
	r := 1.0
	if m+s > 0 && lo+s > 0 {
		r = max(r, (hi+s)/(m+s), (m+s)/(lo+s))
	}
	p := max(2, 1+15/float64(n))
	factor = ceilDigits(max(sc.MinFactor, math.Pow(r, p)), 3)
	return factor, ceilDigits(s*factor, 3)
}

// median of vals (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// ceilDigits rounds x > 0 up to d significant digits: a band is written
// short enough to read, and never narrower than the formula's.
func ceilDigits(x float64, d int) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, float64(d-1)-math.Floor(math.Log10(x)))
	// The margin keeps 1.25 from becoming 1.26 by a rounding error in x×p.
	return math.Ceil(x*p*(1-1e-12)) / p
}
