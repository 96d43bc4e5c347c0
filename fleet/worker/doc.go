// Package worker simulates a fleet's workers: each one an actor with its
// own MQTT session, a bounded mailbox, a service-time distribution,
// heartbeat and telemetry schedules, and a way of going away and coming
// back. A Pool runs thousands of them in one process.
//
// A worker answers every command the moment it arrives: "ok" when its
// mailbox took it, "full" with a retry-after hint when not, "reject" when
// it never will. It then applies commands one at a time, each taking a
// sampled service time (simulated by accounting on the clock, not by
// burning CPU), and applies a config or firmware version once per
// idempotency key and sequence number, however often it is delivered.
//
// Going away: Disconnect (clean, status offline), Partition (the connection
// goes silent; the broker's keepalive and the last will tell the leader),
// Crash (the connection drops without a word), Reboot (a crash that also
// loses the RAM — mailbox, asks, local outbox — and keeps the flash: the
// applied version and what was applied per key, so a redelivery after
// the reboot is not applied twice). Coming back: reconnect with
// exponential backoff and full jitter, or immediately (to show the herd).
// A scenario can also change a running worker's heartbeat interval
// (SetHeartbeat: a heartbeat storm) and mailbox capacity
// (SetMailboxCapacity). A worker refuses for good ("reject") an apply of a
// version it cannot install: that is how a scenario injects poison.
//
// Gateways: a worker whose Config.Gateway names one is a device behind
// that gateway, which carries all its devices on one MQTT session (as an
// edge gateway does) and announces them "online <epoch> via <gateway>".
// A Pool builds the gateways its workers name; a Gateway is also usable on
// its own as the Dialer of its devices. Its last will takes its devices
// offline at the leader; Gateway.Partition cuts it off, and every device
// behind it loses its session until it is back.
//
// Drivers: a worker with a session of its own runs on a goroutine of its
// own (Run). The devices behind a Pool's gateways have none: each
// gateway's devices run on one loop, a goroutine that calls the same
// handlers for all of them, with their timers as due times in one heap
// under one clock timer, and their messages and controls in one queue.
// A worker behaves alike on both; a million devices cost about 2 KB each
// in this package (docs/BENCHMARKS.md).
//
// ExampleNew runs a worker on the embedded broker and plays its leader:
// a command acked at once, and applied once however often it is sent.
package worker
