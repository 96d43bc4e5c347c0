package scenario_test

import (
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// A scenario file with a mistake: the error names its place and what
// would be valid. fleet/runner's ExampleRun runs a valid one.
func ExampleParse() {
	_, err := scenario.Parse("my-scenario.yaml", []byte(`
name: my-scenario
duration: 1m
fleet:
  count: 100
  worker: {heartbaet: 5s}
`))
	fmt.Println(err)
	// Output:
	// my-scenario.yaml:6:12: fleet.worker.heartbaet: unknown key "heartbaet" (did you mean heartbeat?); valid keys here: mailbox, service, rtt, loss, heartbeat, telemetry, reconnect, keepalive, ask_timeout, version, local_outbox, offline, delivery, poll
	// 	  worker: {heartbaet: 5s}
	// 	           ^
}
