package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. All implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time on this clock.
	Now() time.Time
	// Mono returns the time elapsed on this clock since a fixed origin of
	// its own, monotonically. It is for measuring intervals on hot paths:
	// on the wall clock it reads the time once (Now reads it twice).
	Mono() time.Duration
	// NewTimer returns a timer that delivers the time on its channel once,
	// after at least d has passed on this clock.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that delivers the time every d on this
	// clock. It panics if d <= 0, as time.NewTicker does.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine after at least d has passed on
	// this clock (Fake calls it from Advance). The returned Timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a single event on a Clock, as time.Timer.
type Timer interface {
	// C is the channel on which the fire time is delivered (buffer 1).
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was
	// pending.
	Stop() bool
	// Reset re-arms the timer to fire after d; it reports whether the timer
	// was pending. A value already on C is drained first, so the next receive
	// sees the new deadline (Go 1.23 time.Timer semantics).
	Reset(d time.Duration) bool
}

// Ticker delivers ticks on a Clock, as time.Ticker. Slow receivers miss
// ticks rather than queue them.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// Sleep waits for d on c, or until ctx ends; it returns ctx.Err() in the
// latter case. A d <= 0 returns at once (nil unless ctx has already ended).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return wait(ctx, c.NewTimer(d))
}

// wait waits for t to fire, or for ctx to end (its error), and stops t.
func wait(ctx context.Context, t Timer) error {
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ticker adapts a periodic timer to Ticker, whose methods return
// nothing, for the clocks whose tickers are their timers with a period.
type ticker struct{ t Timer }

func (k ticker) C() <-chan time.Time { return k.t.C() }
func (k ticker) Stop()               { k.t.Stop() }
func (k ticker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	k.t.Reset(d)
}

// Settle waits, if c is a Virtual clock (or a Keyed view of one), until
// the process has settled (Virtual.Settle), or until ctx ends; on any
// other clock it returns at once. Code that runs on any clock calls it where a run on the virtual
// clock must go on from the same state every time.
func Settle(ctx context.Context, c Clock) error {
	if s, ok := c.(interface{ Settle(context.Context) error }); ok {
		return s.Settle(ctx)
	}
	return ctx.Err()
}

// Settles reports whether Settle waits on c: whether c is a Virtual
// clock or a Keyed view of one.
func Settles(c Clock) bool {
	_, ok := c.(interface{ Settle(context.Context) error })
	return ok
}
