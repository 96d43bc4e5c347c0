package scenario

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Resolved writes s as it runs, as a scenario file: every default filled
// in (a group's profile is written whole, the fleet's merged under its
// own keys), each selector followed by a comment with the workers it
// selects at this fleet's size, the groups' sizes, and the sweep followed
// by the list of its variants. Apply the overrides (Scale,
// WithGatewaySize, speed, seed) first: the file records them. Loaded and
// resolved again, it gives the same text.
func Resolved(s *Scenario) ([]byte, error) {
	ws, err := s.Workers()
	if err != nil {
		return nil, err
	}
	r := &resolver{s: s, ws: ws, sizes: map[string]int{}}
	for _, w := range ws {
		if r.sizes[w.Group] == 0 {
			r.groups = append(r.groups, w.Group)
		}
		r.sizes[w.Group]++
	}
	root := r.mapping(reflect.ValueOf(s).Elem(), "")
	if c := r.groupsComment(); c != "" {
		fleet := root.get("fleet")
		fleet.get("count").comment = c
	}
	if len(s.Sweep) > 0 {
		sw, err := r.sweep()
		if err != nil {
			return nil, err
		}
		root.set("sweep", sw)
	}
	var b strings.Builder
	b.WriteString("# " + s.Name + " as it runs (sim validate --resolved): every default filled in.\n")
	root.emit(&b, 0)
	return []byte(b.String()), nil
}

type resolver struct {
	s  *Scenario
	ws []WorkerSpec
	// The groups in layout order and their sizes, counted once: a fleet
	// of a million workers may have thousands of groups and events.
	groups []string
	sizes  map[string]int
	ids    map[string]bool // the workers' ids, when a selector lists some
}

// ynode is a YAML value to write: a scalar, a mapping (keys in order) or a
// list, with a comment after it.
type ynode struct {
	scalar  string
	keys    []string
	vals    []*ynode
	items   []*ynode
	list    bool
	comment string
}

func (n *ynode) isScalar() bool { return n.keys == nil && !n.list }

func (n *ynode) get(k string) *ynode {
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return &ynode{}
}

func (n *ynode) set(k string, v *ynode) {
	n.keys, n.vals = append(n.keys, k), append(n.vals, v)
}

func (n *ynode) emit(b *strings.Builder, indent int) {
	pad := strings.Repeat(" ", indent)
	if n.list {
		for _, it := range n.items {
			if it.isScalar() {
				fmt.Fprintf(b, "%s- %s%s\n", pad, it.scalar, comment(it.comment))
				continue
			}
			var sub strings.Builder
			it.emit(&sub, indent+2)
			b.WriteString(pad + "- " + strings.TrimPrefix(sub.String(), pad+"  "))
		}
		return
	}
	for i, k := range n.keys {
		v := n.vals[i]
		switch {
		case v.isScalar():
			fmt.Fprintf(b, "%s%s: %s%s\n", pad, k, v.scalar, comment(v.comment))
		case v.list && len(v.items) == 0:
			fmt.Fprintf(b, "%s%s: []\n", pad, k)
		case !v.list && len(v.keys) == 0:
			fmt.Fprintf(b, "%s%s: {}\n", pad, k)
		default:
			fmt.Fprintf(b, "%s%s:%s\n", pad, k, comment(v.comment))
			v.emit(b, indent+2)
		}
	}
}

func comment(c string) string {
	if c == "" {
		return ""
	}
	return "  # " + c
}

// mapping writes a struct by its yaml keys. A nil pointer is written as
// its key's default, or left out when it has none (an optional
// mapping, a gateway size); a worker's mailbox has no block_timeout or
// retry_after.
func (r *resolver) mapping(v reflect.Value, path string) *ynode {
	n := &ynode{keys: []string{}}
	fs := fieldsOf(v.Type())
	for _, k := range fs.order {
		p := join(path, k)
		doc, _ := keyAt(strings.ReplaceAll(p, "fleet.groups[].", "fleet.worker."))
		if doc != nil && doc.NotAllowed {
			continue
		}
		f := v.FieldByIndex(fs.byName[k])
		if v.Type() == reflect.TypeFor[Group]() && fieldsOf(reflect.TypeFor[WorkerProfile]()).byName[k] != nil {
			continue // written whole below
		}
		if node := r.value(f, p, doc); node != nil {
			n.set(k, node)
		}
	}
	if v.Type() == reflect.TypeFor[Group]() {
		g := v.Addr().Interface().(*Group)
		// Its size at this fleet's, whether the file gave a count or a
		// percent: a group has exactly one.
		size := &ynode{scalar: strconv.Itoa(r.groupSize(g.Name))}
		for i, k := range n.keys {
			if k == "count" {
				n.vals[i] = size
			}
			if k == "percent" {
				n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
				n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
				break
			}
		}
		prof := r.mapping(reflect.ValueOf(r.s.Fleet.Worker.merge(g.WorkerProfile)), "fleet.groups[]")
		for i, k := range prof.keys {
			n.set(k, prof.vals[i])
		}
	}
	return n
}

