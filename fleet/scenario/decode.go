package scenario

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
)

// decoder fills a Go value from a parsed YAML document, strictly, and keeps
// going after a problem so that one pass reports every problem of the
// file, each at its own line and column. goccy/go-yaml's own decoder stops
// at the first error, so this walks goccy's AST: the struct's yaml tags say
// which keys exist, and every scalar is checked against its field's type.
//
// It records where each value is written (source.pos), which tells an
// explicit "capacity: 0" from a key left out, and places the errors that
// validation finds later.
type decoder struct {
	src     *source
	errs    Errors
	steps   int
	bad     map[string]bool   // the paths that failed
	merging map[ast.Node]bool // the mappings being expanded by <<
}

// maxSteps bounds the values one decode visits. A real scenario has a few
// thousand; aliases of aliases can make a small file expand without end
// ("billion laughs"). checkExpansion refuses such a file before it is
// decoded; this stays as the decoder's own bound.
const maxSteps = 1 << 18

// newDecoder returns a decoder for doc (nil: for values that refer to the
// anchors src already holds, as a sweep's do).
func newDecoder(src *source, doc ast.Node) *decoder {
	d := &decoder{src: src}
	if doc != nil {
		collectAnchors(src, doc)
	}
	return d
}

// anchor returns the value an alias of name at p stands for (anchorOf).
func (d *decoder) anchor(name string, p position) (ast.Node, bool) {
	a, _ := d.src.anchorOf(name, p).(*ast.AnchorNode)
	if a == nil {
		return nil, false
	}
	return a.Value, a.Value != nil
}

func (d *decoder) fail(n ast.Node, path, format string, args ...any) {
	if d.bad == nil {
		d.bad = map[string]bool{}
	}
	d.bad[path] = true
	if len(d.errs) < maxProblems {
		d.errs = append(d.errs, d.src.atPos(nodePos(n), path, fmt.Sprintf(format, args...)))
	}
}

// failed returns the paths that failed to decode.
func (d *decoder) failed() map[string]bool { return d.bad }

// nodePos is where a node starts: a block mapping at its first key, a
// mapping entry at its key, anything else at its first token.
func nodePos(n ast.Node) position {
	switch m := n.(type) {
	case nil:
		return position{}
	case *ast.MappingNode:
		if !m.IsFlowStyle && len(m.Values) > 0 {
			return nodePos(m.Values[0])
		}
	case *ast.MappingValueNode:
		if m.Key != nil {
			return nodePos(m.Key)
		}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return position{}
	}
	return position{tk.Position.Line, tk.Position.Column}
}

// resolve looks through anchors, aliases and tags to the value. It returns
// nil after reporting an alias to no anchor.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	for range 64 {
		switch m := n.(type) {
		case *ast.AnchorNode:
			n = m.Value
		case *ast.AliasNode:
			name := ""
			if m.Value != nil {
				name = m.Value.GetToken().Value
			}
			v, ok := d.anchor(name, nodePos(m))
			if !ok {
				d.fail(m, path, "alias *%s: no anchor &%s before it", name, name)
				return nil
			}
			n = v
		case *ast.TagNode:
			if m.Start != nil && !strings.HasPrefix(m.Start.Value, "!!") {
				tag := m.Start.Value
				d.fail(m, path, "the tag %s is not supported: scenario files use plain YAML (anchors and aliases work)", tag)
				return nil
			}
			n = m.Value
		case *ast.MappingKeyNode:
			n = m.Value
		default:
			return n
		}
	}
	d.fail(n, path, "aliases nested too deep")
	return nil
}

// step counts one value visited; false once the document has expanded
// past maxSteps (reported once).
func (d *decoder) step(n ast.Node, show string) bool {
	if d.steps++; d.steps == maxSteps {
		d.fail(n, show, "the document expands to more than %d values (aliases inside aliases?)", maxSteps)
	}
	return d.steps < maxSteps
}

