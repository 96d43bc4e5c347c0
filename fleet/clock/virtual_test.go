package clock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// runVirtual starts c's Run for the test and stops it at the end.
func runVirtual(t *testing.T, c *clock.Virtual) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// wait receives from ch, failing the test after a generous wall-time
// deadline (the clock's own stall timeout is far shorter).
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// A token passed round a ring of goroutines at one timer's instant is
// all the way round before the clock moves on: the next timer, a
// nanosecond later, finds the ring done, and every goroutine of the ring
// saw the first timer's time.
func TestVirtualWaitsForTheProcessToSettle(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	runVirtual(t, c)
	const n, laps = 500, 20
	ring := make([]chan int, n)
	for i := range ring {
		ring[i] = make(chan int)
	}
	var mu sync.Mutex
	var seen []time.Duration
	done := make(chan struct{})
	for i := range n {
		go func() {
			for v := range ring[i] {
				mu.Lock()
				seen = append(seen, c.Mono())
				mu.Unlock()
				if v == n*laps {
					close(done)
					continue
				}
				ring[(i+1)%n] <- v + 1
			}
		}()
	}
	defer func() {
		for _, r := range ring {
			close(r)
		}
	}()
	later := make(chan time.Duration, 1)
	c.AfterFunc(time.Second, func() { ring[0] <- 1 })
	c.AfterFunc(time.Second+time.Nanosecond, func() {
		select {
		case <-done:
			later <- c.Mono()
		default:
			later <- -1
		}
	})
	if got := wait(t, later, "the second timer"); got != time.Second+time.Nanosecond {
		t.Fatalf("the second timer fired at %v with the ring not done (-1) or at the wrong time; want the ring done at 1.000000001s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n*laps {
		t.Fatalf("%d hops, want %d", len(seen), n*laps)
	}
	for _, s := range seen {
		if s != time.Second {
			t.Fatalf("a hop saw %v, want 1s: the clock moved while the ring was busy", s)
		}
	}
	if f := c.Forced(); f != 0 {
		t.Fatalf("Forced = %d: %v", f, c.ForcedReasons())
	}
}

// Timers due at one instant fire one at a time in the order they were
// armed, each after what the one before set off has settled.
func TestVirtualSameInstantInArmOrder(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	runVirtual(t, c)
	var mu sync.Mutex
	var order []int
	all := make(chan struct{})
	const n = 50
	for i := range n {
		c.AfterFunc(time.Second, func() {
			// Work handed to another goroutine: it must be done before
			// the next timer fires.
			ch := make(chan struct{})
			go func() {
				mu.Lock()
				order = append(order, i)
				if len(order) == n {
					close(all)
				}
				mu.Unlock()
				close(ch)
			}()
			<-ch
		})
	}
	wait(t, all, "every timer")
	for i, got := range order {
		if got != i {
			t.Fatalf("fired in order %v, want 0..%d", order, n-1)
		}
	}
}

// Idle simulated time costs no wall time: an hour of a ticker every
// minute, and a timer a day away, fire at once.
func TestVirtualIdleTimeIsFree(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	runVirtual(t, c)
	tk := c.NewTicker(time.Minute)
	defer tk.Stop()
	for i := 1; i <= 60; i++ {
		got := wait(t, tk.C(), "a tick")
		if want := t0.Add(time.Duration(i) * time.Minute); !got.Equal(want) {
			t.Fatalf("tick %d at %v, want %v", i, got, want)
		}
	}
	tm := c.NewTimer(24 * time.Hour)
	if got := wait(t, tm.C(), "the timer"); got.Sub(t0) != 24*time.Hour+time.Hour {
		t.Fatalf("timer at +%v, want +25h", got.Sub(t0))
	}
}

// A ceiling of 100 simulated seconds per wall second holds a second of
// simulated time to at least 10 ms of wall time, and the clock reports
// a pace.
func TestVirtualSpeedCeiling(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{Speed: 100})
	runVirtual(t, c)
	start := time.Now()
	tk := c.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	for range 100 {
		wait(t, tk.C(), "a tick")
	}
	if wall := time.Since(start); wall < 10*time.Millisecond {
		t.Fatalf("1s of simulated time took %v of wall time at a ceiling of 100, want at least 10ms", wall)
	}
	// The pace over so short a run is rough (the clock may start with a
	// little wall time in hand); TestRateMeter checks its arithmetic.
	if r := c.Rate(); r <= 0 {
		t.Fatalf("Rate = %g, want above 0", r)
	}
}

