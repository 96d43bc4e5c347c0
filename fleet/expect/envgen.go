package expect

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"

	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// envGen holds the pools an environment's values are drawn from.
type envGen struct {
	rng *rand.Rand
	// ints and floats are the number pools by tier.
	ints   [tiers][]int64
	floats [tiers][]float64
	// lengths of lists and maps; texts for text fields; keys written in
	// the check, for maps.
	lengths []int
	texts   []string
	keys    []string
}

// The pools a random fill draws its numbers from. Equalities between
// names are likely in the small ones, thresholds are crossed in the large
// ones; tierBinary and tierAbove together make both likely at once (three
// names equal and a fourth above every bound the check writes).
const (
	tierBinary = iota // 0 and 1
	tierAbove         // 0, 1 and a number above every number in the check
	tierMedium        // 0, 0.5, 1, 2 and the numbers in the check
	tierFull          // and their neighbours, halves, doubles, sums, products, quotients, and largeValues
	tiers
	// tierMixed draws each number from a tier of its own.
	tierMixed = tiers
)

// largeValues join the full pool; a list or map is at most maxLength long
// (longer only if the check compares a length with a larger number).
var largeValues = []int64{10, 100, 1000, 1_000_000}

const maxLength = 1024

// maxCombined bounds the check's numbers whose sums, differences,
// products and quotients join the pools.
const maxCombined = 6

// newEnvGen builds the pools for the check text. In an environment that
// is a map, the names the check reads at the top are keys of it.
func newEnvGen(text string, envMap bool) *envGen {
	g := &envGen{rng: rand.New(rand.NewPCG(1, 2))}
	var nums []float64
	if tree, err := parser.Parse(text); err == nil {
		exprast.Walk(&tree.Node, visitFunc(func(n exprast.Node) {
			switch m := n.(type) {
			case *exprast.IntegerNode:
				nums = append(nums, math.Abs(float64(m.Value)))
			case *exprast.FloatNode:
				nums = append(nums, math.Abs(m.Value))
			case *exprast.StringNode:
				g.keys = append(g.keys, m.Value)
			case *exprast.IdentifierNode:
				if envMap {
					g.keys = append(g.keys, m.Value)
				}
			}
		}))
	}
	g.ints[tierBinary] = []int64{0, 1}
	g.floats[tierBinary] = []float64{0, 1}
	g.ints[tierMedium] = []int64{0, 1, 2}
	g.floats[tierMedium] = []float64{0, 0.5, 1, 2}
	g.ints[tierFull] = append([]int64{0, 1, 2, 3}, largeValues...)
	g.floats[tierFull] = []float64{0, 0.5, 1, 2, 3}
	for _, v := range largeValues {
		g.floats[tierFull] = append(g.floats[tierFull], float64(v))
	}
	nums = compact(slices.DeleteFunc(nums, func(c float64) bool { return c > 1e15 })) // no count gets there
	lengths := []int64{0, 1, 2, 3}
	above := int64(2)
	for _, c := range nums {
		lo, hi := int64(math.Floor(c)), int64(math.Ceil(c))
		g.ints[tierMedium] = append(g.ints[tierMedium], lo, hi)
		g.ints[tierFull] = append(g.ints[tierFull], lo, hi, lo-1, hi+1)
		g.floats[tierMedium] = append(g.floats[tierMedium], c)
		g.floats[tierFull] = append(g.floats[tierFull], c, c-1, c+1, c/2, c*2, float64(lo), float64(hi))
		lengths = append(lengths, lo-1, lo, hi, hi+1)
		above = max(above, hi+1)
	}
	g.ints[tierAbove] = []int64{0, 1, above}
	g.floats[tierAbove] = []float64{0, 1, float64(above)}
	// What the check's numbers make together, in the full pool only:
	// x * 4 == 1 holds at 0.25.
	few := nums[:min(len(nums), maxCombined)]
	for _, a := range few {
		for _, b := range few {
			for _, c := range []float64{a * b, a + b, math.Abs(a - b), a / b} {
				if c <= 1e15 { // a / 0 is +Inf or NaN: left out
					g.floats[tierFull] = append(g.floats[tierFull], c)
					g.ints[tierFull] = append(g.ints[tierFull], int64(math.Floor(c)), int64(math.Ceil(c)))
				}
			}
		}
	}
	for t := range g.ints {
		g.ints[t] = compact(g.ints[t])
		g.floats[t] = compact(g.floats[t])
	}
	for _, n := range compact(lengths) {
		if n <= maxLength {
			g.lengths = append(g.lengths, int(n))
		}
	}
	g.keys = compact(g.keys)
	g.texts = append([]string{"", "k1"}, g.keys...)
	return g
}

