package fleettest

import (
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// CostlyClock is a fake clock on which every reading of Now takes a set
// cost of its time: time passes with each step the code under test takes,
// as on a machine that starves it. A test sets the cost to make a loop
// late by a known amount, deterministically: the loop's own readings move
// the clock, so no Advance of the test's races them. Timers, tickers and
// Mono are the Fake's; with a cost of 0 (the start) the clock is the Fake.
//
//	clk := fleettest.NewCostlyClock(clock.NewFake(start))
//	clk.SetCost(300 * time.Millisecond) // each step of the loop takes 300 ms
type CostlyClock struct {
	*clock.Fake
	cost atomic.Int64
}

// NewCostlyClock returns a CostlyClock over f, at no cost.
func NewCostlyClock(f *clock.Fake) *CostlyClock { return &CostlyClock{Fake: f} }

// SetCost makes every later reading of Now take d (0: none).
func (c *CostlyClock) SetCost(d time.Duration) { c.cost.Store(int64(d)) }

// Now moves the clock on by the cost, firing what that makes due, and
// returns the time after.
func (c *CostlyClock) Now() time.Time {
	if d := time.Duration(c.cost.Load()); d > 0 {
		c.Fake.Advance(d)
	}
	return c.Fake.Now()
}
