package scenario

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// bounds checks every value of s against the bound of its key's row in
// the key table: a number or a duration against Range, a word against
// Enum, a text against MaxLen. It walks s by the rows' paths, as
// fillDefaults does, into every item of a list (each event, each group:
// a group's profile keys are the fleet.worker rows'), so that a row with a
// bound is checked wherever its key is written, and no line of validate
// names it. The keys of byRule are checked by validate, by hand.
//
// A value is checked when the file writes it or its key has a default
// (which a scaled leader can make out of range); a key left out that has
// none holds nothing to check, and a required one left out is validate's
// to report.
func (v *validator) bounds(s *Scenario) {
	root := reflect.ValueOf(s).Elem()
	for _, t := range keyTables {
		for i := range t.Keys {
			k := &t.Keys[i]
			if !k.bounded() || byRule[k.Path] {
				continue
			}
			v.boundsAt(root, k, "", strings.Split(k.Path, "."))
			if rest, ok := strings.CutPrefix(k.Path, "fleet.worker."); ok {
				v.boundsAt(root, k, "", strings.Split("fleet.groups[]."+rest, "."))
			}
		}
	}
}

// bounded reports whether the row gives a bound to check.
func (k *Key) bounded() bool {
	return k.Range.HasMin || k.Range.HasMax || k.Enum != nil || k.MaxLen > 0
}

// boundsAt walks x, the value at path, down the rest of k's path, and
// checks the values it comes to.
func (v *validator) boundsAt(x reflect.Value, k *Key, path string, rest []string) {
	if v.full() {
		return
	}
	name, list := strings.CutSuffix(rest[0], "[]")
	idx, ok := fieldsOf(x.Type()).byName[name]
	if !ok {
		panic("scenario: the key table's " + k.Path + " names no field of the spec")
	}
	f := x.FieldByIndex(idx)
	p := join(path, name)
	switch {
	case list:
		for i := range f.Len() {
			item, ip := f.Index(i), index(p, i)
			if ev, ok := item.Addr().Interface().(*Event); ok {
				ip = ev.path
			}
			v.boundsAt(item, k, ip, rest[1:])
		}
	case len(rest) == 1:
		v.bound(k, p, f)
	case f.Kind() == reflect.Pointer && f.IsNil():
	case f.Kind() == reflect.Pointer:
		v.boundsAt(f.Elem(), k, p, rest[1:])
	default:
		v.boundsAt(f, k, p, rest[1:])
	}
}

// bound checks x, the value of k at path, against k's bound.
func (v *validator) bound(k *Key, path string, x reflect.Value) {
	switch {
	case x.Kind() == reflect.Pointer && x.IsNil():
		return
	case x.Kind() == reflect.Pointer:
		x = x.Elem()
	case !v.src.has(path) && k.Default == nil:
		return
	}
	if k.Range.HasMin || k.Range.HasMax {
		if ok, num := k.Range.holdsValue(x); num && !ok {
			v.errorf(path, "%v %s", x.Interface(), k.refusal(x.Type() == durationType))
		}
	}
	if k.Enum != nil {
		if w := word(x); !slices.Contains(k.Enum, w) {
			v.errorf(path, "%q is not valid: want %s", w, orList(k.Enum))
		}
	}
	if k.MaxLen > 0 && x.Kind() == reflect.String {
		if t := x.String(); t == "" || utf8.RuneCountInString(t) > k.MaxLen || strings.ContainsFunc(t, unicode.IsSpace) {
			v.errorf(path, "%q is not valid: want 1 to %d characters, no spaces", t, k.MaxLen)
		}
	}
}

// holdsValue reports whether x, a number or a duration, is in the range;
// num is false for any other value. An integer is compared as one: a
// float64 cannot tell a year from a year and a nanosecond.
func (r Range) holdsValue(x reflect.Value) (ok, num bool) {
	switch {
	case x.CanInt():
		return r.holdsInt(x.Int()), true
	case x.CanUint() && x.Uint() <= math.MaxInt64:
		return r.holdsInt(int64(x.Uint())), true
	case x.CanUint():
		return r.holds(float64(x.Uint())), true
	case x.CanFloat():
		return r.holds(x.Float()), true
	}
	return false, false
}

// holdsInt is holds for an integer (the key table's integer bounds are
// whole numbers).
func (r Range) holdsInt(x int64) bool {
	ok := true
	if r.HasMin {
		lo := int64(r.Min)
		ok = x > lo || !r.Excl && x == lo
	}
	if r.HasMax {
		ok = ok && x <= int64(r.Max)
	}
	return ok
}

// word returns a word as the file spells it.
func word(x reflect.Value) string {
	if s, ok := x.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	return x.String()
}

// holds reports whether x is in the range (NaN is not).
func (r Range) holds(x float64) bool {
	ok := true
	if r.HasMin {
		ok = x > r.Min || !r.Excl && x == r.Min
	}
	if r.HasMax {
		ok = ok && x <= r.Max
	}
	return ok
}

// inRange reports whether x is in the range of the key at path, for the
// rules that must know (a group's size is known only when its count is
// valid).
func inRange(path string, x float64) bool { return mustKey(path).Range.holds(x) }

// refusal is what the message of a value outside k's range says after
// the value: "is out of range: want 1 to 256", "is too small: want at
// least 10ms". Key.Want, where the row has one, says what is valid.
func (k *Key) refusal(duration bool) string {
	r := k.Range
	n := func(x float64) string {
		switch {
		case x == 0:
			return "0"
		case duration:
			return Duration(x).String()
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	switch {
	case k.Want != "":
		return "is out of range: want " + k.Want
	case r.HasMin && r.HasMax && r.Excl:
		return "is out of range: want above " + n(r.Min) + " and at most " + n(r.Max)
	case r.HasMin && r.HasMax:
		return "is out of range: want " + n(r.Min) + " to " + n(r.Max)
	case r.HasMin && r.Excl:
		return "is out of range: want above " + n(r.Min)
	case r.HasMin:
		return "is too small: want at least " + n(r.Min)
	}
	return "is too large: want at most " + n(r.Max)
}
