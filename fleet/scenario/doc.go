// Package scenario is the scenario file format: it loads a file
// (Load, Parse), fills its defaults, validates it against the format's
// limits and schema, and reports every problem at its place
// (file:line:col, what is wrong, what would be valid). It compiles the
// file's expectations when it loads (Check, Comparison; fleet/judge
// judges them on a run's result.Result); it expands a sweep into its
// Variants and a fleet into its workers (Workers).
//
// ExampleParse shows an error; fleet/runner's ExampleRun runs a file.
//
// Each key's type, default, bounds and meaning are one row of the key
// table (keys.go), from which the defaults, the JSON Schema, --resolved
// and docs/SCENARIOS.md's key reference come. Before the YAML parser
// sees a file, internal/yamlshape checks its shape against the limits.
//
// It imports fleet/result (what a check reads) and the mechanisms'
// option types (outbox, flow, mailbox), not the leader or the workers,
// whose defaults the key table repeats under a test that pins them
// equal; fleet/runner plays a Scenario. docs/SCENARIOS.md documents the
// file format and the result's names.
package scenario
