package wire

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// UnmarshalStrict decodes the one JSON value in data into v (a pointer),
// as encoding/json does with unknown fields disallowed, and refuses what
// encoding/json would let through silently, so that what the receiver
// reads is what the sender meant:
//
//   - trailing data after the value;
//   - a name twice in one object, where encoding/json keeps the last
//     value: in an object decoded into a struct, two names that
//     encoding/json matches to the same field (it ignores case, so "id"
//     and "ID" are one field); in any other object (a map, a value kept
//     as any), the same name exactly;
//   - a string that is not valid UTF-8, or that holds an escaped lone
//     surrogate (\ud800): encoding/json reads either as U+FFFD, so an id
//     would be answered under another id than the one sent.
//
// Values kept raw (json.RawMessage) are not looked into: whoever decodes
// them later checks them. Errors read as encoding/json's, without its
// "json: " prefix, and name the field.
func UnmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cleanJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	// encoding/json has accepted data: it is one valid JSON value nested
	// at most 10,000 deep, which bounds the walk below.
	s := strictScan{b: data}
	s.path = s.buf[:0]
	return s.value(reflect.TypeOf(v))
}

// strictUnmarshal is the package's name for UnmarshalStrict.
func strictUnmarshal(data []byte, v any) error { return UnmarshalStrict(data, v) }

func cleanJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q: got JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(msg)
}

// strictScan walks JSON that encoding/json has already accepted, beside
// the Go type it was decoded into.
type strictScan struct {
	b    []byte
	i    int
	path []where // from the top to the value being checked, for errors
	buf  [8]where
	// keys, when not nil, collects the outermost object's names, decoded,
	// in order (CheckStrict's answer).
	keys *[]string
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (s *strictScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// where is one step of the path to a value: a field's name (raw, as in
// the payload), or an array element's index when name is nil. The path is
// made into text only for an error, so that a walk allocates little.
type where struct {
	name  []byte
	index int
}

// at returns the path as text: `field "body": field "metrics"`, `field
// "a"[0]`, "value[2]" (an array at the top), or "" at the top.
func (s *strictScan) at() string {
	var b strings.Builder
	for i, w := range s.path {
		if w.name == nil {
			if i == 0 {
				b.WriteString("value")
			}
			fmt.Fprintf(&b, "[%d]", w.index)
			continue
		}
		if i > 0 {
			b.WriteString(": ")
		}
		name, _ := decodeJSONString(w.name)
		fmt.Fprintf(&b, "field %q", name)
	}
	return b.String()
}

// fail is a *StrictError at byte at, in the value at the current path.
func (s *strictScan) fail(at int, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if p := s.at(); p != "" {
		msg = p + ": " + msg
	}
	return &StrictError{Offset: at, Reason: msg}
}

// twice is a *StrictError for the name at byte at, the second time the
// current object gives it.
func (s *strictScan) twice(at int, name, why string) error {
	return &StrictError{Offset: at, Key: name, Reason: fmt.Sprintf("%s given twice %s (at byte %d): %s", s.at(), why, at, "say each name once")}
}

// value checks the value at s.i, decoded into t (nil: no type known, as
// for an any).
func (s *strictScan) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		s.skip()
		return nil
	}
	if t != nil && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		t = nil // decodes itself: check it as a value of no known type
	}
	s.space()
	switch s.b[s.i] {
	case '{':
		return s.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		s.i++
		for n := 0; ; n++ {
			s.space()
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if s.b[s.i] == ',' {
				s.i++
			}
			s.path = append(s.path, where{index: n})
			if err := s.value(elem); err != nil {
				return err
			}
			s.path = s.path[:len(s.path)-1]
		}
	case '"':
		_, _, err := s.str()
		return err
	default: // a number, true, false or null
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[s.i])) {
			s.i++
		}
		return nil
	}
}

