package worker

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// timers are the worker loop's clocks. A stopped timer's channel never
// fires, so the loop's select needs no nil-channel juggling for them;
// tickers that are off return a nil channel.
type timers struct {
	clk       clock.Clock
	reconnect clock.Timer
	service   clock.Timer
	wake      clock.Timer // the earliest of: ask deadlines, sync retry, outbox flush
	wakeAt    time.Time
	hb, tel   clock.Ticker
	// hbEvery and telEvery are the tickers' intervals (0: off), to start
	// them afresh after a reboot.
	hbEvery, telEvery time.Duration
}

func (t *timers) init(c clock.Clock, hb, tel time.Duration) {
	t.clk = c
	t.reconnect = stopped(c)
	t.service = stopped(c)
	t.wake = stopped(c)
	t.hbEvery, t.telEvery = hb, tel
	if hb > 0 {
		t.hb = c.NewTicker(hb)
	}
	if tel > 0 {
		t.tel = c.NewTicker(tel)
	}
}

func stopped(c clock.Clock) clock.Timer {
	t := c.NewTimer(time.Hour)
	t.Stop()
	return t
}

func (t *timers) heartbeat() <-chan time.Time {
	if t.hb == nil {
		return nil
	}
	return t.hb.C()
}

func (t *timers) telemetry() <-chan time.Time {
	if t.tel == nil {
		return nil
	}
	return t.tel.C()
}

// setHeartbeat changes the heartbeat interval; 0 stops heartbeats.
func (t *timers) setHeartbeat(d time.Duration) { t.hb, t.hbEvery = t.retick(t.hb, d), max(d, 0) }

// setTelemetry changes the telemetry interval; 0 stops telemetry.
func (t *timers) setTelemetry(d time.Duration) { t.tel, t.telEvery = t.retick(t.tel, d), max(d, 0) }

// reboot stops the one-shot timers (a reboot loses what they were for)
// and starts the tickers afresh, a full interval from now.
func (t *timers) reboot() {
	t.service.Stop()
	t.wake.Stop()
	t.wakeAt = time.Time{}
	t.setHeartbeat(t.hbEvery)
	t.setTelemetry(t.telEvery)
}

// retick returns tk changed to tick every d: stopped and nil for 0, new if
// it was off.
func (t *timers) retick(tk clock.Ticker, d time.Duration) clock.Ticker {
	switch {
	case d <= 0:
		if tk != nil {
			tk.Stop()
		}
		return nil
	case tk == nil:
		return t.clk.NewTicker(d)
	default:
		tk.Reset(d)
		return tk
	}
}

// wakeBy makes sure the loop wakes no later than at.
func (t *timers) wakeBy(at time.Time) {
	if at.IsZero() {
		return
	}
	if !t.wakeAt.IsZero() && !at.Before(t.wakeAt) && t.wakeAt.After(t.clk.Now()) {
		return
	}
	t.wakeAt = at
	t.wake.Reset(max(at.Sub(t.clk.Now()), 0))
}

func (t *timers) stop() {
	t.reconnect.Stop()
	t.service.Stop()
	t.wake.Stop()
	if t.hb != nil {
		t.hb.Stop()
	}
	if t.tel != nil {
		t.tel.Stop()
	}
}
