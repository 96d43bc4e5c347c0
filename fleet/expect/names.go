package expect

import (
	"reflect"
	"slices"
	"strings"

	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// metricPaths returns the longest member chains rooted at a Result name
// ("leader.mailbox.max_depth", "workers.at_version[\"2.1.0\"]"), in
// source order.
func metricPaths(root exprast.Node) []exprast.Node {
	out := slices.DeleteFunc(metricChains(root), func(n exprast.Node) bool {
		segs, ok := segments(metricOf(n))
		return !ok || names.types[segs[0]] == nil
	})
	slices.SortStableFunc(out, func(a, b exprast.Node) int { return a.Location().From - b.Location().From })
	return out
}

type visitFunc func(exprast.Node)

func (f visitFunc) Visit(n *exprast.Node) { f(*n) }

// segments spells a member chain as name steps, "[]" for an index.
func segments(n exprast.Node) ([]string, bool) {
	switch m := n.(type) {
	case *exprast.IdentifierNode:
		return []string{m.Value}, true
	case *exprast.MemberNode:
		segs, ok := segments(m.Node)
		if !ok {
			return nil, false
		}
		if s, ok := m.Property.(*exprast.StringNode); ok {
			return append(segs, s.Value), true
		}
		return append(segs, "[]"), true
	}
	return nil, false
}

// metricChains is every longest member chain rooted at an identifier,
// known or not.
func metricChains(root exprast.Node) []exprast.Node {
	var all []exprast.Node
	inner := map[exprast.Node]bool{}
	exprast.Walk(&root, visitFunc(func(n exprast.Node) {
		switch m := n.(type) {
		case *exprast.MemberNode:
			inner[m.Node] = true
			all = append(all, n)
		case *exprast.IdentifierNode:
			all = append(all, n)
		}
	}))
	return slices.DeleteFunc(all, func(n exprast.Node) bool { return inner[n] })
}

// nameTable is every name an expectation can read, from Result's expr tags:
// "leader.mailbox.max_depth", "deploys[].version".
type nameTable struct {
	types    map[string]reflect.Type
	children map[string][]string // by parent path, in declaration order
	order    []string            // every path, depth first
}

var names = newNameTable()

// newNameTable reads result.Fields; a map's keys are the run's (events,
// windows), so the names inside its items are not walked down here.
func newNameTable() *nameTable {
	t := &nameTable{types: map[string]reflect.Type{}, children: map[string][]string{}}
	for _, f := range result.Fields() {
		if f.InMap {
			continue
		}
		p, parent := itemPath(f.Pattern), itemPath(f.Parent)
		t.types[p] = f.Type
		t.children[parent] = append(t.children[parent], f.Name)
		t.order = append(t.order, p)
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
			t.types[p+"[]"] = f.Type.Elem()
		}
	}
	return t
}

// itemPath spells result's pattern as the expectations do: an item of a
// list or a map as "[]" ("deploys[].version").
func itemPath(pattern string) string { return strings.ReplaceAll(pattern, "[*]", "[]") }

// firstUnknown walks segs down the table and returns the first step that
// is not a name (and its parent's path); ok is false when every step is
// known (a map's keys are not checked).
func (t *nameTable) firstUnknown(segs []string) (parent, bad string, ok bool) {
	cur := ""
	for _, s := range segs {
		if cur != "" && t.types[cur].Kind() == reflect.Map {
			return "", "", false
		}
		next := joinPath(cur, s)
		if s == "[]" {
			next = cur + "[]"
		}
		if t.types[next] == nil {
			if s == "[]" {
				return "", "", false // expr reports indexing a non-list itself
			}
			return cur, s, true
		}
		cur = next
	}
	return "", "", false
}

// ResultNames lists every name a check can read, as the scenario's
// vacuity check spells them:
// the leaves of Result by their expr tags, "[]" for an item of a list or
// a map of structs ("deploys[].version", "windows[].relay.delivered"); a
// map of numbers is a name itself (workers.at_version).
func ResultNames() []string {
	var out []string
	for _, f := range result.Fields() {
		k := f.Type.Kind()
		if k == reflect.Struct || (k == reflect.Slice || k == reflect.Map) && f.Type.Elem().Kind() == reflect.Struct {
			continue // its fields are names
		}
		out = append(out, itemPath(f.Pattern))
	}
	return out
}

// ResultPath is the name a member chain's segments read, as resultNames
// spells it: "workers.at_version" for workers.at_version["2.0.0"],
// "deploys[].delivered" for deploys[0].delivered,
// "windows[].relay.delivered" for windows["herd"].relay.delivered.
func ResultPath(segs []string) string {
	t, path := resultType, ""
	for i := 0; i < len(segs); i++ {
		switch t.Kind() {
		case reflect.Slice, reflect.Map:
			if t.Elem().Kind() != reflect.Struct {
				return path // a map of numbers: its key is not a name
			}
			t, path = t.Elem(), path+"[]"
			continue // segs[i] is the index or the key
		case reflect.Struct:
		default:
			return path
		}
		f, ok := exprField(t, segs[i])
		if !ok {
			return path
		}
		t, path = f.Type, joinPath(path, segs[i])
	}
	return path
}

var resultType = reflect.TypeFor[result.Result]()

// exprField is t's field named name in expressions (its expr tag).
func exprField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if n, ok := result.ExprName(t.Field(i)); ok && n == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// joinPath appends a name to a dotted path ("leader" + "mailbox").
var joinPath = result.JoinPath

// Reads lists the Result names text reads, in source order: as written
// ("workers.at_version[\"2.0.0\"]") and as resultPath spells them
// ("workers.at_version"). It returns none if text does not parse.
func Reads(text string) (written, paths []string) {
	tree, err := parser.Parse(text)
	if err != nil {
		return nil, nil
	}
	for _, n := range metricPaths(tree.Node) {
		segs, _ := segments(n)
		written = append(written, n.String())
		paths = append(paths, ResultPath(segs))
	}
	return written, paths
}

// Names lists every name a check can read, depth first, a struct's name
// before its fields' ("leader", "leader.mailbox", ...; "deploys[].version"
// for a list's items).
func Names() []string { return slices.Clone(names.order) }

// NameType is the Go type of the value a name reads (nil for no name).
func NameType(name string) reflect.Type { return names.types[name] }
