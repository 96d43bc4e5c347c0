package flow_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
)

func TestBackoffCeiling(t *testing.T) {
	b := flow.Backoff{Base: 100 * time.Millisecond, Cap: 10 * time.Second}
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{-1, 100 * time.Millisecond},
		{0, 100 * time.Millisecond},
		{1, 200 * time.Millisecond},
		{6, 6400 * time.Millisecond},
		{7, 10 * time.Second}, // 12.8 s capped
		{62, 10 * time.Second},
		{63, 10 * time.Second},
		{1 << 30, 10 * time.Second},
		{math.MaxInt, 10 * time.Second},
	}
	for _, tc := range tests {
		if got := b.Ceiling(tc.attempt); got != tc.want {
			t.Errorf("Ceiling(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
	huge := flow.Backoff{Base: time.Nanosecond, Cap: math.MaxInt64}
	if got := huge.Ceiling(100); got != math.MaxInt64 {
		t.Errorf("uncapped Ceiling(100) = %v, want MaxInt64 (no wrap)", got)
	}
	huge.Delay(100, rand.New(rand.NewPCG(1, 1))) // must not panic
}

func TestBackoffFullJitterSpreadsOverWindow(t *testing.T) {
	b := flow.Backoff{Base: 100 * time.Millisecond, Cap: 10 * time.Second}
	r := rand.New(rand.NewPCG(7, 7))
	const n = 20000
	var sum time.Duration
	var low, high int
	ceil := b.Ceiling(4) // 1.6 s
	for range n {
		d := b.Delay(4, r)
		if d < 0 || d > ceil {
			t.Fatalf("Delay = %v outside [0, %v]", d, ceil)
		}
		sum += d
		if d < ceil/10 {
			low++
		}
		if d > ceil*9/10 {
			high++
		}
	}
	mean := sum / n
	// Uniform on [0, ceil]: mean ceil/2, 10% in each tail.
	if mean < ceil*45/100 || mean > ceil*55/100 {
		t.Errorf("mean delay %v, want about %v (full jitter)", mean, ceil/2)
	}
	if low < n/20 || high < n/20 {
		t.Errorf("tails: %d below 10%%, %d above 90%% of %d; want about %d each", low, high, n, n/10)
	}
}

func TestBackoffIsRepeatableFromSeed(t *testing.T) {
	b := flow.DefaultBackoff
	r1, r2 := rand.New(rand.NewPCG(42, 0)), rand.New(rand.NewPCG(42, 0))
	for i := range 100 {
		if d1, d2 := b.Delay(i%10, r1), b.Delay(i%10, r2); d1 != d2 {
			t.Fatalf("attempt %d: %v != %v from the same seed", i, d1, d2)
		}
	}
}
