package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// SchemaID is the JSON Schema dialect of Schema: draft-07, the one editors'
// YAML language servers know best.
const SchemaID = "http://json-schema.org/draft-07/schema#"

// Schema returns the JSON Schema of a scenario file, for editors (the YAML
// language server completes keys and flags mistakes as one types) and
// other tools. It is built from what the loader decodes into — the keys
// are Scenario's yaml tags, each value typed as the decoder reads it, an
// event with exactly one action, a group with count or percent — and it
// carries each key's description, default, enum and range from the key
// table (keys.go).
//
// A file the loader accepts, the schema accepts. The schema refuses what
// it can express of the rest: unknown keys, wrong types, values outside
// an enum or a fixed range, missing required keys. What depends on other
// keys (a selector's group, a range up to fleet.count, an expectation's
// names) only the loader checks: `sim validate` is the last word.
func Schema() []byte {
	g := &schemaGen{}
	root := g.object(reflect.TypeFor[Scenario](), "")
	root["$schema"] = SchemaID
	root["title"] = "fleetsim scenario"
	root["description"] = "A fleetsim scenario: a fleet, a leader, a timeline of trouble and what must hold at the end. docs/SCENARIOS.md documents every key."
	root["properties"].(obj)["sweep"] = g.sweep()
	root["definitions"] = definitions()
	// compare: reads a sweep's variants (compileComparisons).
	root["dependencies"] = obj{"compare": []string{"sweep"}}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err) // maps of plain values always encode
	}
	return append(b, '\n')
}

type obj = map[string]any

type schemaGen struct{}

// doc returns the key of path, and whether it is the fleet's profile
// standing in for a group's key (a group inherits, so the fleet's default
// is not the group's).
func (g *schemaGen) doc(path string) (*Key, bool, bool) {
	if k, ok := keyAt(path); ok {
		return k, false, true
	}
	if rest, ok := strings.CutPrefix(path, "fleet.groups[]."); ok {
		k, ok := keyAt("fleet.worker." + rest)
		return k, true, ok
	}
	return &Key{}, false, false
}

// object is the schema of a struct: its yaml keys, no others.
func (g *schemaGen) object(t reflect.Type, path string) obj {
	fs := fieldsOf(t)
	props := obj{}
	var required []string
	for _, k := range fs.order {
		p := join(path, k)
		ft := t.FieldByIndex(fs.byName[k]).Type
		s, req := g.value(ft, p)
		props[k] = s
		if req {
			required = append(required, k)
		}
	}
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	switch t {
	case reflect.TypeFor[Event]():
		o["oneOf"] = oneOfRequired(actions)
	case reflect.TypeFor[Group]():
		o["oneOf"] = oneOfRequired([]string{"count", "percent"})
	}
	return o
}

// oneOfRequired says that exactly one of keys is written.
func oneOfRequired(keys []string) []obj {
	out := make([]obj, len(keys))
	for i, k := range keys {
		out[i] = obj{"required": []string{k}}
	}
	return out
}

// value is the schema of one key of type t at path, as the decoder reads
// it (decoder.value), and whether the key is required.
func (g *schemaGen) value(t reflect.Type, path string) (obj, bool) {
	pointer := t.Kind() == reflect.Pointer
	if pointer {
		t = t.Elem()
	}
	k, inherited, documented := g.doc(path)
	var s obj
	// What "key:" with no value means: the zero value for a plain field
	// and a mapping; an error for a pointer to a scalar (decoder.value).
	nullable := !pointer || (t.Kind() == reflect.Struct && !textual(t))
	switch {
	case t == selectorType:
		s, nullable = ref("selector"), true
	case t == expectType:
		s, nullable = ref("expectation"), false
	case t == durationType:
		s = ref("duration")
	case t == distType:
		s = ref("distribution")
	case t == edgeType:
		s = ref("edge")
	case t == policyType:
		s = obj{"type": "string", "enum": policyWords()}
	case t == retryType:
		s = obj{"type": "string", "enum": []string{mailbox.RetryDrain.String(), mailbox.RetrySpread.String()}}
	case t.Kind() == reflect.Struct:
		s = g.object(t, path)
		if _, hasRequired := s["required"]; hasRequired {
			nullable = false
		}
	case t.Kind() == reflect.Slice:
		items, _ := g.value(t.Elem(), path+"[]")
		s = obj{"type": "array", "items": items}
	case t.Kind() == reflect.String:
		s = obj{"type": []string{"string", "number", "boolean"}}
		if k.Type == "name" {
			s = obj{"type": "string", "pattern": nameRE.String(), "maxLength": maxNameLen}
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		s = obj{"type": "integer"}
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		s = obj{"type": "integer", "minimum": 0}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = obj{"type": "number"}
	case t.Kind() == reflect.Bool:
		s = obj{"type": "boolean"}
	}
	if documented {
		g.describe(s, k, inherited, t)
	}
	if _, ok := s["description"]; !ok && t.Kind() == reflect.Struct && !textual(t) {
		s["description"] = "A mapping of " + orList(fieldsOf(t).order) + "."
	}
	if documented && k.NotAllowed {
		return obj{"not": obj{}, "description": plainText(k.Doc)}, false
	}
	if nullable {
		s = withNull(s)
	}
	return s, documented && k.Required && !inherited
}

// describe adds what the key k says: the meaning, the default, an enum,
// a range.
func (g *schemaGen) describe(s obj, k *Key, inherited bool, t reflect.Type) {
	meaning, md := k.meaning(), k.meaning()
	valid, def := k.validText(), k.defaultText()
	switch {
	case k.Doc == "" && k.Type != "":
		// A row of an event's table: its type, default and range say it.
		meaning = strings.ToUpper(k.Type[:1]) + k.Type[1:]
		for _, c := range []string{def, valid} {
			if c != "" {
				meaning += ", " + c
			}
		}
		meaning += "."
		md = meaning
	case meaning != "":
		if valid != "" {
			md += "\n\nValid: " + valid + "."
		}
		if def != "" && !inherited {
			md += "\n\nDefault: " + def + "."
		}
	}
	if inherited {
		md += "\n\nLeft out, the group's workers take the fleet's (`fleet.worker`)."
	}
	if meaning != "" {
		s["description"] = plainText(meaning)
		s["markdownDescription"] = md
	}
	if k.Enum != nil && (t.Kind() == reflect.String || t == policyType || t == retryType) {
		s["type"], s["enum"] = "string", k.Enum
	}
	if k.Default != nil && !k.Derived && !inherited && t != edgeType {
		s["default"] = schemaValue(k.Default)
	}
	if textual(t) {
		return // a duration's bounds are text the loader reads
	}
	r := k.Range
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Float64, reflect.Float32:
		if r.HasMin {
			if r.Excl {
				s["exclusiveMinimum"] = r.Min
			} else {
				s["minimum"] = r.Min
			}
		}
		if r.HasMax {
			s["maximum"] = r.Max
		}
	case reflect.String:
		if k.MaxLen > 0 {
			s["type"] = "string"
			s["minLength"], s["maxLength"] = 1, k.MaxLen
			s["pattern"] = `^[^\s]*$`
		}
	}
}

