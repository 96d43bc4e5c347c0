package scenario

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
)

// Variant is one run of a sweep: the scenario with one value of each swept
// parameter set.
type Variant struct {
	// Name lists the values, "leader.mailbox.policy=reject" (comma
	// separated when several parameters are swept); "" without a sweep.
	// A value given a label in the file is named by its label.
	Name string
	// Label is the values alone, "reject" or "aimd" ("reject,backoff" when
	// several parameters are swept): how compare: checks name the variant.
	Label string
	// Params maps each swept path to its value as written; nil without a
	// sweep.
	Params map[string]string
	// Scenario is the variant's complete scenario (defaults, validation,
	// compiled expectations), without a sweep of its own.
	Scenario *Scenario
}

// maxVariants bounds a sweep's cartesian product: each variant is a run.
const maxVariants = 1000

// Variants expands the sweep: the cartesian product of the swept values,
// the first parameter varying slowest (file order). Each value is set in
// the scenario as if the file said so (replacing what the file says at
// that path), then the variant is completed and validated like a loaded
// file, so a bad value is reported at its place in the sweep. Without a
// sweep it returns one variant: s itself, with an empty Name.
//
// Variants are built from s as it is now, so a Scale before Variants
// scales every variant.
func (s *Scenario) Variants() ([]Variant, error) {
	if len(s.Sweep) == 0 {
		return []Variant{{Scenario: s}}, nil
	}
	var out []Variant
	err := s.eachVariant(func(v Variant) { out = append(out, v) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachVariant builds the sweep's variants in turn, as Variants, and gives
// each that is valid to f; it returns the errors of the others, sorted.
// It holds one variant at a time.
func (s *Scenario) eachVariant(f func(Variant)) error {
	base := s.src
	if base == nil {
		base = sourceOf(s)
	}
	for _, p := range s.Sweep {
		if len(p.Values) == 0 {
			return Errors{base.at(join("sweep", p.Path), "no values: give a list of at least one value")}
		}
		if msg := sweepTarget(p.Path); msg != "" {
			return Errors{base.at(join("sweep", p.Path), "%s", msg)}
		}
	}
	total, err := sweepSize(s.Sweep, base)
	if err != nil {
		return Errors{err}
	}
	var errs Errors
	pick := make([]int, len(s.Sweep))
	for range total {
		v, err := s.variant(base, pick)
		if err != nil {
			errs = append(errs, err...)
		} else {
			f(v)
		}
		// Next combination: the last parameter varies fastest.
		for i := len(pick) - 1; i >= 0; i-- {
			if pick[i]++; pick[i] < len(s.Sweep[i].Values) {
				break
			}
			pick[i] = 0
		}
	}
	if len(errs) > 0 {
		return errs.sorted()
	}
	return nil
}

// sweepSize returns how many variants sweep makes, or an Error when they
// are more than maxVariants or hold more than MaxSweepNodes keys and list
// items together. Each variant holds the file's (src.nodes, aliases
// expanded) but for the sweep's values, and one value of each parameter.
func sweepSize(sweep []SweepParam, src *source) (int, *Error) {
	total, base := 1, src.nodes
	for _, p := range sweep {
		total *= max(len(p.Values), 1)
		if total > maxVariants {
			return 0, src.at("sweep", "the sweep makes more than %d variants: sweep fewer values, or split the file", maxVariants)
		}
		base -= p.size
	}
	n := total * max(base, 0)
	for _, p := range sweep {
		// Each value is in total/len(p.Values) of the variants.
		n += p.size * (total / max(len(p.Values), 1))
	}
	if n > MaxSweepNodes {
		return 0, src.at("sweep", "the sweep makes %d variants of %d keys and list items each (the file's, one value of each parameter): %d in all, over the limit of %d (each variant is a copy of the scenario, built and checked whole): sweep fewer values, or split the file", total, n/total, n, MaxSweepNodes)
	}
	return total, nil
}

// checkVariants builds the variants of s's sweep to check them, and sets
// s.Warnings to those every variant has (a check that reads only what
// some variants never send still compares the others). Each swept value
// is tried once first, the other parameters at their first value, so
// that a bad value is reported once at its place in the sweep; then, if
// they all pass, every combination (values can clash). It holds one
// variant at a time.
func (s *Scenario) checkVariants() Errors {
	var (
		errs   Errors
		common Errors
		seen   bool
	)
	keep := func(v Variant) {
		if !seen {
			common, seen = slices.Clone(v.Scenario.Warnings), true
			return
		}
		common = slices.DeleteFunc(common, func(w *Error) bool {
			return !slices.ContainsFunc(v.Scenario.Warnings, func(x *Error) bool { return *x == *w })
		})
	}
	if _, err := sweepSize(s.Sweep, s.src); err != nil {
		return Errors{err}
	}
	pick := make([]int, len(s.Sweep))
	for i, p := range s.Sweep {
		for j := range p.Values {
			if j == 0 && i > 0 || len(errs) >= maxProblems {
				continue
			}
			clear(pick)
			pick[i] = j
			v, verrs := s.variant(s.src, pick)
			errs = append(errs, verrs...)
			if len(verrs) == 0 && len(s.Sweep) == 1 {
				keep(v) // with one parameter, the loop builds them all
			}
		}
	}
	if len(errs) == 0 && len(s.Sweep) > 1 {
		if err := s.eachVariant(keep); err != nil {
			var es Errors
			if !errors.As(err, &es) {
				return Errors{s.src.at("sweep", "%v", err)}
			}
			errs = append(errs, es...)
		}
	}
	if len(errs) == 0 {
		s.Warnings = common
	}
	return errs
}

// variant builds the variant with value pick[i] of each parameter i.
func (s *Scenario) variant(base *source, pick []int) (Variant, Errors) {
	v := Variant{Params: map[string]string{}}
	var name, label []string
	for i, p := range s.Sweep {
		text := p.text(pick[i])
		v.Params[p.Path] = text
		l := p.label(pick[i])
		name = append(name, p.Path+"="+l)
		label = append(label, l)
	}
	v.Name, v.Label = strings.Join(name, ","), strings.Join(label, ",")
	// Without its sweep and comparisons, which a variant has not: copying
	// them would cost every variant all the sweep's values.
	shallow := *s
	shallow.Sweep, shallow.Compare, shallow.comparisons = nil, nil, nil
	sc := shallow.Clone()
	src := &source{file: base.file, lines: base.lines, anchors: base.anchors, nodes: base.nodes, checks: base.compiled(), pos: maps.Clone(base.pos),
		note: " (in the variant " + v.Name + ")", labels: map[string]string{}}
	d := newDecoder(src, nil)
	for i, p := range s.Sweep {
		n, err := p.node(pick[i])
		if err != nil {
			return v, Errors{src.at(join("sweep", p.Path), "value %d: %v", pick[i]+1, err)}
		}
		field := locate(reflect.ValueOf(sc).Elem(), p.Path)
		field.Set(reflect.Zero(field.Type()))
		for q := range src.pos {
			if q == p.Path || strings.HasPrefix(q, p.Path+".") || strings.HasPrefix(q, p.Path+"[") {
				delete(src.pos, q)
			}
		}
		label := index(join("sweep", p.Path), pick[i])
		src.labels[p.Path] = label
		d.value(n, field, p.Path, label)
	}
	if len(d.errs) > 0 {
		return v, d.errs
	}
	if errs := finish(sc, src, nil); len(errs) > 0 {
		return v, errs
	}
	if g := sc.leaderGrowth; g != 0 {
		if errs := sc.regrowLeader(s.Sweep, g, src); len(errs) > 0 {
			return v, errs
		}
	}
	sc.src = src
	v.Scenario = sc
	return v, nil
}

// regrowLeader grows the leader values the sweep set, which come as
// written, as Scale grew the file's (a proportional leader grown by g).
func (s *Scenario) regrowLeader(sweep []SweepParam, g float64, src *source) Errors {
	for _, p := range sweep {
		switch p.Path {
		case "leader":
			s.Leader.growCapacity(g)
			s.Leader.growService(g)
		case "leader.mailbox", "leader.mailbox.capacity":
			s.Leader.growCapacity(g)
		case "leader.service":
			s.Leader.growService(g)
		}
	}
	if c := s.Leader.Mailbox.Capacity; c > maxCapacity {
		return Errors{src.at("leader.mailbox.capacity", "%d, grown with the fleet (scale.leader: proportional), is out of range: want 1 to %d", c, maxCapacity)}
	}
	return nil
}

// label names value i: its label, or its text when the values are a list.
func (p SweepParam) label(i int) string {
	if i < len(p.Labels) {
		return p.Labels[i]
	}
	return p.text(i)
}

// text is value i as written.
func (p SweepParam) text(i int) string {
	if i < len(p.nodes) && p.nodes[i] != nil {
		n := p.nodes[i]
		if t, ok := scalarText(n); ok {
			return t
		}
		return strings.Join(strings.Fields(n.String()), " ")
	}
	return fmt.Sprint(p.Values[i])
}

// node is value i as a YAML node: as written, or encoded from Values for a
// Scenario built in code.
func (p SweepParam) node(i int) (ast.Node, error) {
	if i < len(p.nodes) && p.nodes[i] != nil {
		return p.nodes[i], nil
	}
	return yaml.ValueToNode(p.Values[i])
}

// locate returns the field at a dotted path of yaml keys (checked by
// sweepTarget), allocating the structs on the way.
func locate(v reflect.Value, path string) reflect.Value {
	for _, key := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.FieldByIndex(fieldsOf(v.Type()).byName[key])
	}
	return v
}

// sweepTarget checks that path names a key of the scenario, through
// mappings only; it returns what is wrong, or "".
func sweepTarget(path string) string {
	t := reflect.TypeFor[Scenario]()
	at := ""
	for _, key := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || textual(t) || t == selectorType || t == expectType {
			return fmt.Sprintf("%s has no keys inside: sweep %s itself, or a key of a mapping", at, at)
		}
		fs := fieldsOf(t)
		idx, ok := fs.byName[key]
		if ok && at == "" && key == "scale" {
			return "scale says which fleet sizes --workers may give every variant: it cannot be swept"
		}
		if !ok || (at == "" && key == "sweep") {
			where := "at the top"
			if at != "" {
				where = "in " + at
			}
			return fmt.Sprintf("%q is not a scenario path: no key %q %s%s; the keys there are %s", path, key, where, wording.DidYouMean(key, fs.order), fs.names())
		}
		t = t.FieldByIndex(idx).Type
		at = join(at, key)
	}
	return ""
}

// readSweep reads the top-level sweep: a mapping of dotted scenario paths to
// lists of values, in file order.
func readSweep(d *decoder, body ast.Node) (_ []SweepParam, errs Errors) {
	src := d.src
	root, _ := d.entries(d.resolve(body, ""), "")
	var node ast.Node
	for _, e := range root {
		if k, _ := scalarText(d.resolve(e.Key, "")); k == "sweep" {
			node = d.resolve(e.Value, "sweep")
			src.pos["sweep"] = nodePos(e.Key)
		}
	}
	if node == nil || node.Type() == ast.NullType {
		return nil, nil
	}
	entries, ok := d.entries(node, "sweep")
	if !ok {
		return nil, Errors{src.atPos(nodePos(node), "sweep", describe(node)+" is not a sweep: want a mapping of scenario paths to lists of values, as in\n\tsweep:\n\t  leader.mailbox.policy: [reject, drop-oldest]")}
	}
	var out []SweepParam
	// The values' own failures (an alias to no anchor) are the sweep's
	// errors too: Parse has collected the decoder's before the sweep.
	failed := len(d.errs)
	defer func() { errs = append(errs, d.errs[failed:]...) }()
	keep := func(p SweepParam, at ast.Node, show string) {
		p.size = 1 + measure(src, at).nodes
		if len(p.Values) == 0 {
			if len(d.errs) == failed {
				errs = append(errs, src.atPos(nodePos(at), show, "no value to try: want a list of values, or a mapping of labels to values"))
			}
			return
		}
		out = append(out, p)
	}
	for _, e := range entries {
		path, ok := scalarText(d.resolve(e.Key, "sweep"))
		if !ok {
			errs = append(errs, src.atPos(nodePos(e.Key), "sweep", "a swept path is a dotted key, as in leader.mailbox.policy"))
			continue
		}
		show := join("sweep", path)
		src.pos[show] = nodePos(e.Key)
		if msg := sweepTarget(path); msg != "" {
			errs = append(errs, src.atPos(nodePos(e.Key), show, msg))
			continue
		}
		for _, p := range out {
			if p.Path == path || strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(p.Path, path+".") {
				errs = append(errs, src.atPos(nodePos(e.Key), show, fmt.Sprintf("overlaps %s, swept above: sweep each value once", p.Path)))
			}
		}
		val := d.resolve(e.Value, show)
		if labelled, ok := d.labelledValues(val, show); ok {
			p := SweepParam{Path: path}
			for _, lv := range labelled {
				item := d.resolve(lv.Value, show)
				if item == nil {
					continue
				}
				label, _ := scalarText(d.resolve(lv.Key, show))
				if !nameRE.MatchString(label) || len(label) > maxNameLen {
					errs = append(errs, src.atPos(nodePos(lv.Key), show, fmt.Sprintf("%q is not a valid label: want lower-case letters, digits and single dashes, as in static-floor", label)))
				}
				if slices.Contains(p.Labels, label) {
					errs = append(errs, src.atPos(nodePos(lv.Key), show, fmt.Sprintf("the label %q is used twice: give each value its own", label)))
				}
				p.Labels = append(p.Labels, label)
				p.nodes = append(p.nodes, item)
				p.Values = append(p.Values, nodeValue(item))
			}
			keep(p, e.Value, show)
			continue
		}
		list, ok := val.(*ast.SequenceNode)
		if !ok || len(list.Values) == 0 {
			example := "[first, second]"
			if t, ok := scalarText(val); ok && t != "" {
				example = "[" + t + "]"
			}
			errs = append(errs, src.atPos(nodePos(e.Value), show, "want a list of the values to try, as in "+example+", or a mapping of labels to values, as in {low: 1, high: 50}"))
			continue
		}
		p := SweepParam{Path: path}
		for _, item := range list.Values {
			item = d.resolve(item, show)
			if item == nil {
				continue
			}
			p.nodes = append(p.nodes, item)
			p.Values = append(p.Values, nodeValue(item))
		}
		keep(p, e.Value, show)
	}
	return out, errs
}

// labelledValues reads a sweep entry written as a mapping of labels to
// values; ok is false when the entry is not a mapping.
func (d *decoder) labelledValues(n ast.Node, show string) ([]*ast.MappingValueNode, bool) {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		return nil, false
	}
	entries, ok := d.entries(n, show)
	return entries, ok && len(entries) > 0
}

// nodeValue is a swept value for SweepParam.Values: the scalar's value
// (int64, float64, bool or string; uint64 past int64), or the YAML text
// of anything larger.
func nodeValue(n ast.Node) any {
	switch m := n.(type) {
	case *ast.IntegerNode:
		if i, ok := intValue(n); ok {
			return i
		}
		return m.Value
	case *ast.FloatNode:
		return m.Value
	case *ast.BoolNode:
		return m.Value
	}
	if t, ok := scalarText(n); ok {
		return t
	}
	return n.String()
}
