package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestResolvedLoadsBack resolves every shipped scenario, as written and
// scaled with a gateway size, loads the output, and resolves it again:
// the same text, the same layout of workers, the same workers selected by
// each event, the same variants.
func TestResolvedLoadsBack(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	good, _ := filepath.Glob("testdata/good/*.yaml")
	files = append(files, good...)
	if len(files) < 8 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		n := 40
		if r := s.Scaling; r != nil {
			n = max(n, r.Min) // the smallest it holds at
		}
		scaled, err := s.Scale(n)
		if err != nil {
			t.Fatal(err)
		}
		if scaled, err = scaled.WithGatewaySize(7); err != nil {
			t.Fatal(err)
		}
		for _, sc := range []*Scenario{s, scaled} {
			t.Run(filepath.Base(f), func(t *testing.T) { resolvedRoundTrip(t, sc) })
		}
	}
}

func resolvedRoundTrip(t *testing.T, s *Scenario) {
	first, err := Resolved(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("resolved.yaml", first)
	if err != nil {
		t.Fatalf("the resolved file does not load: %v\n%s", err, first)
	}
	second, err := Resolved(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Fatalf("resolved twice, not the same:\n%s\n---\n%s", first, second)
	}
	// Their profiles are in the text, written whole.
	w1, _ := s.Workers()
	w2, _ := back.Workers()
	if len(w1) != len(w2) {
		t.Fatalf("%d workers, after loading %d", len(w1), len(w2))
	}
	for i := range w1 {
		a, b := w1[i], w2[i]
		if a.ID != b.ID || a.Group != b.Group || a.Gateway != b.Gateway {
			t.Fatalf("worker %d: %s in %s on %q, after loading %s in %s on %q", i, a.ID, a.Group, a.Gateway, b.ID, b.Group, b.Gateway)
		}
	}
	for i := range s.Timeline {
		for j, sel := range s.Timeline[i].selectors() {
			a, _ := sel.Select(w1)
			b, _ := back.Timeline[i].selectors()[j].Select(w2)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("timeline[%d]: selects %v, after loading the resolved file %v", i, a, b)
			}
		}
	}
	v1, err1 := s.Variants()
	v2, err2 := back.Variants()
	if err1 != nil || err2 != nil || len(v1) != len(v2) {
		t.Fatalf("variants: %d (%v), after loading %d (%v)", len(v1), err1, len(v2), err2)
	}
	for i := range v1 {
		if v1[i].Name != v2[i].Name {
			t.Errorf("variant %d: %q, after loading %q", i, v1[i].Name, v2[i].Name)
		}
	}
	if s.Seed != back.Seed || s.Speed != back.Speed || s.Duration != back.Duration || s.Fleet.Count != back.Fleet.Count {
		t.Errorf("seed, speed, duration or count changed")
	}
}

// A file that leaves everything out resolves to every default written.
func TestResolvedFillsDefaults(t *testing.T) {
	s, err := Parse("minimal.yaml", []byte("name: minimal\nduration: 1m\nfleet: {count: 10}\ntimeline:\n  - {at: 1s, partition: {workers: 20%}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Resolved(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seed: 1\n", "speed: 1\n", "drain: 1m0s\n", "heartbeat: 0s\n", "keepalive: 5s\n",
		"strategy: aimd\n", "capacity: 1000\n", "durability: batch\n", "workers: 20%  # 2 workers\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the resolved file lacks %q:\n%s", want, b)
		}
	}
}
