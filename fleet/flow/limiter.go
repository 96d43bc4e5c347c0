package flow

import (
	"fmt"
	"sync/atomic"
)

// Strategy says whether a Limiter adapts.
type Strategy int

const (
	// AIMD adds one to the limit per success and halves it per capacity
	// rejection (TCP congestion control's rule).
	AIMD Strategy = iota
	// Static keeps the limit at Initial; for comparison runs.
	Static
)

func (s Strategy) String() string {
	switch s {
	case AIMD:
		return "aimd"
	case Static:
		return "static"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ParseStrategy parses "aimd" or "static".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "aimd":
		return AIMD, nil
	case "static":
		return Static, nil
	}
	return 0, fmt.Errorf("unknown limiter strategy %q (valid: aimd, static)", s)
}

// LimiterOptions configures a Limiter.
type LimiterOptions struct {
	Initial  int // starting limit; default 10
	Min      int // floor for decreases; default 1
	Max      int // ceiling for increases; default 50
	Strategy Strategy
}

// DefaultLimiterOptions is the seed's relay default: 10 / 1 / 50, AIMD.
var DefaultLimiterOptions = LimiterOptions{Initial: 10, Min: 1, Max: 50, Strategy: AIMD}

// Validate reports options that cannot work: 1 <= Min <= Initial <= Max.
func (o LimiterOptions) Validate() error {
	if o.Min < 1 {
		return fmt.Errorf("limiter min %d: must be at least 1", o.Min)
	}
	if o.Max < o.Min {
		return fmt.Errorf("limiter max %d: must be at least min (%d)", o.Max, o.Min)
	}
	if o.Initial < o.Min || o.Initial > o.Max {
		return fmt.Errorf("limiter initial %d: must be between min (%d) and max (%d)", o.Initial, o.Min, o.Max)
	}
	if o.Strategy != AIMD && o.Strategy != Static {
		return fmt.Errorf("limiter strategy %d: must be aimd or static", o.Strategy)
	}
	return nil
}

// Limiter bounds how many deliveries are in flight at once, and adapts the
// bound to the receiver with AIMD. All methods are lock-free (atomic
// compare-and-swap) and safe for concurrent use.
//
// TryAcquire never grants a permit that would take in-flight above the
// current limit. After a decrease, permits already granted may exceed the new
// limit until they are returned; no new one is granted until in-flight is
// back below it.
type Limiter struct {
	min, max int64
	strategy Strategy

	limit    atomic.Int64
	inFlight atomic.Int64

	acquired     atomic.Uint64
	refused      atomic.Uint64
	successes    atomic.Uint64
	backpressure atomic.Uint64
	failed       atomic.Uint64
}

// NewLimiter returns a Limiter. It panics on options that fail Validate;
// callers that take options from outside validate first.
func NewLimiter(o LimiterOptions) *Limiter {
	if err := o.Validate(); err != nil {
		panic("flow: " + err.Error())
	}
	l := &Limiter{min: int64(o.Min), max: int64(o.Max), strategy: o.Strategy}
	l.limit.Store(int64(o.Initial))
	return l
}

// Permit is one granted slot. Return it exactly once with Done, Success,
// Backpressure or Release; returning it twice corrupts the in-flight count.
type Permit struct{ l *Limiter }

// TryAcquire grants a permit if in-flight is below the limit. It never
// blocks: a caller that gets false should leave the message for a later pass.
func (l *Limiter) TryAcquire() (Permit, bool) {
	for {
		cur := l.inFlight.Load()
		if cur >= l.limit.Load() {
			l.refused.Add(1)
			return Permit{}, false
		}
		if l.inFlight.CompareAndSwap(cur, cur+1) {
			l.acquired.Add(1)
			return Permit{l}, true
		}
	}
}

// Done returns the permit and adjusts the limit by the outcome of the
// delivery, using Classify: nil adds one, a capacity error halves, anything
// else leaves the limit unchanged.
func (p Permit) Done(err error) {
	switch Classify(err) {
	case OK:
		p.Success()
	case Backpressure:
		p.Backpressure()
	default:
		p.l.failed.Add(1)
		p.Release()
	}
}

// Success returns the permit after a delivery: additive increase.
func (p Permit) Success() {
	l := p.l
	l.successes.Add(1)
	if l.strategy == AIMD {
		l.update(func(cur int64) int64 { return min(cur+1, l.max) })
	}
	l.inFlight.Add(-1)
}

// Backpressure returns the permit after a capacity rejection:
// multiplicative decrease.
func (p Permit) Backpressure() {
	l := p.l
	l.backpressure.Add(1)
	if l.strategy == AIMD {
		l.update(func(cur int64) int64 { return max(cur/2, l.min) })
	}
	l.inFlight.Add(-1)
}

// Release returns the permit without changing the limit (a transient error,
// or work abandoned at shutdown).
func (p Permit) Release() { p.l.inFlight.Add(-1) }

func (l *Limiter) update(f func(int64) int64) {
	for {
		cur := l.limit.Load()
		if l.limit.CompareAndSwap(cur, f(cur)) {
			return
		}
	}
}

// Limit returns the current limit.
func (l *Limiter) Limit() int { return int(l.limit.Load()) }

// InFlight returns the number of permits out.
func (l *Limiter) InFlight() int { return int(l.inFlight.Load()) }

// LimiterStats is a point-in-time view of a Limiter. Fields are read one by
// one, so under concurrent use they may be a few operations apart.
type LimiterStats struct {
	Limit, InFlight, Min, Max int
	Acquired                  uint64 // permits granted
	Refused                   uint64 // TryAcquire calls that got none
	Successes                 uint64
	Backpressure              uint64 // capacity rejections (decreases)
	Failed                    uint64 // permits returned by Done with a non-capacity error
}

// Stats returns the limiter's counters.
func (l *Limiter) Stats() LimiterStats {
	return LimiterStats{
		Limit:        int(l.limit.Load()),
		InFlight:     int(l.inFlight.Load()),
		Min:          int(l.min),
		Max:          int(l.max),
		Acquired:     l.acquired.Load(),
		Refused:      l.refused.Load(),
		Successes:    l.successes.Load(),
		Backpressure: l.backpressure.Load(),
		Failed:       l.failed.Load(),
	}
}
