package flow_test

import (
	"errors"
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
	if s.Successes != 4 || s.Backpressure != 4 || s.Failed != 1 || s.InFlight != 0 {
		t.Fatalf("stats = %+v", s)
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
// model of AIMD and checks min <= limit <= max, in-flight <= limit at every
// grant, and exact agreement with the model.
func TestLimiterModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mn := rapid.IntRange(1, 5).Draw(t, "min")
		mx := rapid.IntRange(mn, 40).Draw(t, "max")
		init := rapid.IntRange(mn, mx).Draw(t, "initial")
		l := flow.NewLimiter(flow.LimiterOptions{Initial: init, Min: mn, Max: mx})
		limit, inFlight := init, 0
		var held []flow.Permit
		for i := range rapid.IntRange(1, 200).Draw(t, "ops") {
			_ = i
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(held) == 0:
				p, ok := l.TryAcquire()
				if ok != (inFlight < limit) {
					t.Fatalf("TryAcquire = %v with in-flight %d, limit %d", ok, inFlight, limit)
				}
				if ok {
					held = append(held, p)
					inFlight++
				}
			default:
				p := held[len(held)-1]
				held = held[:len(held)-1]
				inFlight--
				switch op {
				case 1:
					p.Success()
					limit = min(limit+1, mx)
				case 2:
					p.Backpressure()
					limit = max(limit/2, mn)
				case 3:
					p.Release()
				}
			}
			if l.Limit() != limit || l.InFlight() != inFlight {
				t.Fatalf("limiter (limit %d, in-flight %d) != model (%d, %d)", l.Limit(), l.InFlight(), limit, inFlight)
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
	if s := l.Stats(); s.InFlight != 0 || s.Acquired != s.Successes+s.Backpressure {
		t.Fatalf("permits not all returned: %+v", s)
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
