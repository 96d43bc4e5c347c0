package mailbox_test

import (
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// TestSetCapacity changes a reject box's capacity under load: raising it
// takes more at once, lowering it below the depth drops nothing and refuses
// offers until the consumer has taken the box below the new bound, and the
// queue keeps its order across the ring's growth (head not at slot 0).
func TestSetCapacity(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 3})
	for i := range 3 {
		if err := m.Offer(bg, msg{n: i}); err != nil {
			t.Fatal(err)
		}
	}
	m.TryTake() // head moves to slot 1: the ring wraps when it grows
	m.Offer(bg, msg{n: 3})
	var full *mailbox.FullError
	if err := m.Offer(bg, msg{n: 99}); !errors.As(err, &full) || full.Capacity != 3 {
		t.Fatalf("offer to a full box of 3 = %v, want *FullError with capacity 3", err)
	}
	if err := m.SetCapacity(6); err != nil {
		t.Fatal(err)
	}
	for i := 4; i < 7; i++ {
		if err := m.Offer(bg, msg{n: i}); err != nil {
			t.Fatalf("offer %d after raising the capacity to 6: %v", i, err)
		}
	}
	if err := m.Offer(bg, msg{n: 99}); !errors.As(err, &full) || full.Capacity != 6 {
		t.Fatalf("offer to a full box of 6 = %v, want *FullError with capacity 6", err)
	}
	if s := m.Stats(); s.Capacity != 6 || m.Cap() != 6 || s.Depth != 6 {
		t.Fatalf("capacity %d (Cap %d), depth %d; want 6, 6, 6", s.Capacity, m.Cap(), s.Depth)
	}

	if err := m.SetCapacity(2); err != nil {
		t.Fatal(err)
	}
	// Six queued, capacity 2: nothing is dropped, offers are refused until
	// the depth is below 2.
	for depth := 6; depth >= 2; depth-- {
		if err := m.Offer(bg, msg{n: 99}); !errors.As(err, &full) {
			t.Fatalf("offer at depth %d, capacity 2 = %v, want *FullError", depth, err)
		}
		if depth > 2 {
			m.TryTake()
		}
	}
	if got := drain(m); !equal(got, []int{5, 6}) {
		t.Fatalf("left %v, want [5 6]", got)
	}
	if err := m.Offer(bg, msg{n: 7}); err != nil {
		t.Fatalf("offer to an empty box of 2: %v", err)
	}
	s := m.Stats()
	checkIdentity(t, s)
	if s.Dropped() != 0 || s.MaxDepth != 6 {
		t.Fatalf("dropped %d, max depth %d; want 0 and 6", s.Dropped(), s.MaxDepth)
	}
	for _, n := range []int{0, -1} {
		if err := m.SetCapacity(n); err == nil || m.Cap() != 2 {
			t.Fatalf("SetCapacity(%d) = %v, capacity now %d; want an error and 2", n, err, m.Cap())
		}
	}
}

// TestSetCapacityKeepsCoalescing: a coalescing box still replaces a queued
// key in place after its ring has grown.
func TestSetCapacityKeepsCoalescing(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 2, Policy: mailbox.Coalesce})
	m.OfferKey(bg, "a", msg{key: "a", n: 1})
	m.OfferKey(bg, "b", msg{key: "b", n: 2})
	m.TryTake() // "a" taken; "b" at slot 1
	m.OfferKey(bg, "c", msg{key: "c", n: 3})
	if err := m.SetCapacity(8); err != nil {
		t.Fatal(err)
	}
	m.OfferKey(bg, "b", msg{key: "b", n: 20})
	m.OfferKey(bg, "c", msg{key: "c", n: 30})
	m.OfferKey(bg, "d", msg{key: "d", n: 4})
	if got := drain(m); !equal(got, []int{20, 30, 4}) {
		t.Fatalf("took %v, want [20 30 4]: b and c replaced in place", got)
	}
	if s := m.Stats(); s.DroppedCoalesced != 2 {
		t.Fatalf("coalesced %d, want 2", s.DroppedCoalesced)
	}
}

// TestSetCapacityWakesBlocked: raising a Block box's capacity lets a
// blocked offer in at once, long before its timeout.
func TestSetCapacityWakesBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newBox(t, mailbox.Options{Capacity: 1, Policy: mailbox.Block, BlockTimeout: time.Minute})
		m.Offer(bg, msg{n: 1})
		errc := make(chan error)
		go func() { errc <- m.Offer(bg, msg{n: 2}) }()
		synctest.Wait() // blocked
		start := time.Now()
		if err := m.SetCapacity(2); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("blocked offer = %v after the capacity was raised", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("the offer got in %v after the raise, want at once", waited)
		}
		if got := drain(m); !equal(got, []int{1, 2}) {
			t.Fatalf("took %v, want [1 2]", got)
		}
	})
}

