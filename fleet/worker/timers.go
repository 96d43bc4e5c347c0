package worker

import (
	"math/rand/v2"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// timer names one of a worker's due times.
type timer uint8

const (
	tReconnect timer = iota // the next connection attempt
	tService                // the command in service is done
	tHeartbeat              // ticks every timers.hbEvery
	tTelemetry              // ticks every timers.telEvery
	tWake                   // the earliest of: ask deadlines, sync retry, outbox flush, a delayed answer
	nTimers
)

// timers are a worker's due times, as Unix nanoseconds on its clock (0:
// not armed). They are not clocks: the driver that runs the worker arms
// one clock timer at the earliest of them (its own, or its loop's for
// many workers) and calls Worker.runTimers when it fires, so an idle
// worker costs no timer of the clock's. The two tickers keep a grid, as
// a clock ticker does: a tick the driver was too late for is skipped,
// not made up.
type timers struct {
	at                [nTimers]int64
	hbEvery, telEvery time.Duration // 0: off
}

// init starts the tickers, each at its own phase: the first tick comes a
// random part of its interval from now (drawn from r), as a fleet's
// devices, started at different moments, do not beat in step.
func (t *timers) init(now time.Time, hb, tel time.Duration, r *rand.Rand) {
	t.hbEvery, t.telEvery = hb, tel
	for _, k := range [...]struct {
		k timer
		d time.Duration
	}{{tHeartbeat, hb}, {tTelemetry, tel}} {
		if k.d > 0 {
			t.after(k.k, now, time.Duration(r.Int64N(int64(k.d)))+1)
		}
	}
}

// after arms k to fire d after now.
func (t *timers) after(k timer, now time.Time, d time.Duration) {
	t.at[k] = now.Add(max(d, 0)).UnixNano()
}

// stop disarms k.
func (t *timers) stop(k timer) { t.at[k] = 0 }

// tick starts a ticker afresh, a full interval from now; d <= 0 stops it.
func (t *timers) tick(k timer, now time.Time, d time.Duration) {
	if d <= 0 {
		t.at[k] = 0
		return
	}
	t.after(k, now, d)
}

// setHeartbeat changes the heartbeat interval; 0 stops heartbeats.
func (t *timers) setHeartbeat(now time.Time, d time.Duration) {
	t.hbEvery = max(d, 0)
	t.tick(tHeartbeat, now, d)
}

// setTelemetry changes the telemetry interval; 0 stops telemetry.
func (t *timers) setTelemetry(now time.Time, d time.Duration) {
	t.telEvery = max(d, 0)
	t.tick(tTelemetry, now, d)
}

// reboot stops the one-shot timers a reboot loses (the service and the
// wake; the caller arms the reconnect) and starts the tickers afresh, a
// full interval from now.
func (t *timers) reboot(now time.Time) {
	t.stop(tService)
	t.stop(tWake)
	t.tick(tHeartbeat, now, t.hbEvery)
	t.tick(tTelemetry, now, t.telEvery)
}

// wakeBy makes sure the worker wakes no later than at. A wake armed
// earlier and still ahead is kept: waking early costs one housekeeping.
func (t *timers) wakeBy(now, at time.Time) {
	if at.IsZero() {
		return
	}
	w, n := t.at[tWake], now.UnixNano()
	if w != 0 && w <= at.UnixNano() && w > n {
		return
	}
	t.at[tWake] = max(at.UnixNano(), 1)
}

// take reports whether k is due at now and, if it is, disarms it (a
// one-shot) or moves it to its next grid point after now (a ticker).
func (t *timers) take(k timer, now int64) bool {
	at := t.at[k]
	if at == 0 || at > now {
		return false
	}
	var every time.Duration
	switch k {
	case tHeartbeat:
		every = t.hbEvery
	case tTelemetry:
		every = t.telEvery
	}
	if every <= 0 {
		t.at[k] = 0
		return true
	}
	e := int64(every)
	t.at[k] = at + ((now-at)/e+1)*e
	return true
}

// takeDue takes every timer due at now (see take) and returns them as a
// set (bit k for timer k).
func (t *timers) takeDue(now int64) uint8 {
	var due uint8
	for k := range nTimers {
		if t.take(k, now) {
			due |= 1 << k
		}
	}
	return due
}

// next is the earliest armed due time, 0 if none is.
func (t *timers) next() int64 {
	var n int64
	for _, at := range t.at {
		if at != 0 && (n == 0 || at < n) {
			n = at
		}
	}
	return n
}

// off disarms everything (the worker stopped).
func (t *timers) off() { t.at = [nTimers]int64{} }

// dueTimer is a driver's one clock timer, armed at a due time.
type dueTimer struct {
	clk   clock.Clock
	t     clock.Timer
	armed int64 // the due time t is armed for; 0: stopped
}

func newDueTimer(c clock.Clock) *dueTimer {
	t := c.NewTimer(time.Hour)
	t.Stop()
	return &dueTimer{clk: c, t: t}
}

// arm arms the timer at n (0: stops it) and reports false, or reports
// true if n is due already and arms nothing: the caller fires at once,
// as a clock timer armed when the time was set would have.
func (d *dueTimer) arm(n int64) (due bool) {
	if n == d.armed {
		return false
	}
	if n == 0 {
		d.t.Stop()
		d.armed = 0
		return false
	}
	wait := time.Unix(0, n).Sub(d.clk.Now())
	if wait <= 0 {
		return true
	}
	d.t.Reset(wait)
	d.armed = n
	return false
}

// force arms the timer at n even if it is due already (it fires at the
// clock's next move).
func (d *dueTimer) force(n int64) {
	d.t.Reset(max(time.Unix(0, n).Sub(d.clk.Now()), 0))
	d.armed = n
}

// fired notes that the timer fired: it is armed no more.
func (d *dueTimer) fired() { d.armed = 0 }

func (d *dueTimer) stop() { d.t.Stop() }
