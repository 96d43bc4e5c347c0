// Package runner plays a scenario on the real stack — the embedded broker,
// MQTT sessions, the leader on a bbolt outbox, a pool of workers — in
// virtual time (clock.Virtual: simulated time moves only when the whole
// process has settled), and returns its result.Report with the scenario's
// expectations judged: the same file and seed give the same numbers on
// any machine, however loaded. While it runs, a Runner answers Snapshot
// (a result.Live for the dashboard) and takes controls (pause, speed
// ceiling, deploy, partition, kill the leader).
//
// A Plan runs several scenarios, every variant of each one's sweep
// (Plan.Sweep, and Plan.Repeat for rounds of them), and judges each
// sweep's comparisons once its variants have run (fleet/judge): the
// whole verdict 'sim run' and 'sim check' report.
//
// ExampleRun parses a scenario, runs it and reads its verdicts.
//
// It imports fleet/scenario (what to run), fleet/result (what it
// measured) and the stack's packages (broker, leader, worker, transport,
// outbox, clock, stats); nothing imports it but the binaries and the
// dashboard.
package runner
