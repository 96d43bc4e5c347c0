package result

import (
	"reflect"
	"strings"
	"testing"
)

// registryName is the registry's name of a Result field: a map or list
// of numbers is named by its items ("workers.at_version[*]"); a struct
// is not a metric but holds them ("" and false).
func registryName(f Field) (string, bool) {
	t := f.Type
	switch {
	case t.Kind() == reflect.Struct:
		return "", false
	case (t.Kind() == reflect.Map || t.Kind() == reflect.Slice) && Numeric(t.Elem()):
		return f.Pattern + "[*]", true
	}
	return f.Pattern, true
}

// kindOf is the Kind a field's Go type allows, or "" for any numeric kind.
func kindOf(t reflect.Type) Kind {
	switch {
	case t == secondsType:
		return Timing
	case t.Kind() == reflect.String:
		return Text
	case t.Kind() == reflect.Bool:
		return Flag
	case (t.Kind() == reflect.Map || t.Kind() == reflect.Slice) && t.Elem().Kind() == reflect.Struct:
		return Collection
	case t.Kind() == reflect.Slice && !Numeric(t.Elem()):
		return List
	}
	return ""
}

// TestRegistryCoversResult keeps the registry and the Result type in
// step: every field a check can read has exactly one entry, of a kind its
// Go type allows (a Seconds value is a timing, and only it), and every
// entry names a field.
func TestRegistryCoversResult(t *testing.T) {
	fields := map[string]Field{}
	for _, f := range Fields() {
		if name, ok := registryName(f); ok {
			fields[name] = f
			if _, ok := Lookup(name); !ok {
				t.Errorf("%s: a Result field with no entry in the registry (add it to fleet/result/registry.go)", name)
			}
		}
	}
	if len(fields) < 150 {
		t.Fatalf("only %d fields found: the walk is broken", len(fields))
	}
	seen := map[string]bool{}
	for _, m := range registry {
		if seen[m.Name] {
			t.Errorf("%s: registered twice", m.Name)
		}
		seen[m.Name] = true
		f, ok := fields[m.Name]
		if !ok {
			t.Errorf("%s: a registry entry that names no Result field", m.Name)
			continue
		}
		vt := f.Type
		if strings.HasSuffix(m.Name, "[*]") {
			vt = vt.Elem()
		}
		if want := kindOf(vt); want != m.Kind && (want != "" || !m.Kind.Numeric() || m.Kind == Timing) {
			t.Errorf("%s: kind %q, its Go type %v wants %q", m.Name, m.Kind, vt, want)
		}
	}
}

// TestRegistryRules: each entry's baseline rule fits its kind.
func TestRegistryRules(t *testing.T) {
	for _, m := range registry {
		if m.Meaning == "" || !strings.HasSuffix(m.Meaning, ".") {
			t.Errorf("%s: meaning %q, want a sentence", m.Name, m.Meaning)
		}
		if (m.Kind == Collection) != (m.Item != "") {
			t.Errorf("%s: kind %s with item %q", m.Name, m.Kind, m.Item)
		}
		if !m.Kind.Numeric() {
			if m.Keep != NotKept || m.Better != Neither || m.Why != "" {
				t.Errorf("%s: a %s kept %q, better %q, why %q: a baseline keeps numbers only", m.Name, m.Kind, m.Keep, m.Better, m.Why)
			}
			continue
		}
		switch m.Keep {
		case Exact:
		case Band:
			if m.Kind != Count && m.Kind != Small && m.Kind != Ratio && m.Kind != Timing {
				t.Errorf("%s: a band for a %s, which has no scale", m.Name, m.Kind)
			}
		case Omitted:
			if m.Why == "" || m.Better != Neither {
				t.Errorf("%s: omitted with reason %q and better %q", m.Name, m.Why, m.Better)
			}
		default:
			t.Errorf("%s: a number with baseline rule %q", m.Name, m.Keep)
		}
		if m.Keep != Omitted && m.Why != "" {
			t.Errorf("%s: kept %s with a reason to omit it", m.Name, m.Keep)
		}
		if (m.Kind == Input) != (m.Keep == Omitted && strings.HasPrefix(m.Why, input)) {
			t.Errorf("%s: kind %s, omitted %q: inputs, and only they, are omitted as the scenario's input", m.Name, m.Kind, m.Why)
		}
		if m.Kind == Wall && m.Keep != Omitted {
			t.Errorf("%s: wall time kept: it measures the machine", m.Name)
		}
		if (m.Kind == Timing) != (m.Unit == UnitSeconds && m.Kind != Input) && m.Kind != Input {
			t.Errorf("%s: kind %s, unit %q", m.Name, m.Kind, m.Unit)
		}
		if m.Prom != "" && !strings.HasPrefix(m.Prom, "fleetsim_") {
			t.Errorf("%s: Prometheus name %q is not a fleetsim_ one", m.Name, m.Prom)
		}
		if want := map[Kind]Format{Timing: FormatSeconds, Wall: FormatSeconds, Ratio: FormatPercent, Count: FormatCount, Small: FormatNumber}[m.Kind]; m.Kind != Input && m.Format != want {
			t.Errorf("%s: a %s shown as format %d, want %d", m.Name, m.Kind, m.Format, want)
		}
		if (m.Unit == UnitSeconds) != (m.Format == FormatSeconds) && m.Kind != Wall {
			t.Errorf("%s: unit %q, format %d: seconds are shown as seconds", m.Name, m.Unit, m.Format)
		}
		if m.Help != "" && (m.Prom == "" || !strings.HasSuffix(m.Help, ".")) {
			t.Errorf("%s: help %q for series %q: help is a sentence, for a series", m.Name, m.Help, m.Prom)
		}
	}
}

func TestDocName(t *testing.T) {
	for in, want := range map[string]string{
		"leader.mailbox.max_depth":           "leader.mailbox.max_depth",
		"workers.at_version[*]":              "workers.at_version",
		"deploys[*].duration":                "deploys[].duration",
		"events[*].workers":                  "events[\"E\"].workers",
		"windows[*].leader.mailbox.wait.p99": "windows[\"W\"].leader.mailbox.wait.p99",
	} {
		if got := DocName(in); got != want {
			t.Errorf("DocName(%q) = %q, want %q", in, got, want)
		}
	}
}
