// Package runner plays a scenario on the real stack — the embedded broker,
// MQTT sessions, the leader on a bbolt outbox, a pool of workers — in
// scaled simulated time, and returns its result.Report with the
// scenario's expectations judged. While it runs, a Runner answers
// Snapshot (a result.Live for the dashboard) and takes controls (pause,
// speed, deploy, partition, kill the leader).
//
//	sc, err := scenario.Load("scenarios/wave-deploy.yaml")
//	if err != nil { ... }
//	rep, err := runner.Run(ctx, sc, runner.RunOptions{})
//	if !rep.Passed() { ... }
//
// It imports fleet/scenario (what to run), fleet/result (what it
// measured) and the stack's packages (leader, worker, transport, outbox,
// clock, stats); nothing imports it but the binaries and the dashboard.
package runner
