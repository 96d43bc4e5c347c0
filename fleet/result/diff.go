package result

import (
	"fmt"
	"maps"
	"slices"
)

// Differences lists every number that differs between two results, as
// "path: a ≠ b", in path order; wall-clock numbers (Kind Wall), which
// are the machine's, are left out. Two runs of one scenario with one
// seed have none.
func Differences(a, b *Result) []string {
	av, bv := numbers(a), numbers(b)
	paths := slices.Sorted(maps.Keys(av))
	for p := range bv {
		if _, ok := av[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []string
	for _, p := range paths {
		x, inA := av[p]
		y, inB := bv[p]
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("%s: missing ≠ %g", p, y))
		case !inB:
			out = append(out, fmt.Sprintf("%s: %g ≠ missing", p, x))
		case x != y:
			out = append(out, fmt.Sprintf("%s: %g ≠ %g", p, x, y))
		}
	}
	return out
}

// numbers is every number of res but the wall-clock ones, by path.
func numbers(res *Result) map[string]float64 {
	out := map[string]float64{}
	Walk(res, func(l Leaf) {
		if m, ok := Lookup(l.Pattern); ok && m.Kind == Wall {
			return
		}
		out[l.Path] = l.Value
	})
	return out
}
