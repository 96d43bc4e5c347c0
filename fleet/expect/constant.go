package expect

import (
	"reflect"
	"strings"

	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// randomEnvs is how many drawn environments constantOutcome tries after
// its corner cases. A check that can change comes out both ways within a
// few; only a constant one runs them all (docs/BENCHMARKS.md).
const randomEnvs = 600

// constantCheck reports whether prog, a bool program compiled against an
// environment of type env, comes out the same whatever the environment
// holds, and that outcome. A check that is an and (or an or) of parts
// reading different names is decided part by part, each part compiled
// with compile: drawn environments rarely make every part of
// "a + b == c && d == 39" true at once (the chance is the product of the
// parts'), while each part alone comes out both ways within a few.
// Parts that share a name are decided together, by constantOutcome. The
// whole check is tried first: one that comes out both ways is not split.
func constantCheck(prog *vm.Program, env reflect.Type, compile func(string) (*vm.Program, error)) (outcome, constant bool) {
	outcome, constant = constantOutcome(prog, env)
	if !constant {
		return false, false
	}
	and, groups := independentParts(prog.Source().String())
	if len(groups) < 2 {
		return outcome, constant
	}
	every := true // every part is constant
	for _, g := range groups {
		p, err := compile(g)
		if err != nil {
			return outcome, constant
		}
		o, c := constantCheck(p, env, compile)
		if c && o != and {
			return o, true // a part always false in an and, always true in an or
		}
		every = every && c
	}
	if every {
		return and, true
	}
	return false, false
}

// independentParts splits a check whose top is an and (&&) or an or (||)
// into groups of its operands that read no name in common, each group as
// the text of a check. It returns no groups when the check is not split.
func independentParts(text string) (and bool, groups []string) {
	tree, err := parser.Parse(text)
	if err != nil {
		return false, nil
	}
	top, ok := tree.Node.(*exprast.BinaryNode)
	if !ok {
		return false, nil
	}
	op := logical(top.Operator)
	if op == "" {
		return false, nil
	}
	var parts []exprast.Node
	var flatten func(n exprast.Node)
	flatten = func(n exprast.Node) {
		if b, ok := n.(*exprast.BinaryNode); ok && logical(b.Operator) == op {
			flatten(b.Left)
			flatten(b.Right)
			return
		}
		parts = append(parts, n)
	}
	flatten(top)
	reads := make([][]string, len(parts))
	for i, p := range parts {
		for _, n := range metricChains(p) {
			reads[i] = append(reads[i], n.String())
		}
	}
	// Union the parts that read a name in common (or one inside the
	// other: deploys and deploys[0].duration).
	group := make([]int, len(parts))
	for i := range group {
		group[i] = i
	}
	var find func(i int) int
	find = func(i int) int {
		for group[i] != i {
			i = group[i]
		}
		return i
	}
	for i := range parts {
		for j := range i {
			if overlap(reads[i], reads[j]) {
				group[find(i)] = find(j)
			}
		}
	}
	texts := map[int][]string{}
	var order []int
	for i, p := range parts {
		r := find(i)
		if texts[r] == nil {
			order = append(order, r)
		}
		texts[r] = append(texts[r], "("+p.String()+")")
	}
	for _, r := range order {
		groups = append(groups, strings.Join(texts[r], " "+op+" "))
	}
	return op == "&&", groups
}

// logical normalises an and or an or operator ("and" is "&&"), or returns
// "" for any other.
func logical(op string) string {
	switch op {
	case "&&", "and":
		return "&&"
	case "||", "or":
		return "||"
	}
	return ""
}

// overlap reports whether two lists of member chains share a name, or one
// reads inside the other.
func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || Inside(x, y) || Inside(y, x) {
				return true
			}
		}
	}
	return false
}

// Inside reports whether chain y reads inside chain x.
func Inside(x, y string) bool {
	return len(y) > len(x) && strings.HasPrefix(y, x) && (y[len(x)] == '.' || y[len(x)] == '[')
}

// constantOutcome reports whether prog, a bool program compiled against
// an environment of type env, comes out the same whatever the environment
// holds, and that outcome. Every number of the environment is taken as
// non-negative (the result's counts, seconds, ratios and limits are).
//
// It runs prog over environments built from env by reflection (struct
// fields, lists, maps keyed by text, pointers), so that a field added
// later is covered: first corner cases (all zero; every number equal, for
// each value of the medium pool; all distinct, ascending and descending),
// then randomEnvs environments drawn with a fixed seed from pools small
// enough that two numbers are often equal (tierBinary .. tierFull: 0 and
// 1; a number above every bound the check writes; the numbers the check
// writes; their neighbours and a few larger values). A map gets the texts
// the check writes as keys, so that workers.at_version["2.0.0"] finds its
// key. A run that fails (an index past a list's end, a division by zero)
// tells nothing; a program that fails on every environment is not called
// constant.
//
// env can be any type expr takes as an environment: Result, or a map from
// names to Results whose keys the check names.
func constantOutcome(prog *vm.Program, env reflect.Type) (outcome, constant bool) {
	if !explorable(prog.Node()) {
		return false, false
	}
	g := newEnvGen(prog.Source().String(), env.Kind() == reflect.Map)
	var machine vm.VM
	var seen [2]bool
	try := func(f *filler) bool {
		v := reflect.New(env).Elem()
		f.fill(v, 0)
		out, err := machine.Run(prog, v.Interface())
		if b, ok := out.(bool); ok && err == nil {
			if b {
				seen[1] = true
			} else {
				seen[0] = true
			}
		}
		return seen[0] && seen[1]
	}
	for _, f := range g.corners() {
		if try(f) {
			return false, false
		}
	}
	for i := range randomEnvs {
		if try(&filler{g: g, mode: fillRandom, tier: i % (tiers + 1)}) {
			return false, false
		}
	}
	switch {
	case seen[1]:
		return true, true
	case seen[0]:
		return false, true
	}
	return false, false
}

// numericBuiltins are the builtins whose outcome drawn numbers, lists and
// the texts a check writes can explore.
var numericBuiltins = map[string]bool{
	"len": true, "all": true, "any": true, "none": true, "one": true, "count": true, "sum": true,
	"filter": true, "map": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"groupBy": true, "sortBy": true, "sort": true, "reduce": true, "first": true, "last": true,
	"max": true, "min": true, "abs": true, "ceil": true, "floor": true, "round": true, "int": true,
	"float": true, "mean": true, "median": true, "keys": true, "values": true, "get": true,
}

// explorable reports whether drawn environments can explore the outcomes
// of a compiled check: a regular expression (matches), a text function
// (upper, split, ...) or the length of a text needs texts the pools do not
// hold, and a function of the environment's is opaque, so constantOutcome
// never calls such a check constant. The functions a check is patched
// with (their names start with "__") are arithmetic.
func explorable(root exprast.Node) bool {
	ok := true
	exprast.Walk(&root, visitFunc(func(n exprast.Node) {
		switch m := n.(type) {
		case *exprast.BinaryNode:
			ok = ok && m.Operator != "matches"
		case *exprast.BuiltinNode:
			text := m.Name == "len" && len(m.Arguments) > 0 && m.Arguments[0].Type() != nil && m.Arguments[0].Type().Kind() == reflect.String
			ok = ok && numericBuiltins[m.Name] && !text
		case *exprast.CallNode:
			id, named := m.Callee.(*exprast.IdentifierNode)
			ok = ok && named && strings.HasPrefix(id.Value, "__")
		}
	}))
	return ok
}
