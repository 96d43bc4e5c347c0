package flow_test

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"pgregory.net/rapid"
)

func TestLimiterAIMD(t *testing.T) {
	l := flow.NewLimiter(flow.LimiterOptions{Initial: 4, Min: 1, Max: 6, Strategy: flow.AIMD})
	step := func(f func(flow.Permit), want int) {
		t.Helper()
		p, ok := l.TryAcquire()
		if !ok {
			t.Fatal("TryAcquire refused with nothing in flight")
		}
		f(p)
		if got := l.Limit(); got != want {
			t.Fatalf("limit = %d, want %d", got, want)
		}
	}
	step(flow.Permit.Success, 5)
	step(flow.Permit.Success, 6)
	step(flow.Permit.Success, 6) // capped at max
	step(flow.Permit.Backpressure, 3)
	step(flow.Permit.Backpressure, 1)
	step(flow.Permit.Backpressure, 1) // floored at min
	step(flow.Permit.Release, 1)
	step(func(p flow.Permit) { p.Done(flow.Transient(errors.New("timeout"))) }, 1)
	step(func(p flow.Permit) { p.Done(nil) }, 2)
	step(func(p flow.Permit) { p.Done(flow.Capacity(0, "")) }, 1)
	s := l.Stats()
	// Each rejected permit was granted after the decrease before it, so
	// each halves; the one at the floor has nothing left to take.
	if s.Successes != 4 || s.Backpressure != 4 || s.Decreases != 3 || s.Failed != 1 || s.InFlight != 0 {
		t.Fatalf("stats = %+v, want 4 successes, 4 backpressure, 3 decreases, 1 failed", s)
	}
}

