// Package expect is the expectation language: it compiles a check (an
// expr-lang expression over a result.Result, or over a sweep's variants'
// Results for a comparison) and judges it on a run.
//
//	c, err := expect.Compile("leader.mailbox.max_depth <= leader.mailbox.capacity")
//	if err != nil { ... } // an *Error: the line and column in the check, what is valid
//	status, detail := c.Judge(rep.Result, c.Timing)
//
// At compile time it refuses what a verdict must not be: a check that is
// true (or false) whatever the run measures (ConstantMessage), a name
// that is not in the Result (with the names near it), a check past
// MaxCheckLength or MaxCheckDepth. The names a check can read are the
// expr tags of result.Result's fields (Names).
//
// It imports fleet/result only; fleet/scenario compiles a file's checks
// with it when the file loads and places its errors in the file.
package expect
