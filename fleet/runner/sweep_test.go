package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// sweepFile is a sweep of two variants, each with an expectation, and a
// comparison between them that holds (the same seed, the same fleet:
// the same count of workers) and one that fails.
const sweepFile = `
name: sweep
speed: 20
duration: 4s
fleet:
  count: 4
leader:
  outbox: {durability: none}
sweep:
  leader.mailbox.policy: [reject, drop-oldest]
expect:
  - lost == 0
compare:
  - name: same fleet
    check: variant["reject"].fleet.count == variant["drop-oldest"].fleet.count
  - name: impossible
    check: variant["reject"].fleet.count > variant["drop-oldest"].fleet.count
`

func sweepPlan(t *testing.T) *Plan {
	t.Helper()
	sc, err := scenario.Parse("sweep.yaml", []byte(sweepFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan([]*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs() != 2 {
		t.Fatalf("%d runs, want 2", p.Runs())
	}
	return p
}

// TestSweepGivesTheWholeVerdict: a program using the runner, with no
// hooks of its own, gets every variant run and judged and the sweep's
// comparisons judged on the last variant's report; Judged sees the runs
// so far each time one is judged.
func TestSweepGivesTheWholeVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two variants on the real stack")
	}
	p := sweepPlan(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var seen []int
	sw, err := p.Sweep(ctx, SweepOptions{
		RunOptions: RunOptions{Dir: t.TempDir()},
		Judged: func(reps []*result.Report) error {
			seen = append(seen, len(reps))
			return fmt.Errorf("disk full after %d", len(reps))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Reports) != 2 || sw.Left != 0 {
		t.Fatalf("%d reports, %d left; want 2 and 0", len(sw.Reports), sw.Left)
	}
	for i, want := range []string{"leader.mailbox.policy=reject", "leader.mailbox.policy=drop-oldest"} {
		rep := sw.Reports[i]
		if rep.Variant != want || len(rep.Verdicts) != 1 || rep.Verdicts[0].Status != result.Pass {
			t.Errorf("report %d: variant %q, verdicts %+v; want %q, lost == 0 passed", i, rep.Variant, rep.Verdicts, want)
		}
	}
	if c := sw.Reports[0].Comparisons; c != nil {
		t.Errorf("the first variant carries comparisons %+v; want them on the last", c)
	}
	got := map[string]result.Status{}
	for _, v := range sw.Reports[1].Comparisons {
		got[v.Name] = v.Status
	}
	if len(got) != 2 || got["same fleet"] != result.Pass || got["impossible"] != result.Fail {
		t.Errorf("comparisons %v; want same fleet passed, impossible failed", got)
	}
	if fmt.Sprint(seen) != "[1 2]" || sw.JudgedErr == nil || sw.JudgedErr.Error() != "disk full after 1" {
		t.Errorf("Judged saw %v runs, JudgedErr %v; want [1 2] and the first error", seen, sw.JudgedErr)
	}
}

// TestSweepStopped: a sweep whose context has ended starts no run and
// counts them all as left; a step that says stop ends the sweep after
// its report, with no comparison judged on a sweep that did not finish.
func TestSweepStopped(t *testing.T) {
	p := sweepPlan(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sw, err := p.Sweep(ctx, SweepOptions{})
	if err != nil || len(sw.Reports) != 0 || sw.Left != 2 {
		t.Fatalf("ended context: %d reports, %d left, %v; want none run, 2 left", len(sw.Reports), sw.Left, err)
	}
	var steps []Step
	stop := func(_ context.Context, st Step, _ func(*result.Report)) (*result.Report, bool, error) {
		steps = append(steps, st)
		return &result.Report{Variant: st.Variant.Name}, true, nil
	}
	sw, err = p.Sweep(context.Background(), SweepOptions{Run: stop})
	if err != nil || len(sw.Reports) != 1 || sw.Left != 1 || sw.Reports[0].Comparisons != nil {
		t.Fatalf("stopped: %d reports, %d left, comparisons %v, %v; want 1 report, 1 left, none", len(sw.Reports), sw.Left, sw.Reports[0].Comparisons, err)
	}
	if len(steps) != 1 || steps[0].N != 1 || steps[0].Of != 2 || steps[0].Variant.Label != "reject" {
		t.Errorf("steps %+v; want variant 1 of 2, reject", steps)
	}
}

// TestRepeatRounds: Repeat sweeps the plan n times, saying which round
// starts, and stops at a round whose Judged failed.
func TestRepeatRounds(t *testing.T) {
	p := sweepPlan(t)
	judged := func(_ context.Context, st Step, judged func(*result.Report)) (*result.Report, bool, error) {
		rep := &result.Report{Variant: st.Variant.Name}
		judged(rep)
		return rep, false, nil
	}
	var rounds []string
	o := SweepOptions{Run: judged, Round: func(i, n int) { rounds = append(rounds, fmt.Sprintf("%d/%d", i, n)) }}
	got, err := p.Repeat(context.Background(), 3, o)
	if err != nil || len(got) != 3 || len(got[2]) != 2 || fmt.Sprint(rounds) != "[1/3 2/3 3/3]" {
		t.Fatalf("%d rounds, rounds said %v, %v; want 3 of 2 runs each", len(got), rounds, err)
	}
	if got[2][1].Comparisons == nil {
		t.Errorf("round 3's last report has no comparisons")
	}
	rounds = nil
	o.Judged = func([]*result.Report) error { return fmt.Errorf("no space") }
	got, err = p.Repeat(context.Background(), 3, o)
	if err == nil || err.Error() != "no space" || len(got) != 1 || fmt.Sprint(rounds) != "[1/3]" {
		t.Errorf("Judged failing: %d rounds, rounds said %v, %v; want 1 round and its error", len(got), rounds, err)
	}
}