func (r *resolver) value(v reflect.Value, path string, doc *Key) *ynode {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			if doc == nil || doc.Default == nil {
				return nil
			}
			def := valueText(doc.Default)
			if k := v.Type().Elem().Kind(); k == reflect.Bool || k == reflect.Int || k == reflect.Float64 {
				return &ynode{scalar: def}
			}
			return &ynode{scalar: quote(def)}
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == selectorType:
		sel := v.Interface().(Selector)
		n := &ynode{scalar: quote(sel.String())}
		if len(sel.IDs) > 0 {
			n.scalar = "[" + strings.Join(sel.IDs, ", ") + "]"
		}
		if count, ok := r.selected(sel); ok {
			n.comment = plural(count, "worker")
		}
		return n
	case v.Type() == expectType:
		e := v.Interface().(Expect)
		if e.Name == "" || e.Name == e.Check {
			return &ynode{scalar: quote(e.Check)}
		}
		return &ynode{keys: []string{"name", "check"}, vals: []*ynode{{scalar: quote(e.Name)}, {scalar: quote(e.Check)}}}
	case v.Type() == edgeType:
		e := v.Interface().(Edge)
		if e.Text == "" {
			e.At = r.s.Duration // the end of the timeline
		}
		t, _ := e.MarshalText()
		return &ynode{scalar: quote(string(t))}
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		t, err := m.MarshalText()
		if err != nil {
			return nil
		}
		return &ynode{scalar: quote(string(t))}
	}
	switch v.Kind() {
	case reflect.Struct:
		n := r.mapping(v, path)
		if v.Type() == reflect.TypeFor[Event]() {
			return r.event(n, v.Addr().Interface().(*Event))
		}
		return n
	case reflect.Slice:
		n := &ynode{list: true}
		for i := range v.Len() {
			item, _ := keyAt(path + "[]")
			n.items = append(n.items, r.value(v.Index(i), path+"[]", item))
		}
		if len(n.items) == 0 {
			return nil
		}
		return n
	case reflect.String:
		return &ynode{scalar: quote(v.String())}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return &ynode{scalar: strconv.FormatInt(v.Int(), 10)}
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return &ynode{scalar: strconv.FormatUint(v.Uint(), 10)}
	case reflect.Float64, reflect.Float32:
		return &ynode{scalar: strconv.FormatFloat(v.Float(), 'g', -1, 64)}
	case reflect.Bool:
		return &ynode{scalar: strconv.FormatBool(v.Bool())}
	}
	return nil
}

// event drops the name an event does not have.
func (r *resolver) event(n *ynode, ev *Event) *ynode {
	if ev.Name != "" {
		return n
	}
	for i, k := range n.keys {
		if k == "name" {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			break
		}
	}
	return n
}

func (r *resolver) groupSize(name string) int { return r.sizes[name] }

// selected counts the workers sel selects, as Select would list them, and
// reports whether it selects any without error.
func (r *resolver) selected(sel Selector) (int, bool) {
	n := len(r.ws)
	switch {
	case sel.All:
		return n, n > 0
	case sel.Percent > 0:
		return percentOf(n, sel.Percent), n > 0
	case sel.Range:
		return sel.To - sel.From + 1, sel.From >= 0 && sel.From <= sel.To && sel.To < n
	case sel.Group != "":
		return r.sizes[sel.Group], r.sizes[sel.Group] > 0
	case len(sel.IDs) > 0:
		if r.ids == nil {
			r.ids = make(map[string]bool, n)
			for _, w := range r.ws {
				r.ids[w.ID] = true
			}
		}
		for _, id := range sel.IDs {
			if !r.ids[id] {
				return 0, false
			}
		}
		return len(sel.IDs), true
	}
	return n, n > 0 // an unset selector means every worker
}

// groupsComment says how many workers each group has, the default group
// included.
func (r *resolver) groupsComment() string {
	if len(r.s.Fleet.Groups) == 0 {
		return ""
	}
	parts := make([]string, len(r.groups))
	for i, g := range r.groups {
		parts[i] = fmt.Sprintf("%s %d", g, r.sizes[g])
	}
	return "groups: " + strings.Join(parts, ", ")
}

// sweep writes the sweep as the file gave it (a list, or labels to
// values), followed by the variants it makes.
func (r *resolver) sweep() (*ynode, error) {
	vs, err := r.s.Variants()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	n := &ynode{keys: []string{}, comment: plural(len(vs), "variant") + ": " + strings.Join(names, "; ")}
	for _, p := range r.s.Sweep {
		var vals []*ynode
		for i := range p.Values {
			s, err := sweptValue(p, i)
			if err != nil {
				return nil, err
			}
			vals = append(vals, &ynode{scalar: s})
		}
		if p.Labels == nil {
			n.set(p.Path, &ynode{list: true, items: vals})
			continue
		}
		m := &ynode{keys: []string{}}
		for i, l := range p.Labels {
			m.set(l, vals[i])
		}
		n.set(p.Path, m)
	}
	return n, nil
}

// sweptValue writes swept value i on one line: a scalar as written, a mapping
// or a list in JSON, which YAML reads as a flow collection.
func sweptValue(p SweepParam, i int) (string, error) {
	n, err := p.node(i)
	if err != nil {
		return "", err
	}
	if text, ok := scalarText(n); ok {
		if _, isText := n.(*ast.StringNode); isText {
			return quote(text), nil
		}
		return text, nil // a number or a boolean, as written
	}
	var x any
	if err := yaml.Unmarshal([]byte(p.text(i)), &x); err != nil {
		return "", fmt.Errorf("sweep %s value %d: %w", p.Path, i+1, err)
	}
	b, err := json.Marshal(x)
	return string(b), err
}

// quote writes text as a plain YAML scalar when YAML reads it back as the
// same text, else double-quoted.
func quote(s string) string {
	var m map[string]any
	if s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, "\n#") &&
		yaml.Unmarshal([]byte("k: "+s), &m) == nil {
		if got, ok := m["k"].(string); ok && got == s {
			return s
		}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
