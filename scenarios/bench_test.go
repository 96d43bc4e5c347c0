package scenarios_test

import (
	"os"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// pollHerd is the poll-herd benchmark: a scenario of its own, not shipped
// (TestShipped and `sim check scenarios/` do not run it), measured at
// 10,000 devices in docs/BENCHMARKS.md.
const pollHerd = "../testdata/bench/poll-herd.yaml"

// TestPollHerdBench: the poll-herd benchmark loads, and at its own small
// size (not scaled to CISize: the benchmark's claims are about its own
// leader, grown with the fleet) its expectations and comparisons hold,
// and its samples carry the job requests that draw its herd. Short: it
// only loads.
func TestPollHerdBench(t *testing.T) {
	data, err := os.ReadFile(pollHerd)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("testdata/bench/poll-herd.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := sc.Variants(); err != nil || len(vs) != 2 {
		t.Fatalf("poll-herd: %d variants, %v; want 2 (poll jitter none and jittered)", len(vs), err)
	}
	if testing.Short() {
		t.Skip("runs the poll-herd benchmark at 200 devices, both variants (about 10 s)")
	}
	judge(t, sc, func(t *testing.T, label string, rep *result.Report) {
		ss := rep.Samples
		if len(ss) == 0 || ss[len(ss)-1].JobRequests == 0 {
			t.Errorf("%s: the samples count no job request", label)
		}
	})
}
