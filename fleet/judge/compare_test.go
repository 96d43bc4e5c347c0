package judge_test

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

const compareYAML = `
name: cmp
duration: 10s
fleet: {count: 10}
sweep:
  leader.relay.limit:
    aimd: {initial: 10, min: 1, max: 50, strategy: aimd}
    static: {initial: 50, min: 50, max: 50, strategy: static}
compare:
  - name: aimd wastes less
    check: variant["aimd"].relay.backpressure * 2 <= variant["static"].relay.backpressure
  - name: aimd waits less
    check: variant["aimd"].leader.mailbox.wait.p99 <= variant["static"].leader.mailbox.wait.p99
`

// TestJudgeComparisons: a comparison reads each variant by its label,
// fails with the values it read, and is not judged when a variant did
// not complete, nor, if it reads a timing, when a variant fell behind.
func TestJudgeComparisons(t *testing.T) {
	sc, err := scenario.Parse("cmp.yaml", []byte(compareYAML))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Label != "aimd" || vs[1].Label != "static" || vs[1].Name != "leader.relay.limit=static" {
		t.Fatalf("variants %+v", vs)
	}
	if !sc.Compare[1].Timing || sc.Compare[0].Timing {
		t.Fatalf("timing flags %v %v, want false true", sc.Compare[0].Timing, sc.Compare[1].Timing)
	}
	rep := func(backpressure uint64, p99 result.Seconds, keptUp bool, err string) *result.Report {
		r := &result.Report{Err: err}
		r.Result.Relay.Backpressure = backpressure
		r.Result.Leader.Mailbox.Wait.P99 = p99
		r.Result.Run.KeptUp = keptUp
		return r
	}
	for _, tc := range []struct {
		name string
		reps []*result.Report
		want [2]result.Status
		why  string
	}{
		{"both hold", []*result.Report{rep(10, 0.1, true, ""), rep(40, 0.5, true, "")}, [2]result.Status{result.Pass, result.Pass}, ""},
		{"fails with values", []*result.Report{rep(30, 0.1, true, ""), rep(40, 0.5, true, "")}, [2]result.Status{result.Fail, result.Pass}, "relay.backpressure = 40"},
		{"a variant did not complete", []*result.Report{rep(10, 0.1, true, ""), rep(40, 0.5, true, "broker failed")}, [2]result.Status{result.NotJudged, result.NotJudged}, "static did not complete"},
		{"a variant fell behind", []*result.Report{rep(10, 0.1, true, ""), rep(40, 0.5, false, "")}, [2]result.Status{result.Pass, result.NotJudged}, "static fell behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge.Comparisons(sc, vs, tc.reps)
			if len(got) != 2 || got[0].Status != tc.want[0] || got[1].Status != tc.want[1] {
				t.Fatalf("verdicts %+v, want %v", got, tc.want)
			}
			if tc.why != "" && !strings.Contains(got[0].Detail+got[1].Detail, tc.why) {
				t.Errorf("details %q / %q lack %q", got[0].Detail, got[1].Detail, tc.why)
			}
		})
	}
	slow := rep(40, 0.5, false, "")
	slow.Result.Run.Speed, slow.Result.Run.ServiceLagP99, slow.Result.Run.LagThreshold = 4, 2.3, 1
	got := judge.Comparisons(sc, vs, []*result.Report{rep(10, 0.1, true, ""), slow})
	if want := "static (service lag p99 2.3s > threshold 1s at speed 4) fell behind"; got[1].Status != result.NotJudged || !strings.Contains(got[1].Detail, want) {
		t.Errorf("timing comparison with a variant whose service fell behind: %+v, want not judged saying %q", got[1], want)
	}
	if (&result.Report{Comparisons: []result.Verdict{{Status: result.Fail}}}).Passed() {
		t.Error("a report with a failed comparison passed")
	}
}

// A comparison of variants that divides by zero is not judged either.
func TestJudgeComparisonsDivisionByZero(t *testing.T) {
	sc, err := scenario.Parse("cmp.yaml", []byte(strings.Replace(compareYAML,
		"variant[\"aimd\"].relay.backpressure * 2 <= variant[\"static\"].relay.backpressure",
		"variant[\"aimd\"].relay.backpressure / variant[\"static\"].relay.backpressure < 0.5", 1)))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	rep := func(backpressure uint64) *result.Report {
		r := &result.Report{}
		r.Result.Relay.Backpressure = backpressure
		r.Result.Run.KeptUp = true
		return r
	}
	got := judge.Comparisons(sc, vs, []*result.Report{rep(10), rep(0)})[0]
	if want := `not judged: division by zero (the divisor variant.static.relay.backpressure = 0)`; got.Status != result.NotJudged || got.Detail != want {
		t.Errorf("%s %q, want not judged %q", got.Status, got.Detail, want)
	}
	if got := judge.Comparisons(sc, vs, []*result.Report{rep(10), rep(40)})[0]; got.Status != result.Pass {
		t.Errorf("with a divisor of 40: %+v", got)
	}
}
