package clock

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Virtual is simulated time that moves only when the process has
// settled: every goroutine waits (on a timer, a channel, a lock, a
// connection's input) and no Hold is held. Then it jumps to the next
// timer's deadline and fires that one timer; the process runs what the
// timer set off until it settles again, and so on. Host CPU costs no
// simulated time, so a run gives the same results on a busy machine as
// on an idle one, and idle simulated time costs no wall time at all.
//
// Timers due at the same instant fire one at a time, each after the
// process has settled from the one before: what one sets off is over
// before the next begins. Their order is fixed: by their owners' keys
// (Keyed), then in the order each owner armed them.
//
// A speed ceiling (VirtualOptions.Speed, SetSpeed) keeps the clock from
// running more than that many simulated seconds per wall second, for a
// person watching; a slow machine makes it run slower, never differently.
// Pause stops it.
//
// The clock moves only while Run runs. One goroutine of the process's
// (the advancer) moves every Virtual clock that runs; when the process
// does not settle within StallTimeout of wall time with nothing in it
// moving (a goroutine spinning, a Hold never released), the advancer
// fires the next timer anyway and counts a forced advance (Forced,
// ForcedReasons say what held it). Safe for concurrent use.
type Virtual struct {
	origin time.Time
	now    atomic.Int64 // nanoseconds since origin
	stall  time.Duration

	mu      sync.Mutex
	timers  timerHeap
	seq     uint64 // arm order: breaks ties between timers due at one instant
	speed   float64
	paused  bool
	anchor  ceilingAnchor
	rate    rateMeter
	forced  uint64
	reasons []string
	stuck   string // see Stalled
}

// VirtualOptions configures NewVirtual.
type VirtualOptions struct {
	// Speed is the ceiling in simulated seconds per wall second; 0: none,
	// as fast as the process settles.
	Speed float64
	// StallTimeout is how long the process may go without settling, and
	// without anything in it moving, before the clock advances anyway.
	// Default DefaultStallTimeout.
	StallTimeout time.Duration
}

// DefaultStallTimeout is VirtualOptions.StallTimeout's default: far
// beyond a step's work even on a starved machine (a garbage collection
// of a large heap takes seconds), short enough that a hang is named
// before a CI job times out.
const DefaultStallTimeout = 10 * time.Second

// maxForcedReasons bounds the reasons a clock keeps.
const maxForcedReasons = 5

// NewVirtual returns a Virtual clock reading start, stopped until Run. It
// panics if o.Speed is negative, NaN or infinite.
func NewVirtual(start time.Time, o VirtualOptions) *Virtual {
	checkCeiling(o.Speed)
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	v := &Virtual{origin: start, stall: o.StallTimeout, speed: o.Speed}
	v.anchor.set(wallNow(), 0)
	return v
}

func checkCeiling(speed float64) {
	if !(speed >= 0) || math.IsInf(speed, 0) {
		panic("clock: a speed ceiling must be 0 (none) or positive and finite")
	}
}

// Now returns the simulated time. Lock-free.
func (v *Virtual) Now() time.Time { return v.origin.Add(time.Duration(v.now.Load())) }

// Mono returns the simulated time since the clock's start. Lock-free.
func (v *Virtual) Mono() time.Duration { return time.Duration(v.now.Load()) }

// NewTimer returns a timer that fires after d of simulated time.
func (v *Virtual) NewTimer(d time.Duration) Timer { return v.newTimer(0, d) }

// AfterFunc calls f in its own goroutine after d of simulated time.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer { return v.afterFunc(0, d, f) }

// NewTicker returns a ticker with a period of d simulated time.
func (v *Virtual) NewTicker(d time.Duration) Ticker { return v.newTicker(0, d) }

func (v *Virtual) newTimer(key uint64, d time.Duration) Timer {
	t := &vtimer{v: v, ch: make(chan time.Time, 1), key: key, index: -1}
	t.Reset(d)
	return t
}

func (v *Virtual) afterFunc(key uint64, d time.Duration, f func()) Timer {
	t := &vtimer{v: v, fn: f, key: key, index: -1}
	t.Reset(d)
	return t
}

func (v *Virtual) newTicker(key uint64, d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := &vtimer{v: v, ch: make(chan time.Time, 1), period: d, key: key, index: -1}
	t.Reset(d)
	return ticker{t}
}

// Run moves the clock until ctx ends, then returns nil. The clock does
// not move before Run or after it returns; a second Run at the same time
// returns at once with an error.
func (v *Virtual) Run(ctx context.Context) error {
	if err := adv.register(v); err != nil {
		return err
	}
	<-ctx.Done()
	adv.unregister(v)
	return nil
}

