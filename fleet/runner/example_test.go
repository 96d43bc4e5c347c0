package runner_test

import (
	"context"
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// A scenario file, parsed and played on the real stack (embedded broker,
// a leader on a bbolt outbox, twenty workers on MQTT sessions) in
// simulated time, then judged by its expectations.
func ExampleRun() {
	sc, err := scenario.Parse("example.yaml", []byte(`
name: example
speed: 20
duration: 10s
fleet:
  count: 20
timeline:
  - at: 1s
    deploy: {version: 2.0.0, wave_size: 10, wave_interval: 2s}
expect:
  - lost == 0
  - workers.at_version["2.0.0"] == fleet.count
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := runner.Run(context.Background(), sc, runner.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range rep.Verdicts {
		fmt.Println(v.Status, v.Check)
	}
	fmt.Println("passed:", rep.Passed())
	// Output:
	// pass lost == 0
	// pass workers.at_version["2.0.0"] == fleet.count
	// passed: true
}