// object checks an object decoded into t (a struct, a map or nothing
// known).
func (s *strictScan) object(t reflect.Type) error {
	var fields []strictField
	var elem reflect.Type
	isStruct := t != nil && t.Kind() == reflect.Struct
	switch {
	case isStruct:
		fields = structFields(t)
	case t != nil && t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	var seenField []bool
	var seenName map[string]struct{}
	var seenSmall uint64 // seenField for a struct of at most 64 fields
	if isStruct && len(fields) > 64 {
		seenField = make([]bool, len(fields))
	}
	s.i++ // {
	for {
		s.space()
		switch s.b[s.i] {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			s.space()
		}
		at := s.i
		raw, escaped, err := s.str()
		if err != nil {
			return err
		}
		s.space()
		s.i++ // :
		top := len(s.path) == 0
		s.path = append(s.path, where{name: raw})
		var name string // decoded, only when it must be
		if escaped {
			name, _ = decodeJSONString(raw)
		}
		content := raw[1 : len(raw)-1]
		if top && s.keys != nil {
			if !escaped {
				name = string(content)
			}
			*s.keys = append(*s.keys, name)
		}
		var vt reflect.Type
		if isStruct {
			var f int
			if escaped {
				f = matchField(fields, name)
			} else {
				f = matchFieldBytes(fields, content)
			}
			if f >= 0 {
				var dup bool
				if seenField != nil {
					dup, seenField[f] = seenField[f], true
				} else {
					dup = seenSmall&(1<<f) != 0
					seenSmall |= 1 << f
				}
				if dup {
					if !escaped {
						name = string(content)
					}
					return s.twice(at, name, "(field names match ignoring case)")
				}
				vt = fields[f].typ
			}
		} else {
			if !escaped {
				name = string(content)
			}
			if seenName == nil {
				seenName = make(map[string]struct{})
			}
			if _, dup := seenName[name]; dup {
				return s.twice(at, name, "in one object")
			}
			seenName[name] = struct{}{}
			vt = elem
		}
		if err := s.value(vt); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
	}
}

// str reads a string token at s.i and returns it, quotes included, and
// whether it has an escape; an error if it would not read back as sent.
func (s *strictScan) str() (raw []byte, escaped bool, err error) {
	start := s.i
	s.i++ // "
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			escaped = true
			s.i++
		}
		s.i++
	}
	s.i++
	raw = s.b[start:s.i]
	off, bad := checkJSONString(raw)
	at := start + off
	switch bad {
	case badUTF8:
		return nil, false, s.fail(at, "string %s is not valid UTF-8: byte %d (0x%02x) is not UTF-8, and JSON text must be", clipQuote(string(raw)), at, s.b[at])
	case loneSurrogate:
		return nil, false, s.fail(at, "string %s holds a lone surrogate escape: escape %s at byte %d is half a UTF-16 surrogate pair (\\ud800 to \\udbff must be followed by \\udc00 to \\udfff)", clipQuote(string(raw)), s.b[at:at+6], at)
	}
	return raw, escaped, nil
}

// checkJSONString checks a JSON string token (quotes included) that
// encoding/json accepts: valid UTF-8, and no escaped surrogate that is
// not half of a pair. It returns "" or what is wrong (badUTF8,
// loneSurrogate), and the byte in raw where it is.
func checkJSONString(raw []byte) (at int, bad string) {
	if !utf8.Valid(raw) {
		return invalidUTF8At(raw), badUTF8
	}
	high := -1 // where a high surrogate waits for its low half
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || raw[i+1] != 'u' {
			if high >= 0 {
				return high, loneSurrogate
			}
			if raw[i] == '\\' {
				i++
			}
			continue
		}
		r := hex4(raw[i+2 : i+6])
		switch {
		case r >= 0xd800 && r <= 0xdbff:
			if high >= 0 {
				return high, loneSurrogate
			}
			high = i
		case r >= 0xdc00 && r <= 0xdfff:
			if high < 0 {
				return i, loneSurrogate
			}
			high = -1
		default:
			if high >= 0 {
				return high, loneSurrogate
			}
		}
		i += 5
	}
	return 0, "" // a high surrogate left pending met the closing quote above
}