// value decodes n into v. path is the value's place in the scenario (for
// the position map), show the path printed in messages (the sweep entry,
// for a swept value).
func (d *decoder) value(n ast.Node, v reflect.Value, path, show string) {
	if n == nil || !d.step(n, show) {
		return
	}
	at := n
	if n = d.resolve(n, show); n == nil {
		return
	}
	if _, alias := at.(*ast.AliasNode); !alias {
		at = n
	}
	// An alias's value is placed where the alias is: the problems with it
	// as a whole (a name given twice, the wrong type) are the alias's.
	d.src.pos[path] = nodePos(at)
	null := n.Type() == ast.NullType
	switch v.Type() {
	case selectorType:
		if !null {
			d.selector(n, v.Addr().Interface().(*Selector), path, show)
		}
		return
	case expectType:
		d.expect(n, v.Addr().Interface().(*Expect), path, show)
		return
	}
	if v.Kind() == reflect.Pointer {
		elem := v.Type().Elem()
		if null && (elem.Kind() != reflect.Struct || textual(elem)) {
			d.fail(n, show, "no value: write %s, or leave the key out for the default", want(elem))
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(elem))
		}
		d.value(n, v.Elem(), path, show)
		return
	}
	u, isText := v.Addr().Interface().(encoding.TextUnmarshaler)
	if null && (isText || v.Kind() != reflect.Struct) {
		return // "key:" with nothing: the zero value, as if left out
	}
	if isText {
		text, ok := scalarText(n)
		if !ok {
			d.fail(n, show, "%s is not valid here: want %s", describe(n), want(v.Type()))
			return
		}
		if err := u.UnmarshalText([]byte(text)); err != nil {
			d.fail(n, show, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.mapping(n, v, path, show)
	case reflect.Slice:
		d.sequence(n, v, path, show)
	case reflect.String:
		text, ok := scalarText(n)
		if !ok {
			d.fail(n, show, "%s is not valid here: want text", describe(n))
			return
		}
		v.SetString(text)
	case reflect.Int, reflect.Int64, reflect.Int32:
		i, ok := intValue(n)
		if !ok || v.OverflowInt(i) {
			d.fail(n, show, "%s is not valid here: want a whole number", describe(n))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		i, ok := intValue(n)
		if !ok || i < 0 {
			d.fail(n, show, "%s is not valid here: want a whole number, 0 or more", describe(n))
			return
		}
		v.SetUint(uint64(i))
	case reflect.Float64, reflect.Float32:
		f, ok := floatValue(n)
		if !ok {
			d.fail(n, show, "%s is not valid here: want a number", describe(n))
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.fail(n, show, "%s is not valid here: want true or false", describe(n))
			return
		}
		v.SetBool(b.Value)
	default:
		d.fail(n, show, "cannot decode into %v (a bug in fleetsim)", v.Type())
	}
}

// mapping decodes a mapping into a struct by its yaml tags; null leaves
// the struct as it is.
func (d *decoder) mapping(n ast.Node, v reflect.Value, path, show string) {
	if n.Type() == ast.NullType {
		return
	}
	fs := fieldsOf(v.Type())
	entries, ok := d.entries(n, show)
	if !ok {
		d.fail(n, show, "%s is not valid here: want a mapping with the keys %s", describe(n), fs.names())
		return
	}
	seen := map[string]bool{}
	for _, e := range entries {
		key, ok := scalarText(d.resolve(e.Key, show))
		if !ok {
			d.fail(e.Key, show, "a key must be plain text, as in %s", fs.names())
			continue
		}
		if path == "" && key == "sweep" {
			continue // the sweep is read apart (sweep.go)
		}
		f, ok := fs.byName[key]
		if !ok {
			d.fail(e.Key, join(show, key), "unknown key %q%s; valid keys here: %s", key, wording.DidYouMean(key, fs.order), fs.names())
			for _, k := range wording.Closest(key, fs.order) {
				// "count is required" would only repeat the hint.
				d.bad[join(show, k)] = true
			}
			continue
		}
		if seen[key] {
			continue // explicit keys win over merged ones (YAML's <<)
		}
		seen[key] = true
		d.value(e.Value, v.FieldByIndex(f), join(path, key), join(show, key))
	}
}

// entries lists a mapping's entries, explicit ones first and then those
// merged in with "<<" (YAML's merge key), so that explicit keys win.
func (d *decoder) entries(n ast.Node, show string) ([]*ast.MappingValueNode, bool) {
	var own []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		own = m.Values
	case *ast.MappingValueNode:
		own = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	if d.merging[n] {
		d.fail(n, show, "<< merges the mapping it is in (an alias to an enclosing anchor)")
		return nil, true
	}
	if d.merging == nil {
		d.merging = map[ast.Node]bool{}
	}
	d.merging[n] = true
	defer delete(d.merging, n)
	var out, merged []*ast.MappingValueNode
	for _, e := range own {
		if e.Key == nil || !e.Key.IsMergeKey() {
			out = append(out, e)
			continue
		}
		src := d.resolve(e.Value, show)
		var srcs []ast.Node
		if s, ok := src.(*ast.SequenceNode); ok {
			srcs = s.Values
		} else if src != nil {
			srcs = []ast.Node{src}
		}
		for _, s := range srcs {
			if s = d.resolve(s, show); s == nil || !d.step(s, show) {
				continue
			}
			es, ok := d.entries(s, show)
			if !ok {
				d.fail(e.Value, show, "<< merges mappings only, not %s", describe(s))
				continue
			}
			merged = append(merged, es...)
		}
	}
	return append(out, merged...), true
}

// sequence decodes a YAML list into a slice.
func (d *decoder) sequence(n ast.Node, v reflect.Value, path, show string) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.fail(n, show, "%s is not valid here: want a list (items starting with \"- \")", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, item := range seq.Values {
		d.value(item, out.Index(i), index(path, i), index(show, i))
	}
	v.Set(out)
}

// scalarText is a scalar's text as written (quotes removed). Numbers keep
// their spelling, so "version: 2.10" stays "2.10".
func scalarText(n ast.Node) (string, bool) {
	switch m := n.(type) {
	case *ast.StringNode:
		return m.Value, true
	case *ast.LiteralNode:
		if m.Value == nil {
			return "", true
		}
		return m.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return m.GetToken().Value, true
	case *ast.NullNode:
		return "", true
	}
	return "", false
}

// plain reports whether a scalar is unquoted: a quoted "10" is text, not a
// number.
func plain(n ast.Node) bool {
	tk := n.GetToken()
	return tk != nil && tk.Type != token.DoubleQuoteType && tk.Type != token.SingleQuoteType
}

func intValue(n ast.Node) (int64, bool) {
	switch m := n.(type) {
	case *ast.IntegerNode:
		switch i := m.Value.(type) {
		case int64:
			return i, true
		case uint64:
			if i <= math.MaxInt64 {
				return int64(i), true
			}
		}
		return 0, false
	case *ast.FloatNode, *ast.StringNode:
		// 1e6 and 1000.0 are whole numbers too (goccy reads 1e6 as text).
		f, ok := floatValue(n)
		if ok && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), true
		}
	}
	return 0, false
}

