package mailbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// overload replays a 2× overload experiment inside a synctest bubble (fake
// time, exact): a producer offers one message every 500 µs for 4 s — twice
// what an actor that spends 1 ms per message can take — to a mailbox of the
// given policy. Keys, if any, cycle through nkeys entities.
func overload(t *testing.T, p mailbox.Policy, capacity, nkeys int) mailbox.Stats {
	t.Helper()
	var s mailbox.Stats
	synctest.Test(t, func(t *testing.T) {
		const (
			interval = 500 * time.Microsecond
			service  = time.Millisecond
			run      = 4 * time.Second
		)
		m, err := mailbox.New[int](mailbox.Options{Capacity: capacity, Policy: p, BlockTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { // the actor
			defer close(done)
			for {
				if _, err := m.Take(context.Background()); err != nil {
					return
				}
				time.Sleep(service)
			}
		}()
		keys := make([]string, nkeys)
		for i := range keys {
			keys[i] = string(rune('A'+i%26)) + string(rune('a'+i/26))
		}
		start := time.Now()
		for i := 0; time.Since(start) < run; i++ {
			if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
				time.Sleep(wait)
			}
			key := ""
			if nkeys > 0 {
				key = keys[i%nkeys]
			}
			err := m.OfferKey(context.Background(), key, i)
			if err != nil && !errors.Is(err, mailbox.ErrFull) && !errors.Is(err, mailbox.ErrDropped) {
				t.Fatalf("offer %d: %v", i, err)
			}
		}
		m.Close()
		<-done
		s = m.Stats()
	})
	t.Logf("%-12s offered %5d taken %5d dropped %5d rejected %5d max depth %5d wait p50 %v p99 %v max %v",
		p, s.Offered, s.Taken, s.Dropped(), s.Rejected(), s.MaxDepth,
		s.Wait.Quantile(0.5).Round(time.Millisecond), s.Wait.Quantile(0.99).Round(time.Millisecond), s.Wait.Max.Round(time.Millisecond))
	checkIdentity(t, s)
	if s.Depth != 0 {
		t.Fatalf("%d messages left after the consumer drained a closed box", s.Depth)
	}
	return s
}

// TestOverload asserts what a user would see in the sweep's table: every
// bounded policy holds the worst wait near capacity × service time (200 ms);
// unbounded lets it grow with the length of the overload.
func TestOverload(t *testing.T) {
	const capacity = 200
	bound := time.Duration(capacity) * time.Millisecond // capacity × service time
	tests := []struct {
		policy mailbox.Policy
		keys   int
		check  func(t *testing.T, s mailbox.Stats)
	}{
		{mailbox.Reject, 0, func(t *testing.T, s mailbox.Stats) {
			if s.RejectedFull < 3500 {
				t.Errorf("rejected %d, want about half of %d offers", s.RejectedFull, s.Offered)
			}
		}},
		{mailbox.DropNewest, 0, func(t *testing.T, s mailbox.Stats) {
			if s.DroppedNewest < 3500 {
				t.Errorf("dropped %d, want about half of %d offers", s.DroppedNewest, s.Offered)
			}
		}},
		{mailbox.DropOldest, 0, func(t *testing.T, s mailbox.Stats) {
			// Survivors are the freshest: the queue moves two slots per ms
			// (one taken, one evicted), so a message waits about half the bound.
			if p50 := s.Wait.Quantile(0.5); p50 > bound*6/10 {
				t.Errorf("p50 wait %v, want about half of %v", p50, bound)
			}
		}},
		{mailbox.Block, 0, func(t *testing.T, s mailbox.Stats) {
			// The overload moves to the producer: it gets to offer only about
			// as fast as the actor takes.
			if s.Offered > 4500 || s.Rejected() != 0 || s.Dropped() != 0 {
				t.Errorf("offered %d rejected %d dropped %d, want ~4,200 offered and none lost", s.Offered, s.Rejected(), s.Dropped())
			}
		}},
		{mailbox.Coalesce, 50, func(t *testing.T, s mailbox.Stats) {
			// 50 entities: the box never holds more than one version of each.
			if s.MaxDepth > 50 || s.DroppedCoalesced < 3500 {
				t.Errorf("max depth %d coalesced %d, want <= 50 and about half", s.MaxDepth, s.DroppedCoalesced)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			s := overload(t, tc.policy, capacity, tc.keys)
			if s.MaxDepth > capacity {
				t.Errorf("max depth %d > capacity %d", s.MaxDepth, capacity)
			}
			if s.Wait.Max > bound+bound/10 {
				t.Errorf("max wait %v, want within 10%% of capacity × service time = %v", s.Wait.Max, bound)
			}
			tc.check(t, s)
		})
	}
	t.Run("unbounded", func(t *testing.T) {
		s := overload(t, mailbox.Unbounded, capacity, 0)
		if s.Wait.Max < 10*bound || s.MaxDepth < 3000 {
			t.Errorf("max wait %v, max depth %d: want the backlog to grow (wait > %v, depth > 3000)", s.Wait.Max, s.MaxDepth, 10*bound)
		}
		if s.Dropped()+s.Rejected() != 0 {
			t.Errorf("unbounded lost %d", s.Dropped()+s.Rejected())
		}
	})
}
