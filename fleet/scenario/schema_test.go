package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetsim/fleetsim/fleet/dist"
)

// compiledSchema compiles Schema with a JSON Schema validator, as an editor
// would (draft-07).
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("scenario.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

// schemaCheck validates a YAML file against the schema as the YAML
// language server does: the YAML read as JSON. A file YAML cannot read is
// refused (the editor shows the parser's error).
func schemaCheck(sch *jsonschema.Schema, data []byte) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("YAML: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// Every shipped scenario, and every good test file, is valid under the
// schema: an editor shows no error where the loader finds none.
func TestSchemaAcceptsShippedScenarios(t *testing.T) {
	sch := compiledSchema(t)
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	good, _ := filepath.Glob("testdata/good/*.yaml")
	files = append(files, good...)
	if len(files) < 8 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(f, data); err != nil {
			t.Fatalf("%s does not load: %v", f, err)
		}
		if err := schemaCheck(sch, data); err != nil {
			t.Errorf("%s loads, but the schema refuses it: %v", f, err)
		}
	}
}

// loaderOnly are the malformed files whose every problem a schema cannot
// express, each with the rule only the loader knows.
var loaderOnly = map[string]string{
	"compare.yaml":     "a comparison's variant labels and names are checked by compiling it",
	"scale-order.yaml": "scale.min and scale.max are checked against each other and fleet.count",
	"sweep-clash.yaml": "min, initial and max are checked against each other in each variant",
	"too-many.yaml":    "the groups' sizes are summed against fleet.count",
	"two-docs.yaml":    "one document per file: a schema describes one document",
}

// Every file of the malformed corpus is refused by the loader, and by the
// schema too unless it is listed in loaderOnly; a file listed there is one
// the schema accepts (else the list is stale).
func TestSchemaRefusesBadCorpus(t *testing.T) {
	sch := compiledSchema(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) < 20 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(f, data); err == nil {
			t.Fatalf("%s loads: it is not a malformed file", f)
		}
		serr := schemaCheck(sch, data)
		why, only := loaderOnly[filepath.Base(f)]
		switch {
		case serr == nil && !only:
			t.Errorf("%s: the loader refuses it, the schema accepts it", f)
		case serr != nil && only:
			t.Errorf("%s: listed as beyond a schema (%s), but the schema refuses it: %v", f, why, serr)
		}
	}
}

// probe is a value written at one key of an otherwise valid file, and
// whether it is valid there.
type probe struct {
	path  string // as the loader reports it
	value any    // nil: the key left out
	ok    bool
}

// TestSchemaAgreesWithLoader writes each key's bounds and enum values from
// the schema (just inside and just outside each bound, every listed value
// and one that is not, a name and a text of the wrong shape, a required
// key left out) into a valid file, and requires the loader to accept or
// refuse it at that key exactly as the schema does. The schema's ranges
// come from docs/SCENARIOS.md: this is what keeps the document, the
// schema and the loader saying the same.
func TestSchemaAgreesWithLoader(t *testing.T) {
	sch := compiledSchema(t)
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	var probes []probe
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p := join(path, k)
			ps := props[k].(map[string]any)
			probes = append(probes, probesOf(p, ps)...)
			if slices.Contains(anySlice(s["required"]), any(k)) {
				probes = append(probes, probe{path: p, value: nil})
			}
			if _, ok := ps["properties"]; ok {
				walk(ps, p)
			}
			if items, ok := ps["items"].(map[string]any); ok {
				walk(items, p+"[0]")
			}
		}
	}
	walk(root, "")
	if len(probes) < 100 {
		t.Fatalf("only %d probes: the walk is broken", len(probes))
	}
	tried := 0
	for _, pr := range probes {
		base, ok := baseFor(pr.path)
		if !ok {
			continue
		}
		tried++
		set(base, pr.path, pr.value)
		data, err := yaml.Marshal(base)
		if err != nil {
			t.Fatal(err)
		}
		serr := schemaCheck(sch, data)
		_, lerr := Parse("probe.yaml", data)
		loaderOK := !errorAt(lerr, pr.path)
		name := fmt.Sprintf("%s: %v", pr.path, pr.value)
		if pr.value == nil {
			name = pr.path + " left out"
		}
		switch {
		case (serr == nil) != pr.ok:
			t.Errorf("%s: the schema says valid=%v, the probe expects %v: %v\n%s", name, serr == nil, pr.ok, serr, data)
		case loaderOK != pr.ok:
			t.Errorf("%s: the schema says valid=%v, the loader says %v: %v\n%s", name, pr.ok, loaderOK, lerr, data)
		}
	}
	if tried < 100 {
		t.Errorf("only %d probes tried", tried)
	}
}