// TestLimiterWindow checks the once-per-window rule: rejections of permits
// granted before the last decrease are one congestion signal.
func TestLimiterWindow(t *testing.T) {
	type step struct {
		op   string // "acquire" (n permits), "full", "ok" (return the oldest held permit)
		n    int
		want int // limit after the step
	}
	for _, tc := range []struct {
		name          string
		initial, min  int
		steps         []step
		wantDecreases uint64
	}{
		{"a burst from one window halves once", 8, 1, []step{
			{"acquire", 8, 8},
			{"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4},
			{"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4},
		}, 1},
		{"a permit granted after the decrease halves again", 8, 1, []step{
			{"acquire", 8, 8},
			{"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4},
			{"acquire", 1, 4}, // in-flight 3 < 4: the new window's first permit, behind three old ones
			{"full", 0, 4}, {"full", 0, 4}, {"full", 0, 4},
			{"full", 0, 2},
		}, 2},
		{"success adds one in any window", 8, 1, []step{
			{"acquire", 4, 8},
			{"full", 0, 4},
			{"ok", 0, 5}, {"ok", 0, 6},
			{"full", 0, 6},
		}, 1},
		{"min holds and the window still turns", 4, 3, []step{
			{"acquire", 2, 4},
			{"full", 0, 3},
			{"acquire", 1, 3},
			{"full", 0, 3}, // old window
			{"full", 0, 3}, // new window, at min: no fall
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := flow.NewLimiter(flow.LimiterOptions{Initial: tc.initial, Min: tc.min, Max: 10, Strategy: flow.AIMD})
			var held []flow.Permit
			for i, s := range tc.steps {
				switch s.op {
				case "acquire":
					for range s.n {
						p, ok := l.TryAcquire()
						if !ok {
							t.Fatalf("step %d: TryAcquire refused at in-flight %d, limit %d", i, l.InFlight(), l.Limit())
						}
						held = append(held, p)
					}
				case "full":
					held[0].Backpressure()
					held = held[1:]
				case "ok":
					held[0].Success()
					held = held[1:]
				}
				if got := l.Limit(); got != s.want {
					t.Fatalf("step %d (%s): limit %d, want %d", i, s.op, got, s.want)
				}
			}
			if got := l.Stats().Decreases; got != tc.wantDecreases {
				t.Fatalf("decreases %d, want %d", got, tc.wantDecreases)
			}
		})
	}
}

// TestLimiterWindowConcurrent rejects a full window's permits from as many
// goroutines at once: however the returns interleave, the limit halves
// once. Run under -race.
func TestLimiterWindowConcurrent(t *testing.T) {
	const n = 32
	for range 20 {
		l := flow.NewLimiter(flow.LimiterOptions{Initial: n, Min: 1, Max: n})
		permits := make([]flow.Permit, n)
		for i := range permits {
			p, ok := l.TryAcquire()
			if !ok {
				t.Fatalf("permit %d refused under the limit", i)
			}
			permits[i] = p
		}
		var start, wg sync.WaitGroup
		start.Add(1)
		for _, p := range permits {
			wg.Go(func() {
				start.Wait()
				p.Backpressure()
			})
		}
		start.Done()
		wg.Wait()
		if s := l.Stats(); s.Limit != n/2 || s.Decreases != 1 || s.Backpressure != n || s.InFlight != 0 {
			t.Fatalf("after %d concurrent rejections from one window: %+v, want limit %d, 1 decrease", n, s, n/2)
		}
	}
}

func TestLimiterStaticNeverMoves(t *testing.T) {
	l := flow.NewLimiter(flow.LimiterOptions{Initial: 3, Min: 1, Max: 50, Strategy: flow.Static})
	for range 10 {
		p, _ := l.TryAcquire()
		p.Success()
	}
	p, _ := l.TryAcquire()
	p.Backpressure()
	if l.Limit() != 3 {
		t.Fatalf("static limit moved to %d", l.Limit())
	}
}

func TestLimiterRefusesAtLimit(t *testing.T) {
	l := flow.NewLimiter(flow.LimiterOptions{Initial: 2, Min: 1, Max: 2})
	p1, ok1 := l.TryAcquire()
	_, ok2 := l.TryAcquire()
	_, ok3 := l.TryAcquire()
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("acquires = %v %v %v, want true true false", ok1, ok2, ok3)
	}
	p1.Backpressure() // limit 1, in flight 1: still full
	if _, ok := l.TryAcquire(); ok {
		t.Fatal("granted a permit with in-flight at the lowered limit")
	}
	if l.Stats().Refused != 2 {
		t.Fatalf("refused = %d, want 2", l.Stats().Refused)
	}
}

func TestLimiterOptionsValidate(t *testing.T) {
	bad := []flow.LimiterOptions{
		{Initial: 1, Min: 0, Max: 5},
		{Initial: 1, Min: 2, Max: 5},
		{Initial: 6, Min: 1, Max: 5},
		{Initial: 5, Min: 6, Max: 5},
		{Initial: 1, Min: 1, Max: 5, Strategy: 9},
		{Initial: 1, Min: 1, Max: math.MaxInt32 + 1},
	}
	for _, o := range bad {
		if o.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
	}
	if err := flow.DefaultLimiterOptions.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestLimiterModel runs random acquire/return sequences against a reference
// model of AIMD with its windows and checks min <= limit <= max, in-flight
// <= limit at every grant, and exact agreement with the model (limit,
// in-flight, decreases).
func TestLimiterModel(t *testing.T) {
	type heldPermit struct {
		p      flow.Permit
		window int // the model's window at the grant
	}
	rapid.Check(t, func(t *rapid.T) {
		mn := rapid.IntRange(1, 5).Draw(t, "min")
		mx := rapid.IntRange(mn, 40).Draw(t, "max")
		init := rapid.IntRange(mn, mx).Draw(t, "initial")
		l := flow.NewLimiter(flow.LimiterOptions{Initial: init, Min: mn, Max: mx})
		limit, inFlight, window, decreases := init, 0, 0, 0
		var held []heldPermit
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(held) == 0:
				p, ok := l.TryAcquire()
				if ok != (inFlight < limit) {
					t.Fatalf("TryAcquire = %v with in-flight %d, limit %d", ok, inFlight, limit)
				}
				if ok {
					held = append(held, heldPermit{p, window})
					inFlight++
				}
			default:
				i := rapid.IntRange(0, len(held)-1).Draw(t, "permit")
				h := held[i]
				held = append(held[:i], held[i+1:]...)
				inFlight--
				switch op {
				case 1:
					h.p.Success()
					limit = min(limit+1, mx)
				case 2:
					h.p.Backpressure()
					if h.window == window {
						if next := max(limit/2, mn); next < limit {
							limit = next
							decreases++
						}
						window++
					}
				case 3:
					h.p.Release()
				}
			}
			if l.Limit() != limit || l.InFlight() != inFlight || l.Stats().Decreases != uint64(decreases) {
				t.Fatalf("limiter (limit %d, in-flight %d, decreases %d) != model (%d, %d, %d)",
					l.Limit(), l.InFlight(), l.Stats().Decreases, limit, inFlight, decreases)
			}
			if limit < mn || limit > mx {
				t.Fatalf("limit %d outside [%d, %d]", limit, mn, mx)
			}
		}
	})
}

// TestLimiterConcurrent hammers one limiter from many goroutines: the limit
// stays in [min, max], in-flight never passes max, and every permit comes
// back. Run under -race.
func TestLimiterConcurrent(t *testing.T) {
	o := flow.LimiterOptions{Initial: 8, Min: 2, Max: 16}
	l := flow.NewLimiter(o)
	var inFlight, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				p, ok := l.TryAcquire()
				if !ok {
					continue
				}
				n := inFlight.Add(1)
				for {
					m := peak.Load()
					if n <= m || peak.CompareAndSwap(m, n) {
						break
					}
				}
				if lim := l.Limit(); lim < o.Min || lim > o.Max {
					t.Errorf("limit %d outside [%d, %d]", lim, o.Min, o.Max)
				}
				inFlight.Add(-1)
				if (i+g)%7 == 0 {
					p.Backpressure()
				} else {
					p.Success()
				}
			}
		}()
	}
	wg.Wait()
	if peak.Load() > int64(o.Max) {
		t.Fatalf("peak in-flight %d > max %d", peak.Load(), o.Max)
	}
	s := l.Stats()
	if s.InFlight != 0 || s.Acquired != s.Successes+s.Backpressure {
		t.Fatalf("permits not all returned: %+v", s)
	}
	if s.Decreases == 0 || s.Decreases > s.Backpressure {
		t.Fatalf("decreases %d: want some, and at most one per rejection (%d)", s.Decreases, s.Backpressure)
	}
}

