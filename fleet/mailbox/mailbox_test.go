package mailbox_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

var bg = context.Background()

type msg struct {
	key string
	n   int
}

func newBox(t *testing.T, o mailbox.Options) *mailbox.Mailbox[msg] {
	t.Helper()
	m, err := mailbox.New[msg](o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func drain(m *mailbox.Mailbox[msg]) []int {
	var got []int
	for {
		v, ok := m.TryTake()
		if !ok {
			return got
		}
		got = append(got, v.n)
	}
}

func checkIdentity(t interface {
	Helper()
	Fatalf(string, ...any)
}, s mailbox.Stats) {
	t.Helper()
	if s.Offered != s.Taken+s.Dropped()+s.Rejected()+uint64(s.Depth) {
		t.Fatalf("offered %d != taken %d + dropped %d + rejected %d + queued %d",
			s.Offered, s.Taken, s.Dropped(), s.Rejected(), s.Depth)
	}
}

// TestPolicies offers 4 messages to a mailbox of 2 and checks what each
// policy answers, what is left to take, and how it is counted.
func TestPolicies(t *testing.T) {
	tests := []struct {
		policy   mailbox.Policy
		keys     []string
		errs     []error // per offer; nil: accepted
		taken    []int
		dropped  uint64
		rejected uint64
	}{
		{mailbox.Reject, nil, []error{nil, nil, mailbox.ErrFull, mailbox.ErrFull}, []int{1, 2}, 0, 2},
		{mailbox.DropOldest, nil, []error{nil, nil, nil, nil}, []int{3, 4}, 2, 0},
		{mailbox.DropNewest, nil, []error{nil, nil, mailbox.ErrDropped, mailbox.ErrDropped}, []int{1, 2}, 2, 0},
		{mailbox.Unbounded, nil, []error{nil, nil, nil, nil}, []int{1, 2, 3, 4}, 0, 0},
		// a, b, a (replaces 1 in place), c (new key, full: rejected)
		{mailbox.Coalesce, []string{"a", "b", "a", "c"}, []error{nil, nil, nil, mailbox.ErrFull}, []int{3, 2}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			m := newBox(t, mailbox.Options{Capacity: 2, Policy: tc.policy})
			for i, want := range tc.errs {
				key := ""
				if tc.keys != nil {
					key = tc.keys[i]
				}
				err := m.OfferKey(bg, key, msg{key, i + 1})
				if !errors.Is(err, want) || (want == nil && err != nil) {
					t.Fatalf("offer %d: err = %v, want %v", i+1, err, want)
				}
			}
			s := m.Stats()
			checkIdentity(t, s)
			if s.Dropped() != tc.dropped || s.Rejected() != tc.rejected {
				t.Fatalf("dropped %d rejected %d, want %d %d", s.Dropped(), s.Rejected(), tc.dropped, tc.rejected)
			}
			if got := drain(m); !equal(got, tc.taken) {
				t.Fatalf("taken %v, want %v", got, tc.taken)
			}
			checkIdentity(t, m.Stats())
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRejectCarriesRetryAfterFromMeasuredServiceTime(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	m := newBox(t, mailbox.Options{Capacity: 4, Policy: mailbox.Reject, Clock: clk})
	for i := range 4 {
		m.Offer(bg, msg{n: i})
	}
	// The consumer spends 3 ms per message while others wait.
	m.TryTake()
	clk.Advance(3 * time.Millisecond)
	m.TryTake()
	clk.Advance(3 * time.Millisecond)
	m.TryTake()
	m.Offer(bg, msg{n: 5})
	m.Offer(bg, msg{n: 6})
	m.Offer(bg, msg{n: 7}) // depth 4: full
	err := m.Offer(bg, msg{n: 8})
	var full *mailbox.FullError
	if !errors.As(err, &full) {
		t.Fatalf("offer to a full box: %v, want *FullError", err)
	}
	if want := 4 * 3 * time.Millisecond; full.RetryAfter != want {
		t.Fatalf("RetryAfter = %v, want %v (4 queued × 3 ms measured)", full.RetryAfter, want)
	}
	if s := m.Stats(); s.ServiceTime != 3*time.Millisecond {
		t.Fatalf("ServiceTime = %v, want 3ms", s.ServiceTime)
	}
}

func TestRetryAfterUsesHintBeforeMeasuring(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 1, ServiceTimeHint: 7 * time.Millisecond})
	m.Offer(bg, msg{})
	var full *mailbox.FullError
	if err := m.Offer(bg, msg{}); !errors.As(err, &full) || full.RetryAfter != 7*time.Millisecond {
		t.Fatalf("err = %v, want RetryAfter 7ms from the hint", err)
	}
}

func TestWaitIsMeasuredFromOfferToTake(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	m := newBox(t, mailbox.Options{Capacity: 8, Clock: clk})
	m.Offer(bg, msg{n: 1})
	clk.Advance(10 * time.Millisecond)
	m.Offer(bg, msg{n: 2})
	clk.Advance(5 * time.Millisecond)
	m.TryTake() // waited 15 ms
	m.TryTake() // waited 5 ms
	s := m.Stats()
	if s.Wait.Count != 2 || s.Wait.Max != 15*time.Millisecond {
		t.Fatalf("wait count %d max %v, want 2 and 15ms", s.Wait.Count, s.Wait.Max)
	}
	if s.MaxDepth != 2 {
		t.Fatalf("MaxDepth = %d, want 2", s.MaxDepth)
	}
}

func TestCloseDrainsThenReportsClosed(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 4})
	m.Offer(bg, msg{n: 1})
	m.Offer(bg, msg{n: 2})
	m.Close()
	m.Close() // no-op
	if err := m.Offer(bg, msg{n: 3}); !errors.Is(err, mailbox.ErrClosed) {
		t.Fatalf("Offer after Close = %v, want ErrClosed", err)
	}
	for want := 1; want <= 2; want++ {
		v, err := m.Take(bg)
		if err != nil || v.n != want {
			t.Fatalf("Take = %v %v, want %d", v, err, want)
		}
	}
	if _, err := m.Take(bg); !errors.Is(err, mailbox.ErrClosed) {
		t.Fatalf("Take on closed and drained = %v, want ErrClosed", err)
	}
	s := m.Stats()
	checkIdentity(t, s)
	if s.RejectedClosed != 1 {
		t.Fatalf("RejectedClosed = %d", s.RejectedClosed)
	}
}

// The concurrent behaviour of Take and Block runs in a synctest bubble: the
// wall clock there is fake and advances only when every goroutine is
// blocked, so timeouts are exact and nothing sleeps for real.

func TestTakeWaitsForOfferAndContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newBox(t, mailbox.Options{Capacity: 4})
		got := make(chan int)
		go func() {
			v, _ := m.Take(bg)
			got <- v.n
		}()
		synctest.Wait() // the consumer is parked in Take
		m.Offer(bg, msg{n: 42})
		if v := <-got; v != 42 {
			t.Fatalf("Take = %d", v)
		}
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		start := time.Now()
		if _, err := m.Take(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take on empty = %v, want deadline exceeded", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("Take gave up after %v, want 1s", waited)
		}
	})
}

func TestCloseWakesConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newBox(t, mailbox.Options{Capacity: 4})
		errc := make(chan error)
		go func() {
			_, err := m.Take(bg)
			errc <- err
		}()
		synctest.Wait()
		m.Close()
		if err := <-errc; !errors.Is(err, mailbox.ErrClosed) {
			t.Fatalf("Take = %v, want ErrClosed", err)
		}
	})
}

func TestBlock(t *testing.T) {
	t.Run("waits for room", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newBox(t, mailbox.Options{Capacity: 1, Policy: mailbox.Block, BlockTimeout: time.Second})
			m.Offer(bg, msg{n: 1})
			errc := make(chan error)
			go func() { errc <- m.Offer(bg, msg{n: 2}) }()
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			select {
			case err := <-errc:
				t.Fatalf("Offer to a full Block box returned %v without waiting", err)
			default:
			}
			m.TryTake()
			if err := <-errc; err != nil {
				t.Fatalf("blocked Offer = %v after room appeared", err)
			}
			if got := drain(m); !equal(got, []int{2}) {
				t.Fatalf("queued %v, want [2]", got)
			}
		})
	})
	t.Run("times out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newBox(t, mailbox.Options{Capacity: 1, Policy: mailbox.Block, BlockTimeout: 250 * time.Millisecond})
			m.Offer(bg, msg{n: 1})
			start := time.Now()
			err := m.Offer(bg, msg{n: 2})
			var full *mailbox.FullError
			if !errors.As(err, &full) || full.Waited != 250*time.Millisecond {
				t.Fatalf("Offer = %v, want *FullError after 250ms", err)
			}
			if waited := time.Since(start); waited != 250*time.Millisecond {
				t.Fatalf("waited %v, want exactly the 250ms timeout", waited)
			}
			if s := m.Stats(); s.RejectedTimeout != 1 {
				t.Fatalf("RejectedTimeout = %d", s.RejectedTimeout)
			}
		})
	})
	t.Run("context ends first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newBox(t, mailbox.Options{Capacity: 1, Policy: mailbox.Block, BlockTimeout: time.Hour})
			m.Offer(bg, msg{n: 1})
			ctx, cancel := context.WithTimeout(bg, time.Second)
			defer cancel()
			if err := m.Offer(ctx, msg{n: 2}); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Offer = %v, want the context's error", err)
			}
			s := m.Stats()
			checkIdentity(t, s)
			if s.RejectedCanceled != 1 {
				t.Fatalf("RejectedCanceled = %d", s.RejectedCanceled)
			}
		})
	})
	t.Run("close wakes blocked producers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newBox(t, mailbox.Options{Capacity: 1, Policy: mailbox.Block, BlockTimeout: time.Hour})
			m.Offer(bg, msg{n: 1})
			errc := make(chan error, 3)
			for range 3 {
				go func() { errc <- m.Offer(bg, msg{n: 9}) }()
			}
			synctest.Wait()
			m.Close()
			for range 3 {
				if err := <-errc; !errors.Is(err, mailbox.ErrClosed) {
					t.Fatalf("blocked Offer after Close = %v, want ErrClosed", err)
				}
			}
			checkIdentity(t, m.Stats())
		})
	})
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []mailbox.Options{
		{Capacity: -1},
		{Policy: 99},
		{BlockTimeout: -time.Second},
		{ServiceTimeHint: -1},
	} {
		if _, err := mailbox.New[int](o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []mailbox.Policy{mailbox.Reject, mailbox.DropOldest, mailbox.DropNewest, mailbox.Block, mailbox.Coalesce, mailbox.Unbounded} {
		got, err := mailbox.ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := mailbox.ParsePolicy("drop_oldest"); err == nil {
		t.Error("ParsePolicy accepted drop_oldest")
	}
}

// TestPeak: Peak is the most queued since the call before, counted from
// the depth at that call; MaxDepth stays the most since New.
func TestPeak(t *testing.T) {
	m := newBox(t, mailbox.Options{Capacity: 10})
	for i := range 3 {
		if err := m.Offer(bg, msg{n: i}); err != nil {
			t.Fatal(err)
		}
	}
	if p := m.Peak(); p != 3 {
		t.Fatalf("Peak after 3 offers = %d, want 3", p)
	}
	m.TryTake()
	m.TryTake()
	if p := m.Peak(); p != 3 {
		t.Fatalf("Peak after 2 takes = %d, want 3 (the depth the period began at)", p)
	}
	if p := m.Peak(); p != 1 {
		t.Fatalf("Peak with nothing offered or taken = %d, want 1 (the depth now)", p)
	}
	_ = m.Offer(bg, msg{n: 9})
	m.TryTake()
	if p, s := m.Peak(), m.Stats(); p != 2 || s.MaxDepth != 3 {
		t.Fatalf("Peak = %d, MaxDepth = %d; want 2 and 3", p, s.MaxDepth)
	}
}
