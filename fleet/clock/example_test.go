package clock_test

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// A Fake moves only when the test says: a 5-second timer has not fired
// after 4 seconds, and has after 5, with no sleep.
func ExampleFake() {
	c := clock.NewFake(time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC))
	t := c.NewTimer(5 * time.Second)

	c.Advance(4 * time.Second)
	select {
	case <-t.C():
		fmt.Println("fired early")
	default:
		fmt.Println("after 4s: pending", c.Pending())
	}

	c.Advance(time.Second)
	fmt.Println("after 5s: fired at", (<-t.C()).Format(time.TimeOnly))
	fmt.Println("elapsed on the clock:", c.Mono())
	// Output:
	// after 4s: pending 1
	// after 5s: fired at 15:04:05
	// elapsed on the clock: 5s
}

// A ticker on a Fake ticks once per period the clock moves through; a
// function given to AfterFunc runs inside Advance.
func ExampleFake_Advance() {
	c := clock.NewFake(time.Unix(0, 0))
	c.AfterFunc(2*time.Second, func() { fmt.Println("AfterFunc at", c.Mono()) })
	tk := c.NewTicker(time.Second)
	defer tk.Stop()
	for range 3 {
		c.Advance(time.Second)
		<-tk.C()
		fmt.Println("tick at", c.Mono())
	}
	// Output:
	// tick at 1s
	// AfterFunc at 2s
	// tick at 2s
	// tick at 3s
}