// A Hold keeps the clock from moving; one never released is a forced
// advance after the stall timeout, which names it.
func TestVirtualHoldAndForcedAdvance(t *testing.T) {
	h := clock.NewHold("a test's unreleased hold")
	c := clock.NewVirtual(t0, clock.VirtualOptions{StallTimeout: 50 * time.Millisecond})
	runVirtual(t, c)
	h.Add(1)
	start := time.Now()
	tm := c.NewTimer(time.Second)
	wait(t, tm.C(), "the forced timer")
	h.Add(-1)
	if wall := time.Since(start); wall < 50*time.Millisecond {
		t.Fatalf("the timer fired after %v of wall time with a hold held, want the 50ms stall timeout first", wall)
	}
	if c.Forced() != 1 {
		t.Fatalf("Forced = %d, want 1", c.Forced())
	}
	if r := c.ForcedReasons(); len(r) != 1 || !strings.Contains(r[0], "a test's unreleased hold: 1") {
		t.Fatalf("ForcedReasons = %q, want the hold named", r)
	}
	// Released, the clock settles again on its own.
	tm.Reset(time.Second)
	wait(t, tm.C(), "the next timer")
	if c.Forced() != 1 {
		t.Fatalf("Forced = %d after the hold was released, want still 1", c.Forced())
	}
}

// A goroutine that spins without end never lets the process settle: the
// forced advance names where it spins.
func TestVirtualForcedAdvanceNamesASpinner(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{StallTimeout: 50 * time.Millisecond})
	runVirtual(t, c)
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go spinUntil(stop, stopped)
	tm := c.NewTimer(time.Second)
	wait(t, tm.C(), "the forced timer")
	close(stop)
	<-stopped
	if r := c.ForcedReasons(); len(r) != 1 || !strings.Contains(r[0], "spinUntil") {
		t.Fatalf("ForcedReasons = %q, want the spinning function named", r)
	}
}

//go:noinline
func spinUntil(stop, stopped chan struct{}) {
	defer close(stopped)
	for {
		select {
		case <-stop:
			return
		default:
		}
	}
}

// A clock runs once at a time: of two Runs at once, one returns an
// error at once.
func TestVirtualRunsOnce(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- c.Run(ctx) }()
	}
	if err := wait(t, errs, "the second Run"); err == nil {
		t.Fatal("one of two Runs of a clock returned nil before the clock was stopped")
	}
	cancel()
	if err := wait(t, errs, "the first Run"); err != nil {
		t.Fatalf("the Run that ran returned %v", err)
	}
}

func TestVirtualRejectsBadCeiling(t *testing.T) {
	for _, s := range []float64{-1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewVirtual with speed %g did not panic", s)
				}
			}()
			clock.NewVirtual(t0, clock.VirtualOptions{Speed: s})
		}()
	}
}

// Timers due at one instant fire by their owners' keys, whatever order
// the owners armed them in; one owner's in its own arm order. The clock
// itself is key 0, first.
func TestVirtualKeyedOrder(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	var mu sync.Mutex
	var order []string
	all := make(chan struct{})
	note := func(s string) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, s)
			if len(order) == 5 {
				close(all)
			}
		}
	}
	two, one := clock.Keyed(c, 2), clock.Keyed(c, 1)
	two.AfterFunc(time.Second, note("2a"))
	one.AfterFunc(time.Second, note("1a"))
	two.AfterFunc(time.Second, note("2b"))
	c.AfterFunc(time.Second, note("0"))
	one.AfterFunc(time.Second, note("1b"))
	if clock.Keyed(c, 2) != two || clock.Keyed(one, 2) != two {
		t.Fatal("Keyed views of one clock with one key are not equal")
	}
	runVirtual(t, c)
	wait(t, all, "every timer")
	if got := strings.Join(order, " "); got != "0 1a 1b 2a 2b" {
		t.Fatalf("fired in order %s, want 0 1a 1b 2a 2b", got)
	}
	if k := clock.Keyed(clock.Real{}, 3); k != (clock.Real{}) {
		t.Fatalf("Keyed of the wall clock is %v, want the wall clock", k)
	}
}

// A timer re-armed due at once every time it fires holds simulated time
// at one instant for ever: the clock says where it is stuck.
func TestVirtualStalled(t *testing.T) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	runVirtual(t, c)
	tm := c.NewTimer(time.Second)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-tm.C():
				tm.Reset(0) // a retry with no delay
			case <-stop:
				return
			}
		}
	}()
	// Polled on a wall ticker: a goroutine that spun would keep the
	// process from settling.
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for c.Stalled() == "" {
		if time.Now().After(deadline) {
			t.Fatal("no stall reported after 30s of a timer re-armed at once")
		}
		<-poll.C
	}
	close(stop)
	<-done
	tm.Stop()
	if s := c.Stalled(); !strings.Contains(s, "stood at 1s") || !strings.Contains(s, "re-arms it due at once") {
		t.Fatalf("Stalled = %q", s)
	}
}