func BenchmarkLimiterTryAcquireRelease(b *testing.B) {
	l := flow.NewLimiter(flow.LimiterOptions{Initial: 1 << 20, Min: 1, Max: 1 << 20, Strategy: flow.Static})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if p, ok := l.TryAcquire(); ok {
				p.Success()
			}
		}
	})
}

func BenchmarkLimiterAIMDSuccess(b *testing.B) {
	l := flow.NewLimiter(flow.DefaultLimiterOptions)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if p, ok := l.TryAcquire(); ok {
				p.Success()
			}
		}
	})
}

// BenchmarkLimiterAIMDMixed returns one permit in eight with a capacity
// rejection: the decrease path and its window check under contention.
func BenchmarkLimiterAIMDMixed(b *testing.B) {
	l := flow.NewLimiter(flow.DefaultLimiterOptions)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if p, ok := l.TryAcquire(); ok {
				if i++; i%8 == 0 {
					p.Backpressure()
				} else {
					p.Success()
				}
			}
		}
	})
}

// BenchmarkMutexCounterBaseline is the naive alternative to the lock-free
// limiter: a mutex around the same acquire/release.
func BenchmarkMutexCounterBaseline(b *testing.B) {
	var mu sync.Mutex
	inFlight, limit := 0, 1<<20
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			ok := inFlight < limit
			if ok {
				inFlight++
			}
			mu.Unlock()
			if ok {
				mu.Lock()
				inFlight--
				mu.Unlock()
			}
		}
	})
}
