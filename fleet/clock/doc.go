// Package clock is the one source of time for every fleetsim mechanism.
//
// Nothing in fleet/ calls time.Now, time.NewTimer or time.Sleep on its own:
// each mechanism takes a Clock, so the same code runs on
//
//   - Real: the wall clock, for the leader and worker binaries;
//   - Scaled: simulated time that runs Speed times faster than the wall clock
//     and can be paused, for scenario runs (speed 10: one simulated minute in
//     six wall seconds);
//   - Fake: time that moves only when a test calls Advance, so a test of a
//     timeout or a backoff never sleeps.
//
// A test that advances a Fake while another goroutine arms the timer the
// advance must fire first waits for it with WaitDue (fleettest.Advance
// wraps it): on a loaded machine the advance would otherwise come first,
// and the timer would wait for a move that never comes.
//
// Tests whose goroutines block on timers in ways that are awkward to step by
// hand may instead run Real inside a testing/synctest bubble, where the wall
// clock itself is fake; fleetsim uses Fake for single-goroutine simulations
// (an overload run, a relay's backoff schedule) and synctest for concurrent
// code (a blocked Offer timing out).
//
// Usage:
//
//	c := clock.NewFake(time.Unix(0, 0))
//	t := c.NewTimer(5 * time.Second)
//	c.Advance(5 * time.Second) // t.C() now holds the fire time
package clock