// TestSetCapacityUnbounded: an unbounded box never refuses; SetCapacity
// only reserves room.
func TestSetCapacityUnbounded(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 2, Policy: mailbox.Unbounded})
	if err := m.SetCapacity(16); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := m.Offer(bg, msg{n: i}); err != nil {
			t.Fatalf("unbounded offer %d: %v", i, err)
		}
	}
	if got := drain(m); len(got) != 40 || got[0] != 0 || got[39] != 39 {
		t.Fatalf("took %d messages (%v...), want 0..39 in order", len(got), got[:min(3, len(got))])
	}
}

// TestRingGrowsToCapacity: a coalescing box of 1,000 allocates a small ring
// and grows it as keys arrive (the head moved, so each growth unwraps the
// ring). It takes exactly its capacity, coalesces keys queued before a
// growth in place, refuses the 1,001st key, and gives everything back in
// order.
func TestRingGrowsToCapacity(t *testing.T) {
	const capacity = 1000
	m := newBox(t, mailbox.Options{Capacity: capacity, Policy: mailbox.Coalesce})
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	if err := m.OfferKey(bg, "first", msg{n: -1}); err != nil {
		t.Fatal(err)
	}
	m.TryTake()
	for i := range capacity {
		if err := m.OfferKey(bg, key(i), msg{n: i}); err != nil {
			t.Fatalf("offer %d of %d: %v", i, capacity, err)
		}
	}
	var full *mailbox.FullError
	if err := m.OfferKey(bg, "one-too-many", msg{n: 99}); !errors.As(err, &full) || full.Capacity != capacity {
		t.Fatalf("offer past the capacity = %v, want *FullError with capacity %d", err, capacity)
	}
	for _, i := range []int{0, 63, 64, 999} { // before and after growths
		if err := m.OfferKey(bg, key(i), msg{n: capacity + i}); err != nil {
			t.Fatalf("coalescing %s: %v", key(i), err)
		}
	}
	got := drain(m)
	if len(got) != capacity {
		t.Fatalf("took %d messages, want %d", len(got), capacity)
	}
	for i, n := range got {
		want := i
		if i == 0 || i == 63 || i == 64 || i == 999 {
			want = capacity + i
		}
		if n != want {
			t.Fatalf("message %d is %d, want %d", i, n, want)
		}
	}
	if s := m.Stats(); s.DroppedCoalesced != 4 || s.RejectedFull != 1 || s.MaxDepth != capacity {
		t.Fatalf("coalesced %d, rejected %d, max depth %d; want 4, 1, %d", s.DroppedCoalesced, s.RejectedFull, s.MaxDepth, capacity)
	}
}

// TestIdleMailboxHoldsNothing: a bounded mailbox that no one has offered
// to or waited on is one allocation (no ring, no channels), what a
// million idle workers' mailboxes cost; it takes, closes and reports as
// any other.
func TestIdleMailboxHoldsNothing(t *testing.T) {
	var wait stats.Histogram
	o := mailbox.Options{Capacity: 16, Clock: clock.Real{}, Wait: &wait}
	if n := testing.AllocsPerRun(100, func() { _, _ = mailbox.New[msg](o) }); n != 1 {
		t.Errorf("New of a bounded mailbox: %v allocations, want 1 (the mailbox alone)", n)
	}
	m, err := mailbox.New[msg](o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.TryTake(); ok {
		t.Fatal("took from an empty mailbox")
	}
	if err := m.Offer(bg, msg{n: 1}); err != nil {
		t.Fatal(err)
	}
	if got, ok := m.TryTake(); !ok || got.n != 1 {
		t.Fatalf("took %v %v, want message 1", got, ok)
	}
	m.Close()
	if _, err := m.Take(bg); !errors.Is(err, mailbox.ErrClosed) {
		t.Fatalf("Take after Close: %v, want ErrClosed", err)
	}
	if s := m.Stats(); s.Capacity != 16 || s.Offered != 1 || s.Taken != 1 {
		t.Fatalf("stats %+v: want capacity 16, 1 offered, 1 taken", s)
	}
}
