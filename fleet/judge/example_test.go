package judge_test

import (
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// Each expectation of a scenario judged on a run's result: a count check
// passes, one that does not hold fails with the values it read, and a
// timing check on a run that fell behind its schedule is not judged.
func ExampleExpectations() {
	sc, err := scenario.Parse("example.yaml", []byte(`
name: example
duration: 1m
fleet: {count: 10}
expect:
  - lost == 0
  - name: every worker upgraded
    check: workers.at_version["2.1.0"] == fleet.count
  - leader.mailbox.wait.p99 < 2
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := result.Result{
		Run:     result.RunInfo{Speed: 50, LagP99: 1.5, LagThreshold: 1},
		Fleet:   result.FleetResult{Count: 10},
		Workers: result.WorkersResult{AtVersion: map[string]int{"2.1.0": 9, "2.0.0": 1}},
	}
	for _, v := range judge.Expectations(sc, r) {
		fmt.Printf("%s: %s\n", v.Status, v.Name)
		if v.Detail != "" {
			fmt.Printf("\t%s\n", v.Detail)
		}
	}
	// Output:
	// pass: lost == 0
	// fail: every worker upgraded
	// 	workers.at_version["2.1.0"] = 9, fleet.count = 10
	// not_judged: leader.mailbox.wait.p99 < 2
	// 	timer lag p99 1.5s > threshold 1s at speed 50
}