// probesOf are the probes the schema s of the key at path implies.
func probesOf(path string, s map[string]any) []probe {
	var out []probe
	if s["not"] != nil {
		return []probe{{path, "1s", false}}
	}
	types := anySlice(s["type"])
	if ty, ok := s["type"].(string); ok {
		types = []any{ty}
	}
	isInt := slices.Contains(types, any("integer"))
	if lo, ok := s["minimum"].(float64); ok {
		out = append(out, probe{path, num(lo, isInt), true}, probe{path, num(lo-1, isInt), false})
	}
	if lo, ok := s["exclusiveMinimum"].(float64); ok {
		out = append(out, probe{path, num(lo, isInt), false}, probe{path, num(lo+1, isInt), true})
	}
	if hi, ok := s["maximum"].(float64); ok {
		out = append(out, probe{path, num(hi, isInt), true}, probe{path, num(hi+1, isInt), false})
	}
	if e := anySlice(s["enum"]); e != nil {
		for _, v := range e {
			out = append(out, probe{path, v, true})
		}
		out = append(out, probe{path, "bogus", false})
		if strings.HasSuffix(path, "mailbox.policy") {
			for _, p := range policyWords() {
				if !slices.Contains(e, any(p)) {
					out = append(out, probe{path, p, false})
				}
			}
		}
	}
	if n, ok := s["maxLength"].(float64); ok {
		out = append(out, probe{path, strings.Repeat("v", int(n)), true}, probe{path, strings.Repeat("v", int(n)+1), false})
		if s["pattern"] != nil {
			out = append(out, probe{path, "two words", false})
		}
		if s["pattern"] == nameRE.String() {
			out = append(out, probe{path, "Not_A_Name", false}, probe{path, "a-name-2", true})
		}
	}
	return out
}

func num(f float64, isInt bool) any {
	if isInt {
		return int64(f)
	}
	return f
}

// baseFor returns a valid file with a place for path, or false when no
// template holds it.
func baseFor(path string) (map[string]any, bool) {
	base := map[string]any{"name": "probe", "duration": "10m", "fleet": map[string]any{"count": 10}}
	first, rest, _ := strings.Cut(path, ".")
	switch {
	case first == "fleet" && strings.HasPrefix(rest, "groups[0]"):
		g := map[string]any{"name": "g", "count": 1}
		if rest == "groups[0].percent" {
			g = map[string]any{"name": "g", "percent": 10}
		}
		base["fleet"].(map[string]any)["groups"] = []any{g}
	case first == "fleet" && strings.Contains(rest, "offline."):
		prefix, _, _ := strings.Cut(rest, "offline.")
		if prefix != "worker." {
			return nil, false
		}
		base["fleet"].(map[string]any)["worker"] = map[string]any{"offline": map[string]any{"every": "10m", "for": "1m"}}
	case first == "fleet" && strings.HasPrefix(rest, "gateway_downlink."):
		f := base["fleet"].(map[string]any)
		f["gateway_size"] = 5
		f["gateway_downlink"] = map[string]any{"capacity": 8, "airtime": "20ms"}
	case first == "timeline[0]":
		action, _, _ := strings.Cut(rest, ".")
		ev := map[string]any{"at": "1s"}
		switch action {
		case "deploy":
			ev[action] = map[string]any{"version": "2.0.0"}
		case "heartbeat_storm":
			ev[action] = map[string]any{"interval": "1s", "for": "1s"}
		case "set_capacity", "set_leader":
			ev[action] = map[string]any{"capacity": 1}
		case "speed":
			ev[action] = 1
		case "at", "name":
			ev["crash"] = nil
		default:
			ev[action] = map[string]any{}
		}
		base["timeline"] = []any{ev}
	case first == "windows[0]" || first == "expect[0]" || first == "compare[0]":
		return nil, false
	}
	return base, true
}

