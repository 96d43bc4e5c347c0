package flow_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
)

// retryRun drives Backoff.Retry on a fake clock: try fails until fails
// calls have been made (then it succeeds, or it returns last), and the
// returned delays are the waits before each call, read from the timers
// Retry armed.
func retryRun(t *testing.T, b flow.Backoff, seed uint64, fails int, last error) (delays []time.Duration, err error) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	calls := make(chan struct{}, fails+1)
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- b.Retry(context.Background(), clk, rand.New(rand.NewPCG(seed, 0)), func(context.Context) error {
			calls <- struct{}{}
			if n++; n <= fails {
				return errors.New("connection refused")
			}
			return last
		})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for n := 0; ; n++ {
		// The wait before call n must be armed within its window: a
		// delay past Ceiling(n) never becomes due here.
		if err := clk.WaitDue(ctx, b.Ceiling(n)); err != nil {
			t.Fatalf("before call %d: %v", n, err)
		}
		at, _ := clk.NextDeadline()
		delays = append(delays, at.Sub(clk.Now()))
		clk.Set(at)
		select {
		case <-calls:
		case <-ctx.Done():
			t.Fatalf("call %d not made after its wait", n)
		}
		if n == fails {
			return delays, <-done
		}
	}
}

// TestRetryBackoffGrowsWithBoundedJitter: the waits between failed tries
// are drawn from windows that double up to the cap, each within its
// window, and they are jittered: neither all the same fraction of their
// window nor the same from one seed to the next.
func TestRetryBackoffGrowsWithBoundedJitter(t *testing.T) {
	b := flow.Backoff{Base: 100 * time.Millisecond, Cap: 2 * time.Second}
	delays, err := retryRun(t, b, 1, 9, nil)
	if err != nil {
		t.Fatalf("Retry = %v, want nil after the tenth call succeeded", err)
	}
	if len(delays) != 10 {
		t.Fatalf("%d waits, want 10", len(delays))
	}
	var early, late time.Duration
	for n, d := range delays {
		if d < 0 || d > b.Ceiling(n) {
			t.Errorf("wait %d = %v, want within [0, %v]", n, d, b.Ceiling(n))
		}
		if n < 3 {
			early += d
		} else if n >= 7 {
			late += d
		}
	}
	// Windows of 0.1+0.2+0.4 s against three of 2 s: the later waits are
	// longer whatever the draw, unless the backoff does not grow.
	if late <= early {
		t.Errorf("waits %v: the last three (%v) not longer than the first three (%v); want the backoff to grow", delays, late, early)
	}
	again, _ := retryRun(t, b, 2, 9, nil)
	same := 0
	for n := range delays {
		if delays[n] == again[n] {
			same++
		}
	}
	if same == len(delays) {
		t.Errorf("seeds 1 and 2 drew the same waits %v: no jitter", delays)
	}
}

// TestRetryStopsOnPermanent: a permanent error ends the retries at once
// and is returned; ctx's end does too.
func TestRetryStopsOnPermanent(t *testing.T) {
	closed := flow.Permanent(errors.New("session closed"))
	_, err := retryRun(t, flow.Backoff{Base: 10 * time.Millisecond, Cap: time.Second}, 1, 2, closed)
	if !errors.Is(err, flow.ErrPermanent) {
		t.Fatalf("Retry = %v, want the permanent error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = flow.DefaultBackoff.Retry(ctx, clock.NewFake(time.Unix(0, 0)), rand.New(rand.NewPCG(1, 1)), func(context.Context) error {
		t.Error("try called after ctx ended")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry on an ended ctx = %v, want context.Canceled", err)
	}
}
