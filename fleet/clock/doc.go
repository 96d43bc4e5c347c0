// Package clock is the one source of time for every fleetsim mechanism.
//
// Every mechanism (mailbox, limiter, backoff, outbox, relay, leader,
// worker) takes a Clock and never calls time.Now, time.NewTimer or
// time.Sleep on its own, so the same code runs on
//
//   - Real: the wall clock, for the leader and worker binaries;
//   - Virtual: simulated time for a whole process, for scenario runs. It
//     moves to the next timer's deadline only once every goroutine of the
//     process waits (on a timer, a channel, a lock, a connection's input)
//     and no Hold is held, and fires that one timer; then it waits for the
//     process to settle again. Host CPU costs no simulated time: a run
//     measures the same on a loaded machine as on an idle one, and idle
//     simulated time costs no wall time. Timers due at one instant fire
//     in a fixed order (by their owners' keys, see Keyed, then in each
//     owner's arm order), each once what the one before set off has
//     settled. A speed ceiling keeps it to a pace a person can watch;
//   - Scaled: simulated time that runs a fixed factor faster than the
//     wall clock, for tests of code that measures its own lag;
//   - Fake: time that moves only when a test calls Advance, so a test of a
//     timeout or a backoff never sleeps.
//
// How a Virtual clock tells that the process has settled: the runtime's
// goroutine-state metrics (runtime/metrics, /sched/goroutines/running,
// runnable and not-in-go, about 100 ns a read) show no goroutine running
// or ready to run but the reader, and none in a system call but those
// that live there (os/signal's, a terminal reader). The readings are
// approximate, so a quiet one is confirmed by a second after a few
// yields, with nothing moved in between: every timer armed or stopped,
// every in-memory connection's read or write and every Hold counts as
// movement. What the runtime cannot see is declared with a Hold: an
// outbox file's write transaction (bbolt's group commit waits on the wall
// clock for company) and an MQTT session's Close (paho waits on the wall
// clock for its DISCONNECT to go out). A process that does not settle
// within the stall timeout, with nothing in it moving, gets a forced
// advance: counted, and described (the Holds held, where the busy
// goroutines are), and a scenario run that had one fails.
//
// What still waits on the wall clock in a scenario run, and why it
// changes no result:
//
//   - paho's and mochi's own timers. On the in-memory connections a run
//     uses, neither side runs a keepalive (a session's Silence plays the
//     broker's part on the run's clock: the cut at 1.5 keepalives is
//     simulated time); paho's connect and write timeouts are bounds of 10
//     and 5 seconds of wall time on work that takes microseconds; mochi's
//     expiry scans walk sessions, retained messages and in-flight messages
//     whose expiries (a day by default) a run never reaches.
//   - A connection's handshake and read deadlines, the accept loop's
//     backoff and the bound on a session takeover (fleet/broker,
//     fleet/transport): bounds on waits for something that happens, or
//     TCP listeners a scenario run does not use.
//   - fleet/fleettest's Eventually and Receive: a test's deadline for work
//     done by other goroutines, polled on the wall clock.
//   - A run's wall time and a Virtual clock's ceiling and stall timeout,
//     which are about the wall clock.
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
//
//	v := clock.NewVirtual(time.Unix(0, 0), clock.VirtualOptions{})
//	go v.Run(ctx)             // moves it until ctx ends
//	clock.Sleep(ctx, v, time.Hour) // returns as soon as the process is idle
package clock
