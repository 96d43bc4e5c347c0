package judge_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

const neverYAML = `
name: never
duration: 1m
fleet: {count: 10}
sweep:
  leader.relay.limit:
    fast: {initial: 10, min: 1, max: 50, strategy: aimd}
    slow: {initial: 1, min: 1, max: 1, strategy: static}
expect:
  - name: the deploy was quick
    check: deploys[0].duration <= 10
compare:
  - name: fast at least twice as fast as slow
    check: 2 * variant["fast"].deploys[0].duration <= variant["slow"].deploys[0].duration
`

// TestUnfinishedDeployDuration: a deploy that did not finish has no
// duration (result.Never, +Inf): an upper bound on it fails, where a 0
// would have passed, and a variant that never finished is slower than
// one that did, whichever side of a comparison it is on.
func TestUnfinishedDeployDuration(t *testing.T) {
	sc, err := scenario.Parse("never.yaml", []byte(neverYAML))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	rep := func(d result.Seconds) *result.Report {
		r := &result.Report{}
		r.Result.Run.KeptUp = true
		r.Result.Deploys = []result.DeployResult{{Targets: 10, Delivered: 3, Duration: d}}
		return r
	}
	for _, tc := range []struct {
		name       string
		fast, slow result.Seconds
		expect     result.Status // the fast variant's expectation
		compare    result.Status
	}{
		{"both finished", 4, 18, result.Pass, result.Pass},
		{"the slow one did not finish", 4, result.Never, result.Pass, result.Pass},
		{"the fast one did not finish", result.Never, 18, result.Fail, result.Fail},
		// +Inf <= +Inf: neither is faster. What fails such a run is each
		// variant's own expectation that its deploy finished.
		{"neither finished", result.Never, result.Never, result.Fail, result.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reps := []*result.Report{rep(tc.fast), rep(tc.slow)}
			if v := judge.Expectations(vs[0].Scenario, reps[0].Result); len(v) != 1 || v[0].Status != tc.expect {
				t.Errorf("expectation on duration %v: %+v, want %s", tc.fast, v, tc.expect)
			} else if tc.expect == result.Fail && v[0].Detail != "deploys[0].duration = +Inf (never)" {
				t.Errorf("detail %q, want it to say the deploy never finished", v[0].Detail)
			}
			if v := judge.Comparisons(sc, vs, reps); len(v) != 1 || v[0].Status != tc.compare {
				t.Errorf("comparison of %v and %v: %+v, want %s", tc.fast, tc.slow, v, tc.compare)
			}
		})
	}
}
