package clock

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// adv is the process's advancer: one goroutine that moves every running
// Virtual clock, since whether the process has settled is a question
// about the whole process. It runs while at least one clock runs.
var adv advancer

type advancer struct {
	// life serialises starting and stopping the goroutine: a clock that
	// registers while the last one's unregister waits for the goroutine
	// to end starts the next goroutine after it has ended, so that two
	// never run at once.
	life sync.Mutex

	mu      sync.Mutex
	clocks  []*Virtual
	done    chan struct{} // closed when the goroutine exits; nil if none runs
	stop    atomic.Bool   // no clock runs: the goroutine exits
	waiting atomic.Bool   // the goroutine waits for a kick
	kicks   chan struct{}
	settler *settler
}

var errRunning = errors.New("clock: this Virtual clock is already running")

func (a *advancer) register(v *Virtual) error {
	a.life.Lock()
	defer a.life.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if slices.Contains(a.clocks, v) {
		return errRunning
	}
	a.clocks = append(a.clocks, v)
	v.startCeiling()
	if a.done == nil {
		if a.kicks == nil {
			a.kicks = make(chan struct{}, 1)
			a.settler = newSettler()
		}
		a.stop.Store(false)
		a.done = make(chan struct{})
		go a.run(a.done)
	}
	a.kickLocked()
	return nil
}

// unregister stops moving v; the last clock's unregister stops the
// goroutine and waits for it.
func (a *advancer) unregister(v *Virtual) {
	a.life.Lock()
	defer a.life.Unlock()
	a.mu.Lock()
	a.clocks = slices.DeleteFunc(a.clocks, func(c *Virtual) bool { return c == v })
	var done chan struct{}
	if len(a.clocks) == 0 && a.done != nil {
		done, a.done = a.done, nil
		a.stop.Store(true)
	}
	a.kickLocked()
	a.mu.Unlock()
	if done != nil {
		<-done
	}
}

// kick wakes the goroutine if it waits for a timer to be armed, a
// ceiling to pass or a clock to come or go.
func (a *advancer) kick() {
	if a.waiting.Load() {
		a.mu.Lock()
		a.kickLocked()
		a.mu.Unlock()
	}
}

func (a *advancer) kickLocked() {
	if a.kicks == nil {
		return
	}
	select {
	case a.kicks <- struct{}{}:
	default:
	}
}

func (a *advancer) running() []*Virtual {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.clocks)
}

// run is the advancer's loop: wait until some clock may fire, wait for
// the process to settle, fire the next timer of every clock that may.
func (a *advancer) run(done chan struct{}) {
	defer close(done)
	for !a.stop.Load() {
		clocks := a.running()
		wall := wallNow()
		wait, any := time.Duration(-1), false
		for _, v := range clocks {
			ok, w := v.next(wall)
			if ok {
				any = true
				break
			}
			if w > 0 && (wait < 0 || w < wait) {
				wait = w
			}
		}
		if !any {
			a.idle(wait)
			continue
		}
		forced := a.settle(clocks)
		if a.stop.Load() {
			return
		}
		wall = wallNow()
		for _, v := range clocks {
			v.fire(wall, forced)
		}
	}
}

// idle waits for a kick, or for wait of wall time if wait > 0.
func (a *advancer) idle(wait time.Duration) {
	a.waiting.Store(true)
	defer a.waiting.Store(false)
	// A timer armed between the caller's look and the flag above found
	// no one waiting: look again before sleeping.
	wall := wallNow()
	for _, v := range a.running() {
		if ok, _ := v.next(wall); ok {
			return
		}
	}
	if a.stop.Load() {
		return
	}
	if wait < 0 {
		<-a.kicks
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-a.kicks:
	case <-t.C:
	}
}

// settle waits until the process has settled and returns "", or, when
// it has not settled within the clocks' stall timeout while nothing in
// it moved, returns what held it (a forced advance). It spins briefly,
// yielding, then sleeps in growing steps so that a process waiting on
// a system call does not cost a core. It returns early when the last
// clock stops.
func (a *advancer) settle(clocks []*Virtual) string {
	s := a.settler
	stall := DefaultStallTimeout
	for _, v := range clocks {
		stall = min(stall, v.stall)
	}
	var (
		nap      time.Duration
		lastMark = progress.Load()
		since    = time.Now()
	)
	for spin := 0; ; spin++ {
		now := time.Now()
		if s.settled(now) || a.stop.Load() {
			return ""
		}
		// Progress restarts the stall's count: a process that works
		// (timers armed, bytes moving) is not stuck, however long.
		if m := progress.Load(); m != lastMark {
			lastMark, since = m, now
		} else if now.Sub(since) >= stall {
			return s.describe()
		}
		switch {
		case spin < settleSpins:
			runtime.Gosched()
		default:
			nap = min(max(2*nap, minNap), maxNap)
			time.Sleep(nap)
		}
	}
}

// The settle wait's pace: yield settleSpins times (a step's work is
// usually done within them), then sleep from minNap, doubling to maxNap.
const (
	settleSpins = 64
	minNap      = 20 * time.Microsecond
	maxNap      = time.Millisecond
)
