package clock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func recv(t *testing.T, ch <-chan time.Time) (time.Time, bool) {
	t.Helper()
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimerFiresAtDeadline(t *testing.T) {
	c := clock.NewFake(t0)
	tm := c.NewTimer(5 * time.Second)
	c.Advance(4 * time.Second)
	if _, ok := recv(t, tm.C()); ok {
		t.Fatal("timer fired 1s early")
	}
	c.Advance(time.Second)
	got, ok := recv(t, tm.C())
	if !ok || !got.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("fire = %v, %v; want %v", got, ok, t0.Add(5*time.Second))
	}
	if c.Pending() != 0 {
		t.Fatalf("Pending = %d after fire, want 0", c.Pending())
	}
}

func TestFakeFiresInDeadlineOrderWithNowAtEachDeadline(t *testing.T) {
	c := clock.NewFake(t0)
	var seen []time.Duration
	c.AfterFunc(3*time.Second, func() { seen = append(seen, c.Now().Sub(t0)) })
	c.AfterFunc(1*time.Second, func() { seen = append(seen, c.Now().Sub(t0)) })
	c.AfterFunc(2*time.Second, func() { seen = append(seen, c.Now().Sub(t0)) })
	c.Advance(10 * time.Second)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if len(seen) != 3 || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
		t.Fatalf("fired at %v, want %v", seen, want)
	}
	if got := c.Now().Sub(t0); got != 10*time.Second {
		t.Fatalf("Now = +%v, want +10s", got)
	}
}

func TestFakeStopAndReset(t *testing.T) {
	c := clock.NewFake(t0)
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	c.Advance(2 * time.Second)
	if _, ok := recv(t, tm.C()); ok {
		t.Fatal("stopped timer fired")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported it pending")
	}
	c.Advance(time.Second)
	if _, ok := recv(t, tm.C()); !ok {
		t.Fatal("reset timer did not fire")
	}
}

func TestFakeTickerDropsTicksForSlowReceiver(t *testing.T) {
	c := clock.NewFake(t0)
	tk := c.NewTicker(time.Second)
	defer tk.Stop()
	c.Advance(5 * time.Second) // five ticks, one buffered
	got, ok := recv(t, tk.C())
	if !ok || !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("first tick = %v %v, want +1s (the buffered one)", got, ok)
	}
	if _, ok := recv(t, tk.C()); ok {
		t.Fatal("more than one tick buffered")
	}
	c.Advance(time.Second)
	if got, _ := recv(t, tk.C()); !got.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("tick = %v, want +6s", got)
	}
}

func TestSleepReturnsOnContextEnd(t *testing.T) {
	c := clock.NewFake(t0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clock.Sleep(ctx, c, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
}

func TestScaledRunsFasterThanBase(t *testing.T) {
	base := clock.NewFake(t0)
	s := clock.NewScaledOn(base, t0, 10)
	base.Advance(6 * time.Second)
	if got := s.Now().Sub(t0); got != time.Minute {
		t.Fatalf("after 6 wall seconds at speed 10, sim = +%v, want +1m", got)
	}
}

func TestScaledTimerKeepsSimDeadlineAcrossSpeedChangeAndPause(t *testing.T) {
	base := clock.NewFake(t0)
	s := clock.NewScaledOn(base, t0, 10)
	tm := s.NewTimer(time.Minute) // 6 wall seconds at speed 10

	base.Advance(3 * time.Second) // 30 sim seconds gone
	s.SetSpeed(30)                // 30 sim seconds left = 1 wall second
	s.Pause()
	base.Advance(time.Hour)
	if _, ok := recv(t, tm.C()); ok {
		t.Fatal("timer fired while paused")
	}
	if got := s.Now().Sub(t0); got != 30*time.Second {
		t.Fatalf("paused clock moved: sim = +%v, want +30s", got)
	}
	s.Resume()
	base.Advance(999 * time.Millisecond)
	if _, ok := recv(t, tm.C()); ok {
		t.Fatal("timer fired before its simulated deadline")
	}
	base.Advance(time.Millisecond)
	got, ok := recv(t, tm.C())
	if !ok || got.Sub(t0) != time.Minute {
		t.Fatalf("fire = +%v %v, want +1m", got.Sub(t0), ok)
	}
}

func TestScaledTicker(t *testing.T) {
	base := clock.NewFake(t0)
	s := clock.NewScaledOn(base, t0, 5)
	tk := s.NewTicker(5 * time.Second) // 1 wall second
	defer tk.Stop()
	for i := 1; i <= 3; i++ {
		base.Advance(time.Second)
		got, ok := recv(t, tk.C())
		if !ok || got.Sub(t0) != time.Duration(i)*5*time.Second {
			t.Fatalf("tick %d = +%v %v", i, got.Sub(t0), ok)
		}
	}
}

func TestScaledRejectsBadSpeed(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewScaled(0) did not panic")
		}
	}()
	clock.NewScaled(t0, 0)
}

// TestFakeWaitDue: WaitDue returns once another goroutine arms a timer that
// the Advance would fire, not for one due later; on its context's end the
// error lists what was pending.
func TestFakeWaitDue(t *testing.T) {
	c := clock.NewFake(t0)
	tk := c.NewTicker(time.Minute) // pending, but not due within a second
	defer tk.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := c.WaitDue(ctx, time.Second)
	if err == nil || !strings.Contains(err.Error(), "no timer due within 1s") || !strings.Contains(err.Error(), "+1m0s (ticker)") {
		t.Fatalf("WaitDue with only a later ticker = %v; want an error listing +1m0s (ticker)", err)
	}

	armed := make(chan clock.Timer)
	go func() { armed <- c.NewTimer(time.Second) }()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitDue(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	tm := <-armed
	c.Advance(time.Second)
	if _, ok := recv(t, tm.C()); !ok {
		t.Fatal("the timer WaitDue saw did not fire in Advance")
	}
}

// jumpy is a base clock whose time can jump ahead without firing its
// timers, as the wall clock does for a process that was not scheduled.
type jumpy struct {
	*clock.Fake
	skip time.Duration
}

func (j *jumpy) Mono() time.Duration { return j.Fake.Mono() + j.skip }

// TestScaledTickerFarBehindCatchesUpAtOnce: a ticker whose base timer
// fires long after its deadline (at a high speed on a busy machine) skips
// the missed ticks in one step and ticks again one period after now. Counted
// one by one under the clock's lock, ten years of 1 ms ticks never return.
func TestScaledTickerFarBehindCatchesUpAtOnce(t *testing.T) {
	base := &jumpy{Fake: clock.NewFake(t0)}
	s := clock.NewScaledOn(base, t0, 1)
	tk := s.NewTicker(time.Millisecond)
	base.skip = 10 * 365 * 24 * time.Hour
	done := make(chan struct{})
	go func() {
		defer close(done)
		base.Advance(time.Millisecond) // fires the ticker's base timer, late
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// No tk.Stop: the lock it takes is held by the loop.
		t.Fatal("a ticker ten years behind has not caught up after 10s")
	}
	defer tk.Stop()
	got, ok := recv(t, tk.C())
	want := t0.Add(base.skip + time.Millisecond)
	if !ok || !got.Equal(want) {
		t.Fatalf("tick = %v %v, want %v", got, ok, want)
	}
	base.Advance(time.Millisecond) // the next tick is one period later
	if got, ok := recv(t, tk.C()); !ok || !got.Equal(want.Add(time.Millisecond)) {
		t.Fatalf("next tick = %v %v, want %v", got, ok, want.Add(time.Millisecond))
	}
}
