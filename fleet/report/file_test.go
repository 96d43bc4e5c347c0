package report

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestBaselineFile(t *testing.T) {
	dir := t.TempDir()
	path := BaselinePath(filepath.Join(dir, "baselines"), "mailbox-policies", "leader.mailbox.policy=reject")
	if filepath.Base(path) != "mailbox-policies--leader.mailbox.policy=reject.json" {
		t.Errorf("path = %s", path)
	}
	_, err := LoadBaseline(path)
	if !errors.Is(err, ErrNoBaseline) || !strings.Contains(err.Error(), path) {
		t.Fatalf("missing baseline: err = %v, want ErrNoBaseline naming the path", err)
	}

	for _, tc := range []struct {
		name  string
		reps  []*result.Report
		lines []string
	}{
		{"one run", []*result.Report{herdReport()}, []string{
			`    {"metric":"lost","value":0,"rule":"exact","better":"lower"},`,
			`    {"metric":"relay.backpressure","value":25,"rule":"band","factor":3,"abs":5},`,
			`    {"metric":"leader.mailbox.wait.p99","value":12.4,"rule":"timing","factor":3,"abs":0.5,"better":"lower"},`,
			`"fleet_count": 1000,`,
			`rule timing (seconds)`,
			`Captured from one run: the bands were not measured; each is the default of its kind of metric (count 3× ± 5, small number 2× ± 2, ratio 1.25× ± 0.05, seconds 3× ± 0.5s)`,
		}},
		{"three runs", noisyRuns(3, 1.1), []string{
			// min 0 is written: the spread is whole on every measured line.
			`    {"metric":"lost","value":0,"rule":"exact","better":"lower","runs":3,"min":0,"max":0},`,
			`    {"metric":"relay.backpressure","value":132,"rule":"band","factor":2.39,"abs":7.17,"runs":3,"min":120,"max":145},`,
			`Measured from 3 runs: value is their median; runs, min and max their spread.`,
			`s and k_min by kind of metric: count 3 and 1.1, small number 1 and 1.1, ratio 0.02 and 1.05, seconds 0.02 and 1.1.`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := capture(t, tc.reps...)
			if err := SaveBaseline(path, b); err != nil {
				t.Fatal(err)
			}
			got, err := LoadBaseline(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, b) {
				t.Errorf("round trip changed the baseline:\ngot  %+v\nwant %+v", got, b)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			// One metric a line, rules and spread beside the values, help
			// for the editor.
			for _, line := range tc.lines {
				if !strings.Contains(text, line) {
					t.Errorf("baseline file lacks %s", line)
				}
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("temporary files left beside the baseline: %v", entries)
			}
		})
	}
}

func TestLoadBaselineErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\": \"lost\" \"value\": 0}\n  ]\n}", ":4:"},
		{"unknown key", "{\n  \"scenario\": \"s\",\n  \"metrics\": [\n    {\"metric\":\"lost\",\"value\":0,\"rule\":\"timing\",\"fator\":2}\n  ]\n}", `unknown field "fator"`},
		{"unknown rule", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"relay.backpressure","value":0,"rule":"roughly"}]}`,
			`metrics[1] relay.backpressure: rule "roughly" unknown; valid: exact, band, timing`},
		{"exact with a margin", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","abs":2}]}`, `rule "exact" takes no factor or abs`},
		{"timing factor", `{"scenario":"s","metrics":[{"metric":"run.sim_seconds","value":0,"rule":"timing","factor":0.5}]}`, `rule "timing" needs factor >= 1`},
		{"band without factor", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","abs":3}]}`, `rule "band" needs factor >= 1`},
		{"negative", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","factor":2,"abs":-1}]}`, `abs -1: must be a number >= 0`},
		{"rel on a band", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":0,"rule":"band","factor":2,"rel":2}]}`, `metrics[0] relay.retries: rel belongs to the replaced tolerance rule; a "band" rule takes factor and abs`},
		{"direction", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact","better":"down"}]}`, `better "down" unknown; valid: "lower", "higher"`},
		{"twice", `{"scenario":"s","metrics":[{"metric":"lost","value":0,"rule":"exact"},{"metric":"lost","value":0,"rule":"exact"}]}`, `metrics[1] lost: listed twice`},
		{"no name", `{"scenario":"s","metrics":[{"value":0,"rule":"exact"}]}`, `metrics[0]: "metric" (its name) is missing`},
		{"no scenario", `{"metrics":[]}`, `"scenario" is missing`},
		{"wrong type", "{\n\"scenario\": \"s\",\n\"fleet_count\": \"many\"}", ":3:"},
		{"spread upside down", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":5,"rule":"band","factor":2,"abs":3,"runs":5,"min":9,"max":2}]}`, `metrics[0] relay.retries: min 9 is above max 2`},
		{"spread without runs", `{"scenario":"s","metrics":[{"metric":"relay.retries","value":5,"rule":"band","factor":2,"abs":3,"min":1,"max":9}]}`, `give runs too`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadBaseline(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want the path and %q", err, tc.want)
			}
			if errors.Is(err, ErrNoBaseline) {
				t.Error("a malformed baseline is not a missing one")
			}
		})
	}
}

// oldFile is a baseline as it was written before bands replaced the
// tolerance rule: relay.backpressure and leader.mailbox.max_depth kept,
// the rest of the herd's metrics deleted by its user.
const oldFile = `{
  "scenario": "thundering-herd",
  "seed": 42,
  "fleet_count": 1000,
  "kept_up": true,
  "captured": "2026-03-14T09:26:53Z",
  "metrics": [
    {"metric":"lost","value":0,"rule":"exact","better":"lower"},
    {"metric":"fleet.count","value":1000,"rule":"exact"},
    {"metric":"relay.backpressure","value":25,"rule":"tolerance","rel":2,"abs":25},
    {"metric":"leader.mailbox.max_depth","value":500,"rule":"tolerance","rel":2,"abs":25,"better":"lower"},
    {"metric":"leader.mailbox.wait.p99","value":12.4,"rule":"timing","factor":3,"abs":0.5,"better":"lower"}
  ]
}
`

// TestToleranceRefused: a file with the replaced rule is refused with the
// file, line and metric and both fixes; updating it measures its metrics
// anew and keeps the user's deletions.
func TestToleranceRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.json")
	if err := os.WriteFile(path, []byte(oldFile), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadBaseline(path)
	for _, want := range []string{
		path + ":10:15: metrics[2] relay.backpressure: rule \"tolerance\" (and 1 more of its lines) was replaced by \"band\"",
		"sim check --update-baseline --repeat 10",
		`by hand in the new form: {"metric":"relay.backpressure","value":25,"rule":"band","factor":3,"abs":5}`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %s", err, want)
		}
	}

	if err := UpdateBaseline(path, noisyRuns(5, 1.1)...); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(path)
	if err != nil {
		t.Fatalf("the updated file does not load: %v", err)
	}
	var names []string
	for _, m := range b.Metrics {
		names = append(names, m.Name)
		if m.Runs != 5 {
			t.Errorf("%s: runs %d, want 5", m.Name, m.Runs)
		}
	}
	// fleet.count echoes the input: no longer measured, so dropped.
	if want := []string{"lost", "relay.backpressure", "leader.mailbox.max_depth", "leader.mailbox.wait.p99"}; !slices.Equal(names, want) {
		t.Errorf("metrics %v, want %v", names, want)
	}
	if m := b.Metrics[2]; m.Kind != Band || m.Better != Lower || m.Factor != counts.MinFactor {
		t.Errorf("max_depth = %+v, want a measured band (the runs agreed: k_min), lower is better", m)
	}
}

func TestSaveBaselineRejectsInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.json")
	err := SaveBaseline(path, Baseline{Scenario: "s", Metrics: []Metric{{Name: "lost", Rule: Rule{Kind: "nearly"}}}})
	if err == nil || !strings.Contains(err.Error(), `rule "nearly" unknown`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("an invalid baseline was written")
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct{ scenario, variant, want string }{
		{"thundering-herd", "", "thundering-herd"},
		{"mailbox-policies", "leader.mailbox.policy=drop-oldest", "mailbox-policies--leader.mailbox.policy=drop-oldest"},
		{"sweep", "a=1,b=2", "sweep--a=1,b=2"},
		{"sweep", "path=/tmp/x", "sweep--path=_tmp_x-"},
		{"sweep", "label=two words", "sweep--label=two_words-"},
		{".hidden", "", "_hidden-"},
		{"", "", "unnamed"},
		{"dots", "v=1.", "dots--v=1_-"},
	} {
		got := FileName(tc.scenario, tc.variant)
		if !strings.HasPrefix(got, tc.want) || (strings.HasSuffix(tc.want, "-") && len(got) != len(tc.want)+8) {
			t.Errorf("FileName(%q, %q) = %q, want %q (+ hash when lossy)", tc.scenario, tc.variant, got, tc.want)
		}
	}
	// Lossy names stay distinct, and long ones fit a file system.
	if a, b := FileName("s", "x=a/b"), FileName("s", "x=a:b"); a == b {
		t.Errorf("%q and %q collide", a, b)
	}
	long := FileName(strings.Repeat("s", 300), strings.Repeat("v", 300))
	if len(long) > 230 {
		t.Errorf("len = %d", len(long))
	}
}
