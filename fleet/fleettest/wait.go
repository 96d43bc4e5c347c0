package fleettest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Eventually polls check every 10 ms until it returns nil, or fails the
// test once timeout has passed on the wall clock. The failure names what it
// waited for and the last error check returned, which says what was seen
// instead ("97 of 100 at 2.0.0"), so a test that times out on a loaded
// machine tells why. It is for tests whose work happens in other
// goroutines; it does not sleep to let something happen, it waits for a
// condition.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last seen: %v", timeout, what, err)
		}
		<-tick.C
	}
}

// Unless returns nil if ok, or else an error saying what was seen, formatted
// as fmt.Sprintf: the usual body of an Eventually check.
//
//	return fleettest.Unless(got == n, "%d of %d at 2.0.0", got, n)
func Unless(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// Receive returns the next value from ch, or fails the test after timeout
// on the wall clock, naming what it waited for and, if seen is not nil,
// what seen reports (the state of the actor that should have sent).
func Receive[T any](t testing.TB, timeout time.Duration, what string, ch <-chan T, seen func() string) T {
	t.Helper()
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.C:
		state := "nothing arrived"
		if seen != nil {
			state += "; " + seen()
		}
		t.Fatalf("waited %v for %s; %s", timeout, what, state)
		var zero T
		return zero
	}
}

// Advance moves clk forward by d once a timer or ticker that the move fires
// is pending. A goroutine under test arms its timers in its own time: an
// Advance that came first would leave the timer waiting for a move that
// never comes. Advance waits up to 10 s of wall time for the timer; what
// names it, and the failure lists the timers that were pending instead.
//
// It is for a move that must fire something. A move that must fire nothing
// (nothing is armed, so nothing can happen) calls clk.Advance directly.
func Advance(t testing.TB, clk *clock.Fake, d time.Duration, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.WaitDue(ctx, d); err != nil {
		t.Fatalf("advance %v to fire %s: %v", d, what, err)
	}
	clk.Advance(d)
}

// AdvanceToNext moves clk to the next deadline, once one is due within d,
// and fires what is due there and nothing after. A worker's tickers start
// at a random phase within their period: advancing a whole period would
// also fire what the tick itself arms (an ask's deadline a second later).
func AdvanceToNext(t testing.TB, clk *clock.Fake, d time.Duration, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.WaitDue(ctx, d); err != nil {
		t.Fatalf("advance to %s: %v", what, err)
	}
	next, _ := clk.NextDeadline()
	clk.Set(next)
}
