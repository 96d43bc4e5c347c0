// Package leader is the fleet's leader actor: the one process every worker
// talks to, built to survive its fleet.
//
// What it does, and which mechanism keeps it alive while doing it:
//
//   - Worker requests and telemetry go into a bounded mailbox; when it is
//     full the worker is answered "full, retry after" at once (the
//     thundering-herd defence), never queued without bound.
//   - Heartbeats coalesce: at most one per worker waits (a coalescing
//     mailbox keyed by worker), processed on the leader's own cadence.
//   - Commands (config, firmware, jobs) go through the durable outbox and
//     the partitioned AIMD relay; a delivery is an ask over MQTT that ends
//     with the worker's ack (ok, full, reject) or a timeout. On the
//     broker of its own process (an InlineLink) an ask is started on the
//     relay's loop and the ack settles it where it arrives; over a
//     session to another broker, whose publish waits for the broker, a
//     goroutine of the relay's waits for each.
//   - The fleet view follows each worker's retained status (and its last
//     will): the relay spends no attempts on an offline worker, nor, after
//     a (re)start, on one it has not yet heard is online; its commands are
//     parked in the outbox. Coming online releases what was parked for it
//     (off the MQTT delivery goroutine) and republishes an ask that was out
//     on its old connection, but never brings a later wave forward.
//   - A deploy sends a version to a selection of workers in waves, each
//     wave's messages due at its own time, so the plan survives a crash
//     with the outbox; so does its progress, kept in the outbox's records
//     for the newest deploys in parts of bounded size, each deploy saved
//     on its own, and tracked per update only while the update is queued.
//     Cancel withdraws a deploy's queued updates, durably; the stats
//     message and /metrics carry each deploy summed (DeploySummary).
//   - The MQTT client delivers every worker message on one goroutine,
//     which also reads the PUBACKs the leader's publishes wait for: the
//     leader never blocks it. Answers leave through a bounded queue that
//     drops (and counts) what does not fit.
//   - Its retained status says online once it serves, offline when it
//     stops; its session's last will (transport.LeaderWill) says offline
//     for a leader that dies without a goodbye.
//   - A scenario can turn its knobs while it runs: SetMailboxCapacity and
//     SetService.
//
// The leader speaks MQTT through a Link (fleet/transport provides one over
// paho, against the embedded broker or any other). ExampleNew runs one on
// an in-memory outbox and the embedded broker and deploys a version to a
// worker.
package leader
