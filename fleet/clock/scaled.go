package clock

import (
	"math"
	"sync"
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
	base Clock

	mu      sync.Mutex
	baseAt  time.Time // base time of the last rebase
	simAt   time.Time // simulated time at the last rebase
	speed   float64
	paused  bool
	pending map[*scaledTimer]struct{}
}

// NewScaled returns a clock reading start, running speed times faster than
// the wall clock. It panics if speed is not positive and finite.
func NewScaled(start time.Time, speed float64) *Scaled {
	return NewScaledOn(Real{}, start, speed)
}

// NewScaledOn is NewScaled over an arbitrary base clock (a Fake in tests).
func NewScaledOn(base Clock, start time.Time, speed float64) *Scaled {
	checkSpeed(speed)
	return &Scaled{
		base:    base,
		baseAt:  base.Now(),
		simAt:   start,
		speed:   speed,
		pending: make(map[*scaledTimer]struct{}),
	}
}

func checkSpeed(speed float64) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		panic("clock: speed must be positive and finite")
	}
}

// Now returns the simulated time.
func (s *Scaled) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Scaled) nowLocked() time.Time {
	if s.paused {
		return s.simAt
	}
	elapsed := s.base.Now().Sub(s.baseAt)
	return s.simAt.Add(time.Duration(float64(elapsed) * s.speed))
}

// Speed returns the current speed factor.
func (s *Scaled) Speed() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.speed
}

// Paused reports whether simulated time is stopped.
func (s *Scaled) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// SetSpeed changes the speed from now on; pending timers keep their
// simulated deadlines. It panics if speed is not positive and finite.
func (s *Scaled) SetSpeed(speed float64) {
	checkSpeed(speed)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked()
	s.speed = speed
	s.rearmLocked()
}

// Pause stops simulated time; no timer fires until Resume.
func (s *Scaled) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked()
	s.paused = true
	s.rearmLocked()
}

// Resume restarts simulated time where Pause left it.
func (s *Scaled) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebaseLocked()
	s.paused = false
	s.rearmLocked()
}

func (s *Scaled) rebaseLocked() {
	s.simAt = s.nowLocked()
	s.baseAt = s.base.Now()
}

// wallLocked converts a simulated duration into base-clock time, rounding
// up so a timer never fires before its simulated deadline.
func (s *Scaled) wallLocked(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(d) / s.speed))
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
	return scaledTicker{t}
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
	if t.s.paused {
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
		for !t.deadline.After(now) {
			t.deadline = t.deadline.Add(t.period)
		}
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

type scaledTicker struct{ t *scaledTimer }

func (k scaledTicker) C() <-chan time.Time { return k.t.ch }
func (k scaledTicker) Stop()               { k.t.Stop() }
func (k scaledTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	k.t.Reset(d)
}
