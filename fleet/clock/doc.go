// Package clock is the one source of time for every fleetsim mechanism.
//
// Every mechanism (mailbox, limiter, backoff, outbox, relay, leader,
// worker) takes a Clock and never calls time.Now, time.NewTimer or
// time.Sleep on its own, so the same code runs on
//
//   - Real: the wall clock, for the leader and worker binaries;
//   - Scaled: simulated time that runs Speed times faster than the wall clock
//     and can be paused, for scenario runs (speed 10: one simulated minute in
//     six wall seconds);
//   - Fake: time that moves only when a test calls Advance, so a test of a
//     timeout or a backoff never sleeps.
//
// Three places in fleet/ wait on the wall clock on purpose, because what
// they wait for runs on the wall clock too and would not follow a scaled
// or fake one:
//
//   - fleet/transport, the network: a connection's handshake and read
//     deadlines, the accept loop's backoff after a failed Accept (5 ms
//     doubling to 1 s), the short pause before resending a SUBSCRIBE the
//     broker refused for its packet id, the bound on a session takeover,
//     and the cut of a silenced in-memory connection after 1.5 keepalives.
//     paho and mochi keep their keepalives and retries on real time, so a
//     scaled clock here would only desynchronise the two sides.
//   - fleet/scenario's runner: it creates the Scaled clock from time.Now,
//     measures its own wall duration, and waits (wall time, bounded by
//     ConnectTimeout) for the fleet to connect before simulated time 0.
//   - fleet/fleettest's Eventually and Receive: a test's deadline for work
//     done by other goroutines, polled on the wall clock.
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
