package scenarios_test

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/scenarios"
)

// largeSize is the fleet well above the CI size that TestShippedSizes runs
// every shipped scenario at.
const largeSize = 1000

// smallestSize is the fleet a scenario that declares no scale.min is
// expected to hold at, at the least.
const smallestSize = 50

// TestShippedSizes runs every shipped scenario at the smallest fleet it
// supports (its scale.min, or 50 when it declares none) and at 1,000
// workers, judging its expectations and comparisons (not its baseline,
// recorded at 300 workers): a claim written for one fleet size must hold
// at the others, or the scenario must say where it stops holding (outside
// scale.min to scale.max, Scale refuses the size). docs/BENCHMARKS.md has
// the full sweep from 50 to 10,000 workers.
func TestShippedSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped scenario twice on the real stack (a few minutes)")
	}
	names, err := fs.Glob(scenarios.FS, "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no shipped scenarios: %v", err)
	}
	for _, name := range names {
		sc := parse(t, name)
		small := smallestSize
		if r := sc.Scaling; r != nil {
			if r.Min > 1 {
				small = r.Min
				if _, err := sc.Scale(r.Min - 1); err == nil || !strings.Contains(err.Error(), "scale.min") {
					t.Errorf("%s: Scale(%d), below scale.min: %v", name, r.Min-1, err)
				}
			}
			if r.Max < scenario.MaxWorkers {
				if _, err := sc.Scale(r.Max + 1); err == nil || !strings.Contains(err.Error(), "scale.max") {
					t.Errorf("%s: Scale(%d), above scale.max: %v", name, r.Max+1, err)
				}
			}
		}
		for _, n := range []int{small, largeSize} {
			t.Run(fmt.Sprintf("%s/%d", strings.TrimSuffix(name, ".yaml"), n), func(t *testing.T) {
				scaled, err := sc.Scale(n)
				if err != nil {
					t.Fatal(err)
				}
				judge(t, scaled, nil)
			})
		}
	}
}
