package expect_test

import (
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// A check compiles once and is judged on each run's Result; a failure's
// detail shows the values the check read.
func ExampleCompile() {
	c, err := expect.Compile("leader.mailbox.max_depth <= leader.mailbox.capacity")
	if err != nil {
		panic(err)
	}
	var r result.Result
	r.Leader.Mailbox.Capacity = 1000

	r.Leader.Mailbox.MaxDepth = 800
	status, _ := c.Judge(r, c.Timing)
	fmt.Println(status)

	r.Leader.Mailbox.MaxDepth = 1412
	status, detail := c.Judge(r, c.Timing)
	fmt.Println(status, detail)
	// Output:
	// pass
	// fail leader.mailbox.max_depth = 1412, leader.mailbox.capacity = 1000
}

// A check that names what the Result does not have is refused at
// compile time, with its place in the check (0-based) and the names
// near it.
func ExampleCompile_error() {
	_, err := expect.Compile("leader.mailbox.max_dept <= 10")
	var ce *expect.Error
	if errors.As(err, &ce) {
		fmt.Printf("line %d col %d: %s\n", ce.Line, ce.Col, ce.Msg)
	}
	// Output:
	// line 0 col 15: leader.mailbox has no "max_dept" (did you mean max_depth?); it has capacity, policy, offered, taken, dropped, rejected, depth, max_depth, wait
}
