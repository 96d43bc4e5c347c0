package result

import (
	"slices"
	"testing"
)

func TestDifferences(t *testing.T) {
	a := Result{Lost: 1}
	a.Run.WallSeconds = 3
	a.Workers.AtVersion = map[string]int{"1.0.0": 2}
	b := a
	b.Run.WallSeconds = 4 // the machine's: not a difference
	if d := Differences(&a, &b); len(d) != 0 {
		t.Fatalf("Differences = %q, want none", d)
	}
	b.Lost = 2
	b.Workers.AtVersion = map[string]int{"1.0.0": 1, "2.0.0": 1}
	want := []string{"lost: 1 ≠ 2", `workers.at_version["1.0.0"]: 2 ≠ 1`, `workers.at_version["2.0.0"]: missing ≠ 1`}
	if d := Differences(&a, &b); !slices.Equal(d, want) {
		t.Fatalf("Differences = %q, want %q", d, want)
	}
}
