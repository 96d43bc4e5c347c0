package dist

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestParseAndSampleMeans(t *testing.T) {
	tests := []struct {
		in   string
		mean time.Duration
	}{
		{"5ms", 5 * time.Millisecond},
		{"constant(2ms)", 2 * time.Millisecond},
		{"uniform(1ms, 9ms)", 5 * time.Millisecond},
		{"exponential(4ms)", 4 * time.Millisecond},
		{"lognormal(5ms, 0.5)", time.Duration(5e6 * 1.1331)}, // median × e^(σ²/2)
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			d, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := Parse(d.String()); err != nil || back != d {
				t.Fatalf("String() %q does not parse back: %v %v", d.String(), back, err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			var sum time.Duration
			const n = 50000
			for range n {
				s := d.Sample(r)
				if s < 0 {
					t.Fatalf("negative sample %v", s)
				}
				sum += s
			}
			got := sum / n
			if diff := float64(got-tc.mean) / float64(tc.mean); diff > 0.03 || diff < -0.03 {
				t.Fatalf("sample mean %v, want %v ±3%%", got, tc.mean)
			}
			if avg := d.Average(); float64(avg-tc.mean)/float64(tc.mean) > 0.01 || float64(tc.mean-avg)/float64(tc.mean) > 0.01 {
				t.Fatalf("Average() = %v, want %v", avg, tc.mean)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "5", "-1ms", "uniform(5ms)", "uniform(9ms, 1ms)", "lognormal(5ms, x)", "gamma(1ms)", "uniform(1ms, 2ms"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
