// Package scenario loads scenario files, runs them on the real stack (the
// embedded broker, MQTT sessions, the leader on a bbolt outbox, a pool of
// workers) in scaled simulated time, and judges their expectations.
//
//	sc, err := scenario.Load("scenarios/wave-deploy.yaml")
//	if err != nil { ... } // file:line:col, what is wrong, what would be valid
//	rep, err := scenario.Run(ctx, sc, scenario.RunOptions{})
//	if !rep.Passed() { ... }
//
// docs/SCENARIOS.md documents the file format and the report schema.
package scenario