// startCeiling starts the ceiling's line from now: the clock does not
// move before Run, and has no wall time in hand when it starts.
func (v *Virtual) startCeiling() {
	v.mu.Lock()
	v.anchor.set(wallNow(), v.Mono())
	v.mu.Unlock()
}

// Settle waits until the process has settled at the current simulated
// instant, or ctx ends: a timer due now fires only once what is under way
// has run its course. A goroutine that set off work in others (told a
// hundred workers to partition, subscribed to a flood of retained
// messages) calls it to go on from the same state on every run.
func (v *Virtual) Settle(ctx context.Context) error { return v.settle(ctx, 0) }

func (v *Virtual) settle(ctx context.Context, key uint64) error {
	return wait(ctx, v.newTimer(key, 0))
}

// Speed returns the ceiling (0: none).
func (v *Virtual) Speed() float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.speed
}

// SetSpeed sets the ceiling from now on (0: none). It panics if speed is
// negative, NaN or infinite.
func (v *Virtual) SetSpeed(speed float64) {
	checkCeiling(speed)
	v.mu.Lock()
	v.speed = speed
	v.anchor.set(wallNow(), v.Mono())
	v.mu.Unlock()
	adv.kick()
}

// Pause stops the clock: no timer fires until Resume.
func (v *Virtual) Pause() {
	v.mu.Lock()
	v.paused = true
	v.mu.Unlock()
}

// Resume lets the clock move again.
func (v *Virtual) Resume() {
	v.mu.Lock()
	v.paused = false
	v.anchor.set(wallNow(), v.Mono())
	v.mu.Unlock()
	adv.kick()
}

// Paused reports whether the clock is paused.
func (v *Virtual) Paused() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.paused
}

// Rate returns the speed the clock has reached over the last few wall
// seconds: simulated seconds per wall second.
func (v *Virtual) Rate() float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.rate.rate(wallNow(), v.Mono())
}

// Forced returns how many times the clock advanced before the process
// settled (see StallTimeout).
func (v *Virtual) Forced() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.forced
}

// ForcedReasons returns what held the process each time the clock was
// forced, the first few times: the simulated time and what was busy.
func (v *Virtual) ForcedReasons() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.reasons...)
}

// Stalled says, once one timer has fired stuckRepeats times at one
// instant (something re-arms it due at once, and simulated time would
// never move on), where the clock is stuck; "" otherwise.
func (v *Virtual) Stalled() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.stuck
}

// stuckRepeats is how many times one timer may fire at one instant before
// the clock counts as stuck there: a retry loop with no delay does it in
// a fraction of a second, and no timer of a working simulation comes near.
const stuckRepeats = 10_000

// Pending reports how many timers and tickers are armed.
func (v *Virtual) Pending() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.timers)
}

// next says what the clock would do now, at wall time wall: fire its
// next timer (ok), or wait that long of wall time for its ceiling to
// allow it (wait > 0), or nothing (no timer armed, or paused; wait < 0).
func (v *Virtual) next(wall time.Duration) (ok bool, wait time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.nextLocked(wall)
}

func (v *Virtual) nextLocked(wall time.Duration) (bool, time.Duration) {
	if v.paused || len(v.timers) == 0 {
		return false, -1
	}
	when := v.timers[0].when
	if when <= v.now.Load() || v.speed == 0 {
		return true, 0
	}
	if limit := v.anchor.limit(wall, v.speed); when > limit {
		return false, max(time.Duration(math.Ceil(float64(when-limit)/v.speed)), 1)
	}
	return true, 0
}

// fire fires the next timer if the clock may now (see next), moving
// the clock to its deadline. A forced advance is counted first, with
// why.
func (v *Virtual) fire(wall time.Duration, forced string) bool {
	v.mu.Lock()
	if ok, _ := v.nextLocked(wall); !ok {
		v.mu.Unlock()
		return false
	}
	t := heap.Pop(&v.timers).(*vtimer)
	if forced != "" {
		v.forced++
		if len(v.reasons) < maxForcedReasons {
			v.reasons = append(v.reasons, "at "+time.Duration(v.now.Load()).String()+": "+forced)
		}
	}
	if t.when > v.now.Load() {
		v.now.Store(t.when)
		if v.speed > 0 {
			v.anchor.follow(wall, t.when, v.speed)
		}
	}
	if t.firedAt == t.when {
		if t.repeats++; t.repeats == stuckRepeats && v.stuck == "" {
			v.stuck = fmt.Sprintf("simulated time stood at %v while one timer due then fired %d times: something re-arms it due at once (a retry with no delay?)",
				time.Duration(t.when), t.repeats)
		}
	} else {
		t.firedAt, t.repeats = t.when, 1
	}
	v.rate.note(wall, t.when)
	now := v.Now()
	if t.period > 0 {
		t.when += int64(t.period)
		v.push(t)
	}
	if t.ch != nil {
		select {
		case t.ch <- now:
		default: // a slow receiver misses the tick, as with time.Ticker
		}
	}
	fn := t.fn
	v.mu.Unlock()
	progress.Add(1)
	if fn != nil {
		go fn()
	}
	return true
}

