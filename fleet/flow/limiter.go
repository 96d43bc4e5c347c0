package flow

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Strategy says whether a Limiter adapts.
type Strategy int

const (
	// AIMD adds one to the limit per success and halves it on a capacity
	// rejection, at most once per window: the rejections of deliveries
	// that were already in flight when the limit fell are the same
	// congestion signal and do not halve it again (TCP's rule, which
	// reacts once per round trip).
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
	Max      int // ceiling for increases; default 50; at most math.MaxInt32
	Strategy Strategy
}

// DefaultLimiterOptions is the seed's relay default: 10 / 1 / 50, AIMD.
var DefaultLimiterOptions = LimiterOptions{Initial: 10, Min: 1, Max: 50, Strategy: AIMD}

// Validate reports options that cannot work: 1 <= Min <= Initial <= Max
// <= math.MaxInt32.
func (o LimiterOptions) Validate() error {
	if o.Min < 1 {
		return fmt.Errorf("limiter min %d: must be at least 1", o.Min)
	}
	if o.Max < o.Min {
		return fmt.Errorf("limiter max %d: must be at least min (%d)", o.Max, o.Min)
	}
	if o.Max > math.MaxInt32 {
		return fmt.Errorf("limiter max %d: must be at most %d", o.Max, math.MaxInt32)
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
// compare-and-swap), never allocate, and are safe for concurrent use.
//
// TryAcquire never grants a permit that would take in-flight above the
// current limit. After a decrease, permits already granted may exceed the new
// limit until they are returned; no new one is granted until in-flight is
// back below it.
//
// A decrease opens a new window. Every permit belongs to the window it was
// granted in, so a capacity rejection halves the limit only if its permit
// was granted after the last decrease: a burst of rejections from
// deliveries that were in flight together halves the limit once, not once
// each, and the next halving waits for a delivery sent at the lowered
// limit to be turned away too.
type Limiter struct {
	min, max int64
	strategy Strategy

	// state packs the window number (high 32 bits) with the limit (low 32
	// bits), so a permit reads the limit it is checked against and its
	// window in one load, and a decrease moves both in one CAS. The window
	// number wraps after 2^32 decreases; only a permit held across all of
	// them would be mistaken for a current one.
	state    atomic.Uint64
	inFlight atomic.Int64

	acquired     atomic.Uint64
	refused      atomic.Uint64
	successes    atomic.Uint64
	backpressure atomic.Uint64
	decreases    atomic.Uint64
	failed       atomic.Uint64
}

func pack(window uint32, limit int64) uint64 { return uint64(window)<<32 | uint64(limit) }

func limitOf(s uint64) int64   { return int64(uint32(s)) }
func windowOf(s uint64) uint32 { return uint32(s >> 32) }

// NewLimiter returns a Limiter. It panics on options that fail Validate;
// callers that take options from outside validate first.
func NewLimiter(o LimiterOptions) *Limiter {
	if err := o.Validate(); err != nil {
		panic("flow: " + err.Error())
	}
	l := &Limiter{min: int64(o.Min), max: int64(o.Max), strategy: o.Strategy}
	l.state.Store(pack(0, int64(o.Initial)))
	return l
}

// Permit is one granted slot. Return it exactly once with Done, Success,
// Backpressure or Release; returning it twice corrupts the in-flight count.
// It remembers the window it was granted in (see Limiter).
type Permit struct {
	l      *Limiter
	window uint32
}

// TryAcquire grants a permit if in-flight is below the limit. It never
// blocks: a caller that gets false should leave the message for a later pass.
func (l *Limiter) TryAcquire() (Permit, bool) {
	for {
		s := l.state.Load()
		cur := l.inFlight.Load()
		if cur >= limitOf(s) {
			l.refused.Add(1)
			return Permit{}, false
		}
		// Checked against the limit of window s: the permit belongs to it
		// even if a decrease lands before this CAS.
		if l.inFlight.CompareAndSwap(cur, cur+1) {
			l.acquired.Add(1)
			return Permit{l, windowOf(s)}, true
		}
	}
}

// Done returns the permit and adjusts the limit by the outcome of the
// delivery, using Classify: nil is a Success, a capacity error a
// Backpressure, anything else leaves the limit unchanged.
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

// Success returns the permit after a delivery: additive increase, one up
// to Max, whatever window the permit belongs to.
func (p Permit) Success() {
	l := p.l
	l.successes.Add(1)
	if l.strategy == AIMD {
		for {
			s := l.state.Load()
			lim := limitOf(s)
			if lim >= l.max || l.state.CompareAndSwap(s, pack(windowOf(s), lim+1)) {
				break
			}
		}
	}
	l.inFlight.Add(-1)
}

// Backpressure returns the permit after a capacity rejection:
// multiplicative decrease, at most once per window. If the permit was
// granted after the last decrease, the limit halves (down to Min) and a
// new window opens; if it was granted before, a rejection from its window
// has already halved the limit and this one leaves it alone. Either way
// it counts in LimiterStats.Backpressure; only a fall counts in Decreases.
func (p Permit) Backpressure() {
	l := p.l
	l.backpressure.Add(1)
	if l.strategy == AIMD {
		for {
			s := l.state.Load()
			if windowOf(s) != p.window {
				break
			}
			lim := limitOf(s)
			next := max(lim/2, l.min)
			if l.state.CompareAndSwap(s, pack(p.window+1, next)) {
				if next < lim {
					l.decreases.Add(1)
				}
				break
			}
		}
	}
	l.inFlight.Add(-1)
}

// Release returns the permit without changing the limit (a transient error,
// or work abandoned at shutdown).
func (p Permit) Release() { p.l.inFlight.Add(-1) }

// Limit returns the current limit.
func (l *Limiter) Limit() int { return int(limitOf(l.state.Load())) }

// InFlight returns the number of permits out.
func (l *Limiter) InFlight() int { return int(l.inFlight.Load()) }

// LimiterStats is a point-in-time view of a Limiter. Fields are read one by
// one, so under concurrent use they may be a few operations apart.
type LimiterStats struct {
	Limit, InFlight, Min, Max int
	Acquired                  uint64 // permits granted
	Refused                   uint64 // TryAcquire calls that got none
	Successes                 uint64
	// Backpressure counts capacity rejections, whether or not they moved
	// the limit.
	Backpressure uint64
	// Decreases counts the times a capacity rejection lowered the limit:
	// at most one per window, none at Min or under Static.
	Decreases uint64
	Failed    uint64 // permits returned by Done with a non-capacity error
}

// Stats returns the limiter's counters.
func (l *Limiter) Stats() LimiterStats {
	return LimiterStats{
		Limit:        l.Limit(),
		InFlight:     int(l.inFlight.Load()),
		Min:          int(l.min),
		Max:          int(l.max),
		Acquired:     l.acquired.Load(),
		Refused:      l.refused.Load(),
		Successes:    l.successes.Load(),
		Backpressure: l.backpressure.Load(),
		Decreases:    l.decreases.Load(),
		Failed:       l.failed.Load(),
	}
}
