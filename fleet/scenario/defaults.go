package scenario

import (
	"reflect"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// fillDefaults writes the defaults of the key table into every setting
// the file left out, so that a loaded Scenario says what will run (and
// the report shows it). Presence, not zero, decides: an explicit
// "capacity: 0" stays 0 for validate to refuse.
//
// A group inherits the fleet's worker profile: a field it sets replaces the
// fleet's, and inside a mailbox, reconnect or offline mapping each key it
// leaves out is the fleet's.
func fillDefaults(s *Scenario, src *source) {
	root := reflect.ValueOf(s).Elem()
	for _, t := range keyTables {
		for i := range t.Keys {
			k := &t.Keys[i]
			if k.Default != nil && !strings.HasPrefix(k.Path, "fleet.groups[]") {
				fillKey(root, k, "", strings.Split(k.Path, "."), src.has)
			}
		}
	}
	// As the relay does: a max left out rises to an initial above it.
	if r := &s.Leader.Relay; !src.has("leader.relay.limit.max") {
		r.Limit.Max = outbox.LimiterDefaults(flow.LimiterOptions{Initial: r.Limit.Initial}).Max
	}
	w := &s.Fleet.Worker
	for i := range s.Fleet.Groups {
		inherit(&s.Fleet.Groups[i].WorkerProfile, w, index("fleet.groups", i), src.has)
	}
}

// fillKey walks v, the value at path, down the rest of k's path and
// writes k's default where the file left the key out. A mapping on the
// way is made when it is not written, unless it is optional (a row of its
// own: fleet.worker.offline, an event's action), whose keys take defaults
// only when it is written. A list is walked item by item (an event by its
// place in the file). A default that is the zero value leaves a nil
// pointer nil: nil means it.
func fillKey(v reflect.Value, k *Key, path string, rest []string, has func(string) bool) {
	name, list := strings.CutSuffix(rest[0], "[]")
	f := v.FieldByIndex(fieldsOf(v.Type()).byName[name])
	p := join(path, name)
	if list {
		for i := range f.Len() {
			item, ip := f.Index(i), index(p, i)
			if ev, ok := item.Addr().Interface().(*Event); ok {
				ip = ev.path
			}
			fillKey(item, k, ip, rest[1:], has)
		}
		return
	}
	if len(rest) == 1 {
		if has(p) {
			return
		}
		def := reflect.ValueOf(k.Default)
		if f.Kind() != reflect.Pointer {
			f.Set(def.Convert(f.Type()))
		} else if !def.IsZero() {
			f.Set(reflect.New(f.Type().Elem()))
			f.Elem().Set(def.Convert(f.Type().Elem()))
		}
		return
	}
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			if _, optional := keyAt(generic(p)); optional || isZeroDefault(k) {
				return
			}
			f.Set(reflect.New(f.Type().Elem()))
		}
		f = f.Elem()
	}
	fillKey(f, k, p, rest[1:], has)
}

// isZeroDefault reports whether k's default is its type's zero value.
func isZeroDefault(k *Key) bool { return reflect.ValueOf(k.Default).IsZero() }

// inherit gives each mapping a group writes (mailbox, reconnect, poll,
// offline: a struct of this package behind a pointer in WorkerProfile)
// the fleet's value of every key the group leaves out; where the fleet
// has no such mapping (offline is optional), the key table's default, if
// the key has one.
func inherit(g, f *WorkerProfile, path string, has func(string) bool) {
	gv, fv := reflect.ValueOf(g).Elem(), reflect.ValueOf(f).Elem()
	fs := fieldsOf(gv.Type())
	for _, name := range fs.order {
		gm := gv.FieldByIndex(fs.byName[name])
		if gm.Kind() != reflect.Pointer || gm.IsNil() || gm.Type().Elem().Kind() != reflect.Struct || gm.Type().Elem().PkgPath() != gv.Type().PkgPath() {
			continue // not a mapping, or one the group does not write
		}
		from := fv.FieldByIndex(fs.byName[name])
		if from.IsNil() {
			from = tableDefaults(gm.Type().Elem(), "fleet.worker."+name)
		}
		mfs := fieldsOf(gm.Type().Elem())
		for _, k := range mfs.order {
			if !has(path + "." + name + "." + k) {
				gm.Elem().FieldByIndex(mfs.byName[k]).Set(from.Elem().FieldByIndex(mfs.byName[k]))
			}
		}
	}
}

// tableDefaults is a new struct of type t whose fields hold the key
// table's defaults for the keys under path (zero where a key has none).
func tableDefaults(t reflect.Type, path string) reflect.Value {
	v := reflect.New(t)
	fs := fieldsOf(t)
	for _, k := range fs.order {
		if key, ok := keyAt(path + "." + k); ok && key.Default != nil {
			f := v.Elem().FieldByIndex(fs.byName[k])
			f.Set(reflect.ValueOf(key.Default).Convert(f.Type()))
		}
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// sourceOf makes a source for a Scenario built in code: a value counts as
// written when it is not zero.
func sourceOf(s *Scenario) *source {
	src := &source{file: s.File, pos: map[string]position{}, anchors: nil}
	var walk func(v reflect.Value, path string) bool
	walk = func(v reflect.Value, path string) bool {
		set := false
		switch {
		case v.Type() == selectorType || v.Type() == expectType || textual(v.Type()):
			set = !v.IsZero()
		case v.Kind() == reflect.Pointer:
			if set = !v.IsNil(); set {
				walk(v.Elem(), path)
			}
		case v.Kind() == reflect.Struct:
			fs := fieldsOf(v.Type())
			for _, k := range fs.order {
				set = walk(v.FieldByIndex(fs.byName[k]), join(path, k)) || set
			}
		case v.Kind() == reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), index(path, i))
			}
			set = v.Len() > 0
		default:
			set = !v.IsZero()
		}
		if set {
			src.pos[path] = position{}
		}
		return set
	}
	walk(reflect.ValueOf(s).Elem(), "")
	for i := range s.Timeline {
		src.pos[index("timeline", i)+".at"] = position{} // at 0s is a time like any other
	}
	return src
}