// push arms t at t.when. v.mu is held.
func (v *Virtual) push(t *vtimer) {
	v.seq++
	t.seq = v.seq
	heap.Push(&v.timers, t)
}

// ceilingAnchor is the line a speed ceiling follows: simulated time sim
// at wall time wall, and speed simulated seconds per wall second after.
type ceilingAnchor struct {
	wall, sim time.Duration
}

// maxLead is how much wall time a clock that fell behind its ceiling
// (the machine was slow) may make up at once: it then runs at the
// process's pace, up to the ceiling, rather than catching up in a rush.
const maxLead = 100 * time.Millisecond

func (a *ceilingAnchor) set(wall, sim time.Duration) { a.wall, a.sim = wall, sim }

// limit is how far simulated time may have come by wall time wall.
func (a *ceilingAnchor) limit(wall time.Duration, speed float64) int64 {
	return int64(a.sim) + int64(float64(wall-a.wall)*speed)
}

// follow moves the anchor after the clock reached sim at wall, so that
// it never has more than maxLead of wall time in hand.
func (a *ceilingAnchor) follow(wall time.Duration, sim int64, speed float64) {
	if a.limit(wall, speed)-sim > int64(float64(maxLead)*speed) {
		a.set(wall-maxLead, time.Duration(sim))
	}
}

// rateMeter keeps a few recent (wall, simulated) points of a clock to
// tell its pace.
type rateMeter struct {
	pts  [32]ratePoint
	n, i int
}

type ratePoint struct{ wall, sim time.Duration }

// rateEvery spaces the points; rateWindow is how far back the pace is
// taken.
const (
	rateEvery  = 100 * time.Millisecond
	rateWindow = 3 * time.Second
)

func (m *rateMeter) note(wall time.Duration, sim int64) {
	if m.n > 0 && wall-m.pts[(m.i+len(m.pts)-1)%len(m.pts)].wall < rateEvery {
		return
	}
	m.pts[m.i] = ratePoint{wall, time.Duration(sim)}
	m.i = (m.i + 1) % len(m.pts)
	m.n = min(m.n+1, len(m.pts))
}

// rate is simulated seconds per wall second from the oldest point within
// rateWindow (or the oldest kept) to (wall, sim).
func (m *rateMeter) rate(wall, sim time.Duration) float64 {
	var from *ratePoint
	for k := range m.n {
		p := &m.pts[(m.i+len(m.pts)-m.n+k)%len(m.pts)]
		if wall-p.wall <= rateWindow || k == m.n-1 {
			from = p
			break
		}
	}
	if from == nil || wall <= from.wall {
		return 0
	}
	return float64(sim-from.sim) / float64(wall-from.wall)
}

// vtimer is a Virtual clock's timer, ticker or AfterFunc.
type vtimer struct {
	v      *Virtual
	ch     chan time.Time
	fn     func()
	period time.Duration // > 0 for a ticker
	when   int64         // deadline, nanoseconds since the clock's origin
	key    uint64        // its owner's (Keyed)
	seq    uint64
	// firedAt is the deadline it last fired at, repeats how many times it
	// fired at that one (see Virtual.Stalled).
	firedAt int64
	repeats int
	index   int // in the heap; -1 when not armed
}

func (t *vtimer) C() <-chan time.Time { return t.ch }

func (t *vtimer) Stop() bool {
	t.v.mu.Lock()
	was := t.stopLocked()
	t.v.mu.Unlock()
	progress.Add(1)
	return was
}

func (t *vtimer) stopLocked() bool {
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.v.timers, t.index)
	return true
}

func (t *vtimer) Reset(d time.Duration) bool {
	v := t.v
	v.mu.Lock()
	was := t.stopLocked()
	if t.ch != nil && t.period == 0 {
		select { // Go 1.23 semantics: Reset discards a stale fire time.
		case <-t.ch:
		default:
		}
	}
	if t.period > 0 {
		t.period = d
	}
	t.when = v.now.Load() + int64(max(d, 0))
	v.push(t)
	v.mu.Unlock()
	progress.Add(1)
	adv.kick()
	return was
}

// timerHeap orders timers by deadline, then by owner, then by arm order.
type timerHeap []*vtimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	switch {
	case a.when != b.when:
		return a.when < b.when
	case a.key != b.key:
		return a.key < b.key
	}
	return a.seq < b.seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*vtimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// wallNow is the wall clock's monotonic reading.
func wallNow() time.Duration { return Real{}.Mono() }
