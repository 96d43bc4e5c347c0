package result

import "testing"

// TestOutcome: a run passes when it completed, no check failed and one at
// least was judged; a run whose every check was not judged has shown
// nothing, and does not pass.
func TestOutcome(t *testing.T) {
	pass, fail, nj := Verdict{Status: Pass}, Verdict{Status: Fail}, Verdict{Status: NotJudged}
	for _, tc := range []struct {
		name string
		r    Report
		want Status
	}{
		{"no checks", Report{}, Pass},
		{"passed", Report{Verdicts: []Verdict{pass, nj}}, Pass},
		{"failed", Report{Verdicts: []Verdict{pass, fail}}, Fail},
		{"did not complete", Report{Err: "boom", Verdicts: []Verdict{pass}}, Fail},
		{"stopped before its end", Report{Stopped: "a signal at 3s of 40s (simulated)"}, NotJudged},
		{"none judged", Report{Verdicts: []Verdict{nj, nj}}, NotJudged},
		{"none judged, one failed", Report{Verdicts: []Verdict{nj, fail}}, Fail},
		{"a comparison judged", Report{Verdicts: []Verdict{nj}, Comparisons: []Verdict{pass}}, Pass},
		{"comparisons not judged", Report{Comparisons: []Verdict{nj}}, NotJudged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Outcome(); got != tc.want {
				t.Errorf("Outcome() = %s, want %s", got, tc.want)
			}
			if got := tc.r.Passed(); got != (tc.want == Pass) {
				t.Errorf("Passed() = %v", got)
			}
		})
	}
}
