package runner

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestRunJobsOldestAgeIsItsWorst: two pulling workers take 20 jobs of a
// second each, added at once, so the oldest job waits at least 9 s
// before the last is leased; by the end the queue is empty. jobs.oldest_age
// is the oldest job's age at its worst over the run, not the empty
// queue's 0 at the end.
func TestRunJobsOldestAgeIsItsWorst(t *testing.T) {
	sc, err := scenario.Parse("oldest.yaml", []byte(`
name: oldest
duration: 20s
speed: 20
sample_every: 500ms
fleet:
  count: 2
  worker:
    delivery: pull
    service: 1s
    poll: {interval: 500ms}
leader:
  outbox: {durability: none}
timeline:
  - {at: 1s, jobs: {count: 20}}
expect:
  - jobs.oldest_age < 5
`))
	if err != nil {
		t.Fatal(err)
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	j := rep.Result.Jobs
	if j.Done != 20 || j.Depth != 0 || j.Leased != 0 {
		t.Fatalf("jobs done %d, depth %d, leased %d at the end; want 20, 0, 0", j.Done, j.Depth, j.Leased)
	}
	var sampled result.Seconds
	for _, s := range rep.Samples {
		sampled = max(sampled, s.JobsOldest)
	}
	// 20 s of work on two workers: the first job added is not done for
	// 10 s; a sample every half second sees it past 5 s whatever the lag.
	if sampled < 5 {
		t.Fatalf("the samples' oldest job was at most %.1f s old: want at least 5 s", sampled)
	}
	if j.OldestAge != sampled {
		t.Errorf("jobs.oldest_age = %.1f s, want the samples' worst, %.1f s (the queue was empty at the end)", j.OldestAge, sampled)
	}
	if v := rep.Verdicts[0]; v.Status != result.Fail {
		t.Errorf("jobs.oldest_age < 5 %s with the oldest job %.1f s old at its worst", v.Status, j.OldestAge)
	}
}
