// Package result is what a scenario run produced: the Result its
// expectations read (the names in their checks are the expr tags of its
// fields), the run's Report with its Verdicts, its Records and Samples,
// and the Live view the dashboard and the progress line show while it
// runs. fleet/report and fleet/dash read these types; fleet/runner fills
// them; fleet/expect judges checks over them.
//
//	rep, err := runner.Run(ctx, sc, runner.RunOptions{})
//	fmt.Println(rep.Result.Leader.Mailbox.MaxDepth, rep.Passed())
//
// Every name of the Result is defined once in its registry (Metrics,
// Lookup: meaning, unit, kind, better direction, baseline rule, what a
// run must send for it to count anything, how a person reads its value,
// the leader's Prometheus name and help), which the report's baselines
// and summaries, the expectations, the scenario's vacuity warnings, the
// leader's /metrics and docs/SCENARIOS.md's tables of names read; Walk
// and Fields are the one walk over its values and types.
//
// It imports none of fleetsim's packages, so a reader of reports needs
// nothing of the stack that ran them.
package result
