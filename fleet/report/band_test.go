package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBandFalseAlarms measures what a measured band buys, on simulated
// noise: a count whose runs vary by a log-normal factor (σ 0.1: runs
// within about ±20%; σ 0.35: two runs often 2× apart, as a herd's
// rejections on a shared 2-core machine), plus the count's own Poisson
// spread. For each number of runs a baseline is measured many times; each
// is then compared with one further run of the same noise (a false alarm
// when it falls outside) and with that run ten times higher and ten times
// lower (a miss when it falls inside). The formula must keep false alarms
// rare, so that recapturing and checking again passes, and catch a
// tenfold change wherever the noise leaves room for it.
func TestBandFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(mu, sigma float64) float64 {
		lam := mu * math.Exp(sigma*rng.NormFloat64())
		// Poisson by its normal approximation: the counts here are large.
		return math.Max(0, math.Round(lam+math.Sqrt(lam)*rng.NormFloat64()))
	}
	const trials = 10000
	for _, n := range []int{5, 10, 20} {
		for _, sigma := range []float64{0.1, 0.2, 0.35} {
			for _, mu := range []float64{100, 10000} {
				var alarms, misses int
				ks := make([]float64, 0, trials)
				vals := make([]float64, n)
				for range trials {
					for i := range vals {
						vals[i] = draw(mu, sigma)
					}
					m, lo, hi := median(vals), vals[0], vals[0]
					for _, v := range vals {
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
					k, abs := counts.band(m, lo, hi, n)
					ks = append(ks, k)
					r := Rule{Kind: Band, Factor: k, Abs: abs}
					got := draw(mu, sigma)
					if ok, _, _ := r.judge(m, got); !ok {
						alarms++
					}
					for _, f := range []float64{10, 0.1} {
						if ok, _, _ := r.judge(m, got*f); ok {
							misses++
						}
					}
				}
				alarm := float64(alarms) / trials
				miss := float64(misses) / (2 * trials)
				t.Logf("runs %2d  σ %.2f  count %5g: false alarms %.2f%%, tenfold missed %.2f%%, factor median %s",
					n, sigma, mu, 100*alarm, 100*miss, num(quantile(ks, 0.5)))
				// About 1 in 200 at most: a baseline of 40 such noisy
				// metrics still passes its next run 4 times in 5 (more
				// often in practice: the noise of a run moves many of its
				// metrics together).
				if alarm > 0.006 {
					t.Errorf("runs %d, σ %g, count %g: %.2f%% false alarms, want at most 0.6%%", n, sigma, mu, 100*alarm)
				}
				// From 10 runs, a count whose runs stay within about ±40%
				// (σ 0.1 at 100, σ 0.2 at 10,000, where the count's own
				// spread is small) catches a tenfold change nearly always.
				// Noisier counts need wider bands, which miss some: the
				// log shows how many.
				if n >= 10 && (sigma <= 0.1 || (sigma <= 0.2 && mu >= 10000)) && miss > 0.01 {
					t.Errorf("runs %d, σ %g, count %g: %.2f%% of tenfold changes missed, want at most 1%%", n, sigma, mu, 100*miss)
				}
			}
		}
	}
}

func quantile(v []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[int(q*float64(len(s)-1))]
}
