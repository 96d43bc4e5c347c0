package clock

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Scaled is simulated time that runs Speed times faster than a base clock
// (the wall clock unless told otherwise). It can be paused and its speed
// changed while timers are pending: each pending timer is re-armed on the
// base clock so it still fires at its simulated deadline. Safe for
// concurrent use.
//
// Scenario runs use Scaled so that all durations in a scenario file are
// simulated time: at speed 10 a 30 s heartbeat interval is 3 wall seconds.
type Scaled struct {
	base  Clock
	start time.Time

	// state is replaced whole (under mu) on every rebase, so Now and Mono
	// read it without locking: 100k workers read this clock concurrently.
	state atomic.Pointer[scaledState]

	mu      sync.Mutex // guards rebases and pending
	pending map[*scaledTimer]struct{}
}

// scaledState maps base time to simulated time from the last rebase on.
type scaledState struct {
	baseMono time.Duration // base.Mono() at the rebase
	simMono  time.Duration // simulated time since start at the rebase
	speed    float64
	paused   bool
}

// NewScaled returns a clock reading start, running speed times faster than
// the wall clock. It panics if speed is not positive and finite.
func NewScaled(start time.Time, speed float64) *Scaled {
	return NewScaledOn(Real{}, start, speed)
}

// NewScaledOn is NewScaled over an arbitrary base clock (a Fake in tests).
func NewScaledOn(base Clock, start time.Time, speed float64) *Scaled {
	checkSpeed(speed)
	s := &Scaled{base: base, start: start, pending: make(map[*scaledTimer]struct{})}
	s.state.Store(&scaledState{baseMono: base.Mono(), speed: speed})
	return s
}

func checkSpeed(speed float64) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		panic("clock: speed must be positive and finite")
	}
}

// Mono returns the simulated time elapsed since start. Lock-free.
func (s *Scaled) Mono() time.Duration {
	st := s.state.Load()
	if st.paused {
		return st.simMono
	}
	return st.simMono + time.Duration(float64(s.base.Mono()-st.baseMono)*st.speed)
}

// Now returns the simulated time. Lock-free.
func (s *Scaled) Now() time.Time { return s.start.Add(s.Mono()) }

func (s *Scaled) nowLocked() time.Time { return s.Now() }

// Speed returns the current speed factor.
func (s *Scaled) Speed() float64 { return s.state.Load().speed }

// Paused reports whether simulated time is stopped.
func (s *Scaled) Paused() bool { return s.state.Load().paused }

// SetSpeed changes the speed from now on; pending timers keep their
// simulated deadlines. It panics if speed is not positive and finite.
func (s *Scaled) SetSpeed(speed float64) {
	checkSpeed(speed)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked(func(st *scaledState) { st.speed = speed })
}

// Pause stops simulated time; no timer fires until Resume.
func (s *Scaled) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked(func(st *scaledState) { st.paused = true })
}

// Resume restarts simulated time where Pause left it.
func (s *Scaled) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked(func(st *scaledState) { st.paused = false })
}

// rebaseLocked publishes a new state starting now, changed by f, and
// re-arms pending timers for it.
func (s *Scaled) rebaseLocked(f func(*scaledState)) {
	st := *s.state.Load()
	st.simMono = s.Mono()
	st.baseMono = s.base.Mono()
	f(&st)
	s.state.Store(&st)
	s.rearmLocked()
}

// wallLocked converts a simulated duration into base-clock time, rounding
// up so a timer never fires before its simulated deadline.
func (s *Scaled) wallLocked(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(d) / s.state.Load().speed))
}

func (s *Scaled) rearmLocked() {
	for t := range s.pending {
		t.armLocked()
	}
}

// NewTimer returns a timer that fires after d of simulated time.
func (s *Scaled) NewTimer(d time.Duration) Timer {
	t := &scaledTimer{s: s, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc calls f in its own goroutine after d of simulated time.
func (s *Scaled) AfterFunc(d time.Duration, f func()) Timer {
	t := &scaledTimer{s: s, fn: f}
	t.Reset(d)
	return t
}

// NewTicker returns a ticker with a period of d simulated time.
func (s *Scaled) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := &scaledTimer{s: s, ch: make(chan time.Time, 1), period: d}
	t.Reset(d)
	return ticker{t}
}

type scaledTimer struct {
	s        *Scaled
	ch       chan time.Time
	fn       func()
	period   time.Duration
	deadline time.Time // simulated
	gen      uint64    // invalidates base timers armed before a Stop/Reset/rearm
	base     Timer
}

func (t *scaledTimer) C() <-chan time.Time { return t.ch }

func (t *scaledTimer) Stop() bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.stopLocked()
}

func (t *scaledTimer) stopLocked() bool {
	_, was := t.s.pending[t]
	delete(t.s.pending, t)
	t.gen++
	if t.base != nil {
		t.base.Stop()
		t.base = nil
	}
	return was
}

func (t *scaledTimer) Reset(d time.Duration) bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	was := t.stopLocked()
	if t.ch != nil && t.period == 0 {
		select {
		case <-t.ch:
		default:
		}
	}
	if t.period > 0 {
		t.period = d
	}
	t.deadline = t.s.nowLocked().Add(d)
	t.s.pending[t] = struct{}{}
	t.armLocked()
	return was
}

// armLocked starts a base timer for the remaining simulated time. While the
// clock is paused nothing is armed; Resume re-arms.
func (t *scaledTimer) armLocked() {
	t.gen++
	if t.base != nil {
		t.base.Stop()
		t.base = nil
	}
	if t.s.Paused() {
		return
	}
	gen := t.gen
	wait := t.s.wallLocked(t.deadline.Sub(t.s.nowLocked()))
	t.base = t.s.base.AfterFunc(wait, func() { t.fire(gen) })
}

func (t *scaledTimer) fire(gen uint64) {
	t.s.mu.Lock()
	if gen != t.gen {
		t.s.mu.Unlock()
		return
	}
	now := t.s.nowLocked()
	if now.Before(t.deadline) { // base clock rounding: not yet due
		t.armLocked()
		t.s.mu.Unlock()
		return
	}
	if t.period > 0 {
		// Skip the missed ticks in one step: a ticker far behind (a machine
		// that cannot keep up with a high speed) must not count them one by
		// one under the lock, which holds up every other timer and makes it
		// fall further behind.
		missed := now.Sub(t.deadline)/t.period + 1
		t.deadline = t.deadline.Add(missed * t.period)
		t.armLocked()
	} else {
		delete(t.s.pending, t)
		t.base = nil
	}
	if t.ch != nil {
		select {
		case t.ch <- now:
		default:
		}
	}
	fn := t.fn
	t.s.mu.Unlock()
	if fn != nil {
		go fn()
	}
}
