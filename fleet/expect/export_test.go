package expect

// Internals the tests of package expect_test reach.
var (
	SecondsType     = secondsType
	ConstantOutcome = constantOutcome
	ConstantCheck   = constantCheck
	CompileProgram  = compile
	IsNumber        = isNumber
)
