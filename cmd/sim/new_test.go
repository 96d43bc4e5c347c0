package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestNew: sim new writes a valid scenario under the name given, refuses
// to overwrite a file (exit 2, the file unchanged), and refuses a name
// that is not a scenario name (exit 2, naming the rule).
func TestNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "edge-rollout.yaml")
	code, stdout, stderr := sim(t, "new", "edge-rollout", "--output", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+path) {
		t.Errorf("stdout: %q", stdout)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(path, data)
	if err != nil {
		t.Fatalf("the new scenario does not load: %v", err)
	}
	if sc.Name != "edge-rollout" || len(sc.Warnings) > 0 {
		t.Errorf("name %q, warnings %v", sc.Name, sc.Warnings)
	}
	if code, _, stderr := sim(t, "validate", path); code != 0 {
		t.Errorf("sim validate: exit %d: %s", code, stderr)
	}

	os.WriteFile(path, []byte("mine\n"), 0o644)
	code, _, stderr = sim(t, "new", "edge-rollout", "-o", path)
	if code != 2 || !strings.Contains(stderr, "exists") || !strings.Contains(stderr, "does not overwrite") {
		t.Errorf("over an existing file: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine\n" {
		t.Errorf("the existing file was changed: %q", b)
	}

	t.Chdir(dir)
	for _, bad := range []string{"Edge_Rollout", "edge rollout", "edge-", "edge--rollout", strings.Repeat("a", 65), ""} {
		code, _, stderr := sim(t, "new", bad)
		if code != 2 || !strings.Contains(stderr, "lower-case letters, digits and single dashes") {
			t.Errorf("sim new %q: exit %d, stderr %q", bad, code, stderr)
		}
	}
	if code, _, stderr := sim(t, "new"); code != 2 || !strings.Contains(stderr, "one argument") {
		t.Errorf("sim new with no name: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := sim(t, "new", "default-place"); code != 0 {
		t.Errorf("sim new default-place: exit %d", code)
	} else if _, err := os.Stat(filepath.Join(dir, "default-place.yaml")); err != nil {
		t.Errorf("no NAME.yaml in the current directory: %v", err)
	}
}

// TestNewStepsWork: the commands sim new prints, run as printed and in
// order in the directory it wrote the scenario to, each exit 0: its first
// check compares with the baseline the step before captured. Each of its
// YAML header's commands is among them.
func TestNewStepsWork(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := sim(t, "new", "mini")
	if code != 0 {
		t.Fatalf("sim new: exit %d: %s", code, stderr)
	}
	var steps [][]string
	for line := range strings.Lines(stdout) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "sim "); ok {
			steps = append(steps, strings.Fields(rest))
		}
	}
	checks := 0
	for _, args := range steps {
		if args[0] == "check" && !slices.Contains(args, "--update-baseline") {
			checks++
		}
	}
	if len(steps) < 3 || checks == 0 {
		t.Fatalf("sim new printed %d steps, %d a check against a baseline:\n%s", len(steps), checks, stdout)
	}
	for _, args := range steps {
		code, out, errb := sim(t, append(args, "--log-level", "error")...)
		if code != 0 {
			t.Fatalf("sim %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errb)
		}
		t.Logf("sim %s: exit 0", strings.Join(args, " "))
	}
	data, err := os.ReadFile("mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, "#   sim ")
		if !ok {
			continue
		}
		cmd, _, _ := strings.Cut(rest, "#")
		if !slices.ContainsFunc(steps, func(s []string) bool { return slices.Equal(s, strings.Fields(cmd)) }) {
			t.Errorf("the file's header says sim %s, which sim new did not print", strings.TrimSpace(cmd))
		}
	}
}

// TestNewScenarioMechanismOff runs the scenario sim new writes with its
// commented sweep uncommented: the variant with the mechanism on passes
// every expectation, the one that tries offline workers fails the
// expectation that reads what parking their commands saves.
func TestNewScenarioMechanismOff(t *testing.T) {
	text := newScenario("mechanism-off")
	on := strings.Replace(text, "# sweep:\n#   leader.relay.try_offline", "sweep:\n  leader.relay.try_offline", 1)
	if on == text {
		t.Fatal("the template has no commented sweep to switch its mechanism off")
	}
	sc, err := scenario.Parse("mechanism-off.yaml", []byte(on))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := sc.Variants()
	if err != nil || len(vs) != 2 {
		t.Fatalf("%d variants, %v", len(vs), err)
	}
	const parked = "no attempt was spent on a worker that was away"
	for _, v := range vs {
		rep, err := runner.Run(context.Background(), v.Scenario, runner.RunOptions{Variant: v.Name, Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		off := v.Params["leader.relay.try_offline"] == "true"
		// On a machine that cannot keep up, asks time out and the relay
		// counts errors with the mechanism on too: the mechanism-on
		// variant is judged only when its run kept to its schedule.
		keptUp := rep.Result.Run.KeptUp
		if !keptUp {
			t.Logf("%s fell behind (%s): its expectations are not judged here", v.Name, rep.Result.Run.Behind())
		}
		for _, vd := range rep.Verdicts {
			switch {
			case off && vd.Name == parked && vd.Status != result.Fail:
				t.Errorf("%s: %q is %s with the mechanism off (%s): it cannot fail", v.Name, vd.Name, vd.Status, vd.Detail)
			case !off && keptUp && vd.Status != result.Pass:
				t.Errorf("%s: %q is %s: %s", v.Name, vd.Name, vd.Status, vd.Detail)
			}
		}
		t.Logf("%s: %.1fs of wall time", v.Name, rep.Result.Run.WallSeconds)
	}
}