func floatValue(n ast.Node) (float64, bool) {
	switch m := n.(type) {
	case *ast.IntegerNode:
		switch i := m.Value.(type) {
		case int64:
			return float64(i), true
		case uint64:
			return float64(i), true
		}
	case *ast.FloatNode:
		return m.Value, !math.IsInf(m.Value, 0) && !math.IsNaN(m.Value)
	case *ast.StringNode:
		if !plain(n) {
			return 0, false
		}
		f, err := strconv.ParseFloat(m.Value, 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// describe names what was written, for "X is not valid here".
func describe(n ast.Node) string {
	switch n.(type) {
	case nil:
		return "nothing"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "nothing"
	}
	if text, ok := scalarText(n); ok {
		if len(text) > 60 {
			text = text[:57] + "..."
		}
		return strconv.Quote(text)
	}
	return "this " + strings.ToLower(n.Type().String())
}

// want says what a type takes, for messages.
func want(t reflect.Type) string {
	switch t {
	case durationType:
		return "a duration such as 250ms, 5s or 1m30s"
	case distType:
		return "a distribution: " + distSyntax
	case policyType:
		return "a mailbox policy: " + policyNames
	case retryType:
		return "a retry hint: drain or spread"
	case edgeType:
		return "a time such as 45s, or the name of a timeline event"
	}
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	}
	return "a mapping"
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// textual reports whether t decodes from text (UnmarshalText).
func textual(t reflect.Type) bool { return reflect.PointerTo(t).Implements(textUnmarshaler) }

// structFields is a struct's yaml keys, in declaration order, with inline
// structs flattened.
type structFields struct {
	order  []string
	byName map[string][]int
}

func (fs *structFields) names() string { return strings.Join(fs.order, ", ") }

var fieldCache sync.Map // reflect.Type → *structFields

func fieldsOf(t reflect.Type) *structFields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*structFields)
	}
	fs := &structFields{byName: map[string][]int{}}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			idx := append(append([]int(nil), prefix...), i)
			switch {
			case opts == "inline" && f.Type.Kind() == reflect.Struct:
				walk(f.Type, idx)
			case name == "" || name == "-" || !f.IsExported():
			default:
				fs.order = append(fs.order, name)
				fs.byName[name] = idx
			}
		}
	}
	walk(t, nil)
	fieldCache.Store(t, fs)
	return fs
}
