package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaCmd: sim schema prints the JSON Schema; an argument is a usage
// error.
func TestSchemaCmd(t *testing.T) {
	code, stdout, stderr := sim(t, "schema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if s["$schema"] == nil || s["properties"] == nil {
		t.Errorf("not a schema: %.200s", stdout)
	}
	if code, _, stderr := sim(t, "schema", "scenarios/"); code != 2 || !strings.Contains(stderr, "takes no arguments") {
		t.Errorf("sim schema scenarios/: exit %d, %q", code, stderr)
	}
}

// TestValidateResolved: the resolved scenario, with the overrides applied,
// validates, and resolves again to the same text; --resolved takes one
// scenario.
func TestValidateResolved(t *testing.T) {
	code, first, stderr := sim(t, "validate", "--resolved", "wave-deploy", "--workers", "250", "--gateway-size", "10", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"count: 250", "gateway_size: 10", "seed: 3\n", "variants: ", "scale:\n  min: 250\n  max: 1000000\n  leader: fixed\n"} {
		if !strings.Contains(first, want) {
			t.Errorf("lacks %q:\n%s", want, first)
		}
	}
	path := filepath.Join(t.TempDir(), "resolved.yaml")
	os.WriteFile(path, []byte(first), 0o644)
	code, second, stderr := sim(t, "validate", "--resolved", path)
	if code != 0 {
		t.Fatalf("the resolved file: exit %d: %s", code, stderr)
	}
	if second != first {
		t.Errorf("resolved again, it differs:\n%s\n---\n%s", first, second)
	}
	if code, _, stderr := sim(t, "validate", "--resolved", "wave-deploy", "thundering-herd"); code != 2 || !strings.Contains(stderr, "one file") {
		t.Errorf("two scenarios: exit %d, %q", code, stderr)
	}
	if code, _, _ := sim(t, "validate", "--resolved", "wave-deploy", "--gateway-size", "0"); code != 2 {
		t.Errorf("--gateway-size 0: exit %d, want 2", code)
	}
}
