package result_test

import (
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// A Report holds what a run measured and its checks' verdicts; its
// Outcome is the run's own verdict on them.
func ExampleReport_Outcome() {
	rep := &result.Report{Scenario: "overload"}
	rep.Result.Leader.Mailbox.Capacity = 1000
	rep.Result.Leader.Mailbox.MaxDepth = 1000
	rep.Verdicts = []result.Verdict{
		{Check: "lost == 0", Status: result.Pass},
		{Check: "leader.mailbox.max_depth < leader.mailbox.capacity", Status: result.Fail,
			Detail: "leader.mailbox.max_depth = 1000, leader.mailbox.capacity = 1000"},
	}
	pass, fail, notJudged := result.Tally(rep.Verdicts)
	fmt.Printf("%d passed, %d failed, %d not judged: %s\n", pass, fail, notJudged, rep.Outcome())
	for _, v := range rep.Verdicts {
		fmt.Println(v.Status.Mark(), v.Check)
	}
	// Output:
	// 1 passed, 1 failed, 0 not judged: fail
	// ✓ lost == 0
	// ✗ leader.mailbox.max_depth < leader.mailbox.capacity
}

// Every number of a Result has one name, the expectations' and the
// registry's; Differences compares two runs number by number.
func ExampleDifferences() {
	var a, b result.Result
	a.Leader.Mailbox.MaxDepth, b.Leader.Mailbox.MaxDepth = 12, 14
	a.Relay.Delivered, b.Relay.Delivered = 500, 500
	for _, d := range result.Differences(&a, &b) {
		fmt.Println(d)
	}
	m, _ := result.Lookup("leader.mailbox.max_depth")
	fmt.Println(m.Name, "—", m.Meaning, "Better:", m.Better)
	// Output:
	// leader.mailbox.max_depth: 12 ≠ 14
	// leader.mailbox.max_depth — Most queued at once. Better: lower
}
