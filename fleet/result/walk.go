package result

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
)

// This file is the one reading of the Result's Go types: which fields a
// name reaches (ExprName), every name of the type (Fields) and every
// number of a value (Walk). The registry (metrics.go), the report's
// baselines and the expectations all go through it, so that they agree
// on what a name is.

// ExprName is the name an expression reads field f by, as expr-lang
// sees it: its expr tag, or its Go name without one; ok is false for a
// field expressions cannot read (unexported, or tagged expr:"-").
func ExprName(f reflect.StructField) (name string, ok bool) {
	if !f.IsExported() {
		return "", false
	}
	switch tag := f.Tag.Get("expr"); tag {
	case "-":
		return "", false
	case "":
		return f.Name, true
	default:
		return tag, true
	}
}

// Leaf is one number of a Result, named as the expectations name it.
type Leaf struct {
	// Path is the expression path ("leader.mailbox.max_depth",
	// `workers.at_version["2.1.0"]`, "deploys[0].duration").
	Path string
	// Pattern is Path with every index or key as [*]
	// ("workers.at_version[*]"): the registry's name of the metric.
	Pattern string
	Value   float64
	// Timing is set for Seconds values.
	Timing bool
}

var secondsType = reflect.TypeFor[Seconds]()

// Walk calls fn for every number of res in field order (map keys
// sorted). Strings (a mailbox's policy) and bools (run.kept_up) are
// settings or conditions, not numbers, and are not visited.
func Walk(res *Result, fn func(Leaf)) {
	walkValue(reflect.ValueOf(res).Elem(), "", "", fn)
}

func walkValue(v reflect.Value, path, pattern string, fn func(Leaf)) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if name, ok := ExprName(t.Field(i)); ok {
				walkValue(v.Field(i), JoinPath(path, name), JoinPath(pattern, name), fn)
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
		for _, k := range keys {
			walkValue(v.MapIndex(k), path+"["+strconv.Quote(k.String())+"]", pattern+"[*]", fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkValue(v.Index(i), fmt.Sprintf("%s[%d]", path, i), pattern+"[*]", fn)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fn(Leaf{Path: path, Pattern: pattern, Value: float64(v.Int())})
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fn(Leaf{Path: path, Pattern: pattern, Value: float64(v.Uint())})
	case reflect.Float32, reflect.Float64:
		fn(Leaf{Path: path, Pattern: pattern, Value: v.Float(), Timing: v.Type() == secondsType})
	}
}

// Field is one name of the Result type.
type Field struct {
	// Pattern is the name with every item of a list or a map as [*]
	// ("leader.mailbox", "deploys[*].version", "windows[*].relay.delivered");
	// a map or a list is itself a name ("workers.at_version", "deploys").
	Pattern string
	// Parent is the pattern of the struct that holds the field ("" at
	// the top, "deploys[*]" for a deploy's fields); Name is the field's
	// own name there.
	Parent, Name string
	Type         reflect.Type
	// InMap is set under a map's items (events[*], windows[*]), whose
	// keys a run decides.
	InMap bool
}

// Fields lists every name of the Result type, depth first, a struct's
// name before its fields'. The items of a list or a map of structs are
// walked under the list's name and [*].
func Fields() []Field {
	var out []Field
	var walk func(t reflect.Type, prefix string, inMap bool)
	walk = func(t reflect.Type, prefix string, inMap bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := ExprName(f)
			if !ok {
				continue
			}
			p := JoinPath(prefix, name)
			out = append(out, Field{Pattern: p, Parent: prefix, Name: name, Type: f.Type, InMap: inMap})
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct:
				walk(ft, p, inMap)
			case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map) && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[*]", inMap || ft.Kind() == reflect.Map)
			}
		}
	}
	walk(reflect.TypeFor[Result](), "", false)
	return out
}

// Numeric reports whether values of t are numbers a baseline can keep:
// integers and floats (Seconds among them).
func Numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// JoinPath appends a name to a dotted path ("leader" + "mailbox").
func JoinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