// set writes v at path in m (nil: deletes the key), making the mappings
// on the way.
func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		if name, ok := strings.CutSuffix(k, "[0]"); ok {
			m = m[name].([]any)[0].(map[string]any)
			continue
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := keys[len(keys)-1]
	if v == nil {
		delete(m, last)
		return
	}
	m[last] = v
}

// errorAt reports whether err has a problem at path or inside it.
func errorAt(err error, path string) bool {
	es, _ := err.(Errors)
	for _, e := range es {
		if e.Path == path || strings.HasPrefix(e.Path, path+".") || strings.HasPrefix(e.Path, path+"[") {
			return true
		}
	}
	return false
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestSchemaDefaultsAreTheLoaders reads each default the schema gives (from
// docs/SCENARIOS.md) and requires a file that leaves the key out to load
// with that value there.
func TestSchemaDefaultsAreTheLoaders(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p := join(path, k)
			ps := props[k].(map[string]any)
			if def, ok := ps["default"]; ok {
				checked++
				checkDefault(t, p, def)
			}
			if _, ok := ps["properties"]; ok {
				walk(ps, p)
			}
			if items, ok := ps["items"].(map[string]any); ok {
				walk(items, p+"[0]")
			}
		}
	}
	walk(root, "")
	if checked < 30 {
		t.Errorf("only %d defaults checked", checked)
	}
}

// runnerDefaults are the keys whose default the runner applies to a nil
// value, rather than the loader filling it in.
var runnerDefaults = map[string]string{
	"timeline[0].deploy.replace": "nil means true (Deploy.Replace)",
}

func checkDefault(t *testing.T, path string, def any) {
	t.Helper()
	base, ok := baseFor(path)
	if !ok {
		t.Errorf("%s: no file to check its default in", path)
		return
	}
	set(base, path, nil)
	data, _ := yaml.Marshal(base)
	s, err := Parse("default.yaml", data)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	v := reflect.ValueOf(s).Elem()
	for _, k := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				t.Errorf("%s: the schema says the default is %v, the loader leaves it unset", path, def)
				return
			}
			v = v.Elem()
		}
		if name, ok := strings.CutSuffix(k, "[0]"); ok {
			v = v.FieldByIndex(fieldsOf(v.Type()).byName[name]).Index(0)
			continue
		}
		v = v.FieldByIndex(fieldsOf(v.Type()).byName[k])
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		if why, ok := runnerDefaults[path]; ok {
			t.Logf("%s: left nil by the loader: %s", path, why)
			return
		}
		v = reflect.New(v.Type().Elem()) // nil is the zero value: heartbeat off, no rtt
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var same bool
	switch got := v.Interface().(type) {
	case Duration:
		var want Duration
		same = want.UnmarshalText([]byte(def.(string))) == nil && want == got
	case dist.Dist:
		want, err := dist.Parse(def.(string))
		same = err == nil && want == got
	case fmt.Stringer:
		same = got.String() == def
	default:
		switch v.Kind() {
		case reflect.Int, reflect.Int64, reflect.Uint64:
			f, _ := def.(float64)
			same = float64(v.Convert(reflect.TypeFor[int64]()).Int()) == f && f == math.Trunc(f)
		case reflect.Float64:
			same = v.Float() == def
		default:
			same = v.Interface() == def
		}
	}
	if !same {
		t.Errorf("%s: the schema (docs/SCENARIOS.md) says the default is %v, the loader fills in %v", path, def, v.Interface())
	}
}

// Every key of the schema says what it is for, from docs/SCENARIOS.md.
func TestSchemaDescribesEveryKey(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	var walk func(s map[string]any, path string)
	n := 0
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p := join(path, k)
			ps := props[k].(map[string]any)
			n++
			if d, _ := ps["description"].(string); d == "" {
				t.Errorf("%s has no description: give it a row (or a Meaning) in docs/SCENARIOS.md", p)
			}
			if _, ok := ps["properties"]; ok {
				walk(ps, p)
			}
			if items, ok := ps["items"].(map[string]any); ok {
				walk(items, p+"[]")
			}
		}
	}
	walk(root, "")
	if n < 100 {
		t.Errorf("only %d keys", n)
	}
}