// compact sorts xs and drops repeats and negative numbers.
func compact[T int64 | float64 | string](xs []T) []T {
	var zero T
	xs = slices.DeleteFunc(xs, func(x T) bool { return x < zero })
	slices.Sort(xs)
	return slices.Compact(xs)
}

// corners are the environments tried first: all zero, with and without
// items in lists and maps; every number equal, for each value of the
// medium pool; every number different, ascending and descending.
func (g *envGen) corners() []*filler {
	out := []*filler{{g: g, mode: fillEqual, length: 0}, {g: g, mode: fillEqual, length: 1}}
	for _, v := range g.floats[tierMedium] {
		for _, n := range []int{1, 2} {
			out = append(out, &filler{g: g, mode: fillEqual, equal: v, length: n, truth: true})
		}
	}
	return append(out,
		&filler{g: g, mode: fillDistinct, next: 1, step: 1, length: 2},
		&filler{g: g, mode: fillDistinct, next: 1000, step: -1, length: 2},
		&filler{g: g, mode: fillDistinct, next: 1, step: 1, length: 3, truth: true},
	)
}

// A filler fills one environment.
type filler struct {
	g    *envGen
	mode int
	// tier is the pool of a random fill.
	tier int
	// equal is every number of an equal fill; length every list's and
	// map's; truth every bool's.
	equal  float64
	length int
	truth  bool
	// next and step number a distinct fill's values.
	next, step int64
	text       int
}

const (
	fillRandom = iota
	fillEqual
	fillDistinct
)

// maxDepth stops a recursive type from filling forever.
const maxDepth = 12

func (f *filler) fill(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := f.int(); !v.OverflowInt(n) {
			v.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n := uint64(f.int()); !v.OverflowUint(n) {
			v.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.float())
	case reflect.String:
		v.SetString(f.string())
	case reflect.Struct:
		for _, i := range exprFields(v.Type()) {
			f.fill(v.Field(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Slice:
		n := f.len()
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		m := reflect.MakeMap(v.Type())
		for _, k := range f.mapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e, depth+1)
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	}
}

func (f *filler) bool() bool {
	if f.mode == fillRandom {
		return f.g.rng.IntN(2) == 1
	}
	return f.truth
}

func (f *filler) int() int64 {
	switch f.mode {
	case fillEqual:
		return int64(f.equal)
	case fillDistinct:
		n := f.next
		f.next += f.step
		return max(n, 0)
	}
	pool := f.g.ints[f.pool()]
	return pool[f.g.rng.IntN(len(pool))]
}

func (f *filler) float() float64 {
	switch f.mode {
	case fillEqual:
		return f.equal
	case fillDistinct:
		return float64(f.int())
	}
	pool := f.g.floats[f.pool()]
	return pool[f.g.rng.IntN(len(pool))]
}

// pool is the tier of a random fill's next number.
func (f *filler) pool() int {
	if f.tier == tierMixed {
		return f.g.rng.IntN(tiers)
	}
	return f.tier
}

func (f *filler) string() string {
	texts := f.g.texts
	switch f.mode {
	case fillEqual:
		return texts[len(texts)-1] // a key written in the check, if any
	case fillDistinct:
		f.text++
		return texts[f.text%len(texts)]
	}
	return texts[f.g.rng.IntN(len(texts))]
}

// len is a list's length: mostly short, now and then a length written in
// the check.
func (f *filler) len() int {
	if f.mode != fillRandom {
		return f.length
	}
	if f.g.rng.IntN(4) > 0 {
		return f.g.rng.IntN(4)
	}
	return f.g.lengths[f.g.rng.IntN(len(f.g.lengths))]
}

// mapKeys are a map's keys: the texts written in the check (each one
// most of the time in a random fill), then made-up ones up to the length.
func (f *filler) mapKeys() []string {
	n := f.len()
	var keys []string
	for _, k := range f.g.keys {
		if f.mode != fillRandom || f.g.rng.IntN(4) > 0 {
			keys = append(keys, k)
		}
	}
	if f.mode != fillRandom && n == 0 {
		return nil
	}
	for i := 1; len(keys) < n; i++ {
		keys = append(keys, "k"+strconv.Itoa(i))
	}
	return keys
}

// exprFieldCache holds exprFields' answers by type.
var exprFieldCache sync.Map // reflect.Type → []int

// exprFields are the indexes of t's fields an expression can read
// (result.ExprName).
func exprFields(t reflect.Type) []int {
	if idx, ok := exprFieldCache.Load(t); ok {
		return idx.([]int)
	}
	var idx []int
	for i := range t.NumField() {
		if _, ok := result.ExprName(t.Field(i)); ok {
			idx = append(idx, i)
		}
	}
	exprFieldCache.Store(t, idx)
	return idx
}
