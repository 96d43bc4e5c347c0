package judge

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// Expectations evaluates each expectation of s on r. A timing check (one
// that reads a Seconds value) on a run that could not keep up with its
// speed is NotJudged, with RunInfo.Behind as its detail, and so is a
// check that divides by zero ("not judged: division by zero (the divisor
// lost = 0)"): in floating point x / 0 is +Inf and would pass
// "fleet.count / lost > 1". Any other evaluation error is a Fail with the
// error as its detail; a Fail's detail shows the values the check read.
// Expectations are compiled when the scenario loads; a Scenario built in
// code is compiled here (scenario.Scenario.Check). A run whose simulated
// time had to be forced on gets one more verdict, first and failed
// (SettledName).
func Expectations(s *scenario.Scenario, r result.Result) []result.Verdict {
	out := make([]result.Verdict, 0, len(s.Expect)+1)
	if n := r.Run.ForcedAdvances; n > 0 {
		out = append(out, result.Verdict{
			Name: SettledName, Check: "run.forced_advances == 0", Status: result.Fail,
			Detail: fmt.Sprintf("run.forced_advances = %d: simulated time was moved on before the process had settled (the run's warnings say what held it), so its timings may be wrong", n),
		})
	}
	for i, e := range s.Expect {
		v := result.Verdict{Name: e.Name, Check: e.Check}
		if v.Name == "" {
			v.Name = strings.TrimSpace(e.Check)
		}
		c, err := s.Check(i)
		if err != nil {
			v.Status, v.Detail = result.Fail, "does not compile: "+err.Error()
			out = append(out, v)
			continue
		}
		v.Status, v.Detail = c.Judge(r, c.Timing || e.Timing)
		out = append(out, v)
	}
	return out
}

// SettledName is the verdict Expectations adds, failed, to a run whose
// simulated time had to be forced on (run.forced_advances above 0):
// whatever its expectations say, such a run is not the scenario's.
const SettledName = "simulated time moved only once the process had settled"

// Comparisons judges s's compare: checks once every variant of its
// sweep has run. vs are s's variants (scenario.Variants) and reps their
// reports, in the same order. A comparison reading a variant that did not complete is
// not judged, and so is a timing comparison when any variant fell behind.
func Comparisons(s *scenario.Scenario, vs []scenario.Variant, reps []*result.Report) []result.Verdict {
	if len(s.Compare) == 0 {
		return nil
	}
	env := expect.Comparison{Variant: map[string]result.Result{}}
	var incomplete, behind []string
	for i, v := range vs {
		if i >= len(reps) || reps[i] == nil || reps[i].Err != "" {
			incomplete = append(incomplete, v.Label)
			continue
		}
		env.Variant[v.Label] = reps[i].Result
		if run := reps[i].Result.Run; !run.KeptUp {
			label := v.Label
			if why := run.Behind(); why != "" {
				label += " (" + why + ")"
			}
			behind = append(behind, label)
		}
	}
	out := make([]result.Verdict, 0, len(s.Compare))
	for i, e := range s.Compare {
		v := result.Verdict{Name: e.Name, Check: e.Check}
		c, err := s.Comparison(i)
		if err != nil {
			v.Status, v.Detail = result.Fail, "does not compile: "+err.Error()
			out = append(out, v)
			continue
		}
		switch {
		case len(incomplete) > 0:
			v.Status, v.Detail = result.NotJudged, "not judged: the variant "+strings.Join(incomplete, ", ")+" did not complete"
		case (c.Timing || e.Timing) && len(behind) > 0:
			v.Status, v.Detail = result.NotJudged, "not judged: the variant "+strings.Join(behind, ", ")+" fell behind its schedule (a timing comparison)"
		default:
			v.Status, v.Detail = c.JudgeComparison(env)
		}
		out = append(out, v)
	}
	return out
}