const (
	badUTF8       = "not UTF-8"
	loneSurrogate = "lone surrogate"
)

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// invalidUTF8At returns the offset of the first byte that is not part of
// a valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// skip steps over one valid JSON value without looking into it.
func (s *strictScan) skip() {
	s.space()
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		default:
			if depth == 0 {
				for s.i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[s.i])) {
					s.i++
				}
				return
			}
		}
		s.i++
		if depth == 0 {
			return
		}
	}
}

// strictField is a field encoding/json decodes into.
type strictField struct {
	name string
	typ  reflect.Type
}

var fieldCache sync.Map // reflect.Type -> []strictField

// structFields lists the fields of struct type t by their JSON names, as
// encoding/json sees them (exported, not tagged "-", embedded structs
// without a name of their own flattened).
func structFields(t reflect.Type) []strictField {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]strictField)
	}
	var out []strictField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, structFields(et)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, strictField{name: name, typ: ft})
	}
	fieldCache.Store(t, out)
	return out
}

// matchField returns the index of the field name goes into, as
// encoding/json matches it (an exact name first, then one that differs in
// case), or -1.
func matchField(fields []strictField, name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	for i, f := range fields {
		if strings.EqualFold(f.name, name) {
			return i
		}
	}
	return -1
}

// matchFieldBytes is matchField for a name without escapes, as it is in
// the payload: no copy for an exact match, the usual case.
func matchFieldBytes(fields []strictField, name []byte) int {
	for i, f := range fields {
		if f.name == string(name) {
			return i
		}
	}
	return matchField(fields, string(name))
}

// PeekID returns the "id" of a payload Decode refused, so that the leader
// (or a worker) can answer it with a reject instead of leaving its sender
// to time out. It takes an id only from a JSON object whose top level is
// well formed (its values need not be: a body nested past any decoder's
// limit still gets its reject), where "id" (matched ignoring case, as
// Decode matches it) is given once, as a string of 1 to 2×MaxIDLen bytes
// that would read back as sent (see UnmarshalStrict). Otherwise, an id
// given twice or one that a reply could not carry back unchanged
// included, it returns "": there is no one to answer.
func PeekID(payload []byte, max int) string {
	if max <= 0 {
		max = DefaultMaxSize
	}
	if len(payload) > max {
		return ""
	}
	p := peek{b: payload}
	if !p.is('{') {
		return ""
	}
	var id string
	seen := false
	if !p.is('}') {
		for {
			key, ok := p.str()
			if !ok || !p.is(':') {
				return ""
			}
			isID := false
			if k, ok := decodeJSONString(key); ok && strings.EqualFold(k, "id") {
				if seen {
					return "" // two ids: which would the answer be for?
				}
				seen, isID = true, true
			}
			if isID {
				v, ok := p.str()
				if !ok {
					return ""
				}
				// Decoded first: that checks the token, escapes included.
				var dec string
				if json.Unmarshal(v, &dec) == nil {
					if _, bad := checkJSONString(v); bad == "" {
						id = dec
					}
				}
			} else if !p.skip() {
				return ""
			}
			if p.is(',') {
				continue
			}
			if !p.is('}') {
				return ""
			}
			break
		}
	}
	p.space()
	if p.i != len(p.b) || len(id) > 2*MaxIDLen {
		return ""
	}
	return id
}

// peek scans the top level of an object that may be malformed anywhere;
// every step reports false rather than reading past the end.
type peek struct {
	b []byte
	i int
}

func (p *peek) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *peek) is(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string token, quotes included, without judging it.
func (p *peek) str() ([]byte, bool) {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return p.b[start:p.i], true
		}
	}
	return nil, false
}

// skip steps over one value: everything up to the next comma or closing
// bracket of the object's own level, strings and brackets nested at any
// depth stepped over without judging what is inside.
func (p *peek) skip() bool {
	p.space()
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			if _, ok := p.str(); !ok {
				return false
			}
		case c == '{' || c == '[':
			depth++
			p.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return true // the object's own closing brace
			}
			depth--
			p.i++
		case c == ',' && depth == 0:
			return true
		default:
			p.i++
		}
	}
	return false
}

// decodeJSONString decodes a string token; false if it is not one.
func decodeJSONString(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}
