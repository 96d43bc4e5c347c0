// Package judge gives a run its verdicts: each expectation of a scenario
// judged on the run's result (Expectations), and a sweep's compare:
// checks judged on its variants' results once they have all run
// (Comparisons). The checks are compiled when the scenario loads
// (fleet/scenario); judging them is a matter of the run, so it lives
// here, where fleet/runner and its callers reach it.
//
//	rep.Verdicts = judge.Expectations(sc, rep.Result)
//	last.Comparisons = judge.Comparisons(sc, variants, reps)
package judge
