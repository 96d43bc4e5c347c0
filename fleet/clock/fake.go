package clock

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Fake is a Clock whose time moves only when Advance or Set is called.
// Timers and tickers fire inside Advance, in deadline order, each seeing
// Now equal to its own deadline. Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	origin  time.Time
	now     time.Time
	seq     uint64 // breaks deadline ties in creation order
	waiters []*fakeWaiter
	armed   chan struct{} // closed when a timer is next armed; nil if no one waits
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{origin: start, now: start} }

type fakeWaiter struct {
	c        *Fake
	deadline time.Time
	period   time.Duration // > 0 for tickers
	seq      uint64
	ch       chan time.Time
	fn       func()
	armed    bool
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Mono returns the fake time elapsed since the clock's start.
func (f *Fake) Mono() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now.Sub(f.origin)
}

// NewTimer returns a timer that fires when the clock is advanced past d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	w := &fakeWaiter{c: f, ch: make(chan time.Time, 1)}
	f.arm(w, d)
	return w
}

// AfterFunc arranges for fn to be called, on the goroutine that calls
// Advance, once the clock passes d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	w := &fakeWaiter{c: f, fn: fn}
	f.arm(w, d)
	return w
}

// NewTicker returns a ticker that fires every d of fake time.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	w := &fakeWaiter{c: f, ch: make(chan time.Time, 1), period: d}
	f.arm(w, d)
	return ticker{w}
}

// Advance moves the clock forward by d, firing every timer and ticker due on
// the way in deadline order. It returns when all of them have fired (for
// AfterFunc: when each function has returned).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.Set(target)
}

// Set moves the clock to t (never backwards), firing what is due on the way.
func (f *Fake) Set(t time.Time) {
	for {
		f.mu.Lock()
		if len(f.waiters) == 0 || f.waiters[0].deadline.After(t) {
			if t.After(f.now) {
				f.now = t
			}
			f.mu.Unlock()
			return
		}
		w := f.waiters[0]
		f.waiters = f.waiters[1:]
		if w.deadline.After(f.now) {
			f.now = w.deadline
		}
		now := f.now
		fn := w.fn
		if w.period > 0 {
			w.deadline = w.deadline.Add(w.period)
			f.insert(w)
		} else {
			w.armed = false
		}
		if w.ch != nil {
			select {
			case w.ch <- now:
			default: // a slow receiver misses the tick, as with time.Ticker
			}
		}
		f.mu.Unlock()
		if fn != nil {
			fn()
		}
	}
}

// Pending reports how many timers and tickers are waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// WaitDue blocks until a timer or ticker is pending that Advance(d) would
// fire, or until ctx ends. A test calls it before an Advance that must fire
// a timer another goroutine arms, so the Advance cannot come first and leave
// that timer waiting for a move that never comes. The error on ctx's end
// lists what was pending instead.
func (f *Fake) WaitDue(ctx context.Context, d time.Duration) error {
	for {
		f.mu.Lock()
		if len(f.waiters) > 0 && !f.waiters[0].deadline.After(f.now.Add(d)) {
			f.mu.Unlock()
			return nil
		}
		if f.armed == nil {
			f.armed = make(chan struct{})
		}
		armed := f.armed
		f.mu.Unlock()
		select {
		case <-armed:
		case <-ctx.Done():
			return fmt.Errorf("no timer due within %v: %w (pending: %s)", d, ctx.Err(), f.describe())
		}
	}
}

// describe lists the pending deadlines relative to now, e.g. "+1s, +2m0s
// (ticker)", or "none".
func (f *Fake) describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return "none"
	}
	parts := make([]string, len(f.waiters))
	for i, w := range f.waiters {
		parts[i] = "+" + w.deadline.Sub(f.now).String()
		if w.period > 0 {
			parts[i] += " (ticker)"
		}
	}
	return strings.Join(parts, ", ")
}

// NextDeadline returns the earliest pending deadline, if any.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return time.Time{}, false
	}
	return f.waiters[0].deadline, true
}

// arm (re)schedules w to fire d from now. The caller must not hold f.mu.
func (f *Fake) arm(w *fakeWaiter, d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := f.remove(w)
	if w.ch != nil && w.period == 0 {
		select { // Go 1.23 semantics: Reset discards a stale fire time.
		case <-w.ch:
		default:
		}
	}
	w.deadline = f.now.Add(d)
	f.insert(w)
	return was
}

func (f *Fake) insert(w *fakeWaiter) {
	f.seq++
	w.seq = f.seq
	w.armed = true
	i := sort.Search(len(f.waiters), func(i int) bool {
		o := f.waiters[i]
		return o.deadline.After(w.deadline) || (o.deadline.Equal(w.deadline) && o.seq > w.seq)
	})
	f.waiters = append(f.waiters, nil)
	copy(f.waiters[i+1:], f.waiters[i:])
	f.waiters[i] = w
	if f.armed != nil {
		close(f.armed)
		f.armed = nil
	}
}

func (f *Fake) remove(w *fakeWaiter) bool {
	if !w.armed {
		return false
	}
	for i, o := range f.waiters {
		if o == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	w.armed = false
	return true
}

func (w *fakeWaiter) C() <-chan time.Time { return w.ch }

func (w *fakeWaiter) Stop() bool {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.remove(w)
}

func (w *fakeWaiter) Reset(d time.Duration) bool {
	if w.period > 0 && d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	if w.period > 0 {
		w.c.mu.Lock()
		w.period = d
		w.c.mu.Unlock()
	}
	return w.c.arm(w, d)
}