// schemaValue is a default as JSON holds it: a number, a boolean, or the
// text a file spells it as.
func schemaValue(v any) any {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Bool:
		if _, text := v.(fmt.Stringer); !text {
			return v
		}
	}
	if text, ok := v.(string); ok {
		return text
	}
	return valueText(v)
}

func ref(name string) obj { return obj{"$ref": "#/definitions/" + name} }

// withNull lets a key be written with no value.
func withNull(s obj) obj {
	switch ty := s["type"].(type) {
	case string:
		s["type"] = []string{ty, "null"}
		return s
	case []string:
		s["type"] = append(ty, "null")
		return s
	}
	if r, ok := s["$ref"]; ok {
		// Keep the description beside the choice, where editors show it.
		out := obj{"anyOf": []obj{{"$ref": r}, {"type": "null"}}}
		for k, v := range s {
			if k != "$ref" {
				out[k] = v
			}
		}
		return out
	}
	return s
}

var mdLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)

// plainText is a table cell's Markdown as plain text: links become their text.
func plainText(md string) string {
	return strings.ReplaceAll(mdLink.ReplaceAllString(md, "$1"), "**", "")
}

// sweep is the schema of the sweep mapping: scenario paths (through
// mappings only: sweepTarget) to a list of values or a mapping of labels
// to values.
func (g *schemaGen) sweep() obj {
	var paths []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || textual(t) || t == selectorType || t == expectType {
			return
		}
		fs := fieldsOf(t)
		for _, k := range fs.order {
			p := join(prefix, k)
			paths = append(paths, p)
			walk(t.FieldByIndex(fs.byName[k]).Type, p)
		}
	}
	walk(reflect.TypeFor[Scenario](), "")
	label := obj{"type": "string", "pattern": nameRE.String()}
	return obj{
		"type":          []string{"object", "null"},
		"description":   "Runs the scenario once per combination of values: each key is a dotted path of YAML keys into the scenario, its value the list of values to try, or a mapping of labels to values. At most 1000 variants.",
		"propertyNames": obj{"enum": paths},
		"additionalProperties": obj{"anyOf": []obj{
			{"type": "array", "minItems": 1},
			{"type": "object", "minProperties": 1, "propertyNames": label},
		}},
	}
}

// Go duration text, never negative ("250ms", "1m30s", "0").
const durationPattern = `^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

func definitions() obj {
	duration := obj{
		"description": "A duration: a number with a unit (ns, us, ms, s, m, h), never negative: 250ms, 5s, 1m30s.",
		"anyOf":       []obj{{"type": "string", "pattern": durationPattern}, {"const": 0}},
	}
	return obj{
		"duration": duration,
		"distribution": obj{
			"description": "A distribution of durations: " + distSyntax + ".",
			"anyOf": []obj{
				{"$ref": "#/definitions/duration"},
				{"type": "string", "pattern": `^\s*(constant|uniform|exponential|lognormal)\s*\([^()]*\)\s*$`},
			},
		},
		"selector": obj{
			"description": "Which workers: " + SelectorSyntax + ".",
			"anyOf": []obj{
				{"type": "string", "pattern": `^\s*(all|([0-9]*\.)?[0-9]+\s*%|[0-9]{1,9}-[0-9]{1,9}|group:\s*\S.*)\s*$`},
				{"type": "array", "minItems": 1, "items": obj{"type": "string", "pattern": `^w-([0-9]{5}|[1-9][0-9]{5,})$`}},
			},
		},
		"expectation": obj{
			"description": "An expression over the run's results that must be true (lost == 0), or a mapping with its name and check.",
			"anyOf": []obj{
				{"type": "string", "pattern": `\S`},
				{"type": "object", "additionalProperties": false, "required": []string{"check"},
					"properties": obj{
						"name":  obj{"type": []string{"string", "number", "boolean", "null"}, "description": "Identifies the expectation in reports and baselines; names must be unique."},
						"check": obj{"type": "string", "pattern": `\S`, "description": "The expression."},
					}},
			},
		},
		"edge": obj{
			"description": "A time (45s) or the name of a timeline event (heal).",
			"anyOf": []obj{
				{"$ref": "#/definitions/duration"},
				{"type": "string", "pattern": `^[a-z]` + strings.TrimPrefix(nameRE.String(), "^")},
			},
		},
	}
}
