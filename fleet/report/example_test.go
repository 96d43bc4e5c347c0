package report_test

import (
	"fmt"
	"os"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// A run's report is judged once (Judge), then rendered; every output
// shows that one verdict. Here a check fails, and Text writes the run as
// sim prints it when it ends.
func ExampleText() {
	rep := &result.Report{Scenario: "overload"}
	res := &rep.Result
	res.Run.SimSeconds, res.Run.WallSeconds, res.Run.KeptUp = 30, 1.5, true
	res.Leader.Mailbox.Capacity, res.Leader.Mailbox.MaxDepth = 1000, 1000
	res.Relay.Delivered = 4500

	for _, text := range []string{"lost == 0", "leader.mailbox.max_depth < leader.mailbox.capacity"} {
		c, err := expect.Compile(text)
		if err != nil {
			panic(err)
		}
		status, detail := c.Judge(*res, c.Timing)
		rep.Verdicts = append(rep.Verdicts, result.Verdict{Check: text, Status: status, Detail: detail})
	}

	runs := report.Judge([]*result.Report{rep}, nil, report.Options{})
	fmt.Println(runs[0].Verdict.Status, runs[0].Verdict.Status.Fails())
	if err := report.Text(os.Stdout, runs); err != nil {
		panic(err)
	}
	// Output:
	// failed true
	// FAIL overload: lost 0, 30s simulated in 1.5s wall, lag p99 0.00s
	//   failed: 1 of 2 expectations failed
	//   times and rates in simulated seconds
	//   leader mailbox wait ......... none
	//   worker mailbox wait ......... none
	//   ask round trip .............. none
	//   heartbeat age ............... none
	//   requests served ............. 0            0.0/s
	//   requests rejected ........... 0            0.0/s
	//   commands delivered .......... 4,500        150/s
	//   relay backpressure .......... 0            0.0/s
	//   heartbeats processed ........ 0            0.0/s
	//   lost ........................ 0 (commands 0, telemetry 0)
	//   ✓ lost == 0
	//   ✗ leader.mailbox.max_depth < leader.mailbox.capacity  (leader.mailbox.max_depth = 1000, leader.mailbox.capacity = 1000)
	// 0 of 1 run passed, 1 failed
}
