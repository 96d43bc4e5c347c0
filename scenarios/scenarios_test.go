package scenarios_test

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/scenarios"
)

// CISize is the fleet size the shipped scenarios run at under go test and
// in CI (`sim check scenarios/ --workers 300`); the baselines in
// testdata/baselines are recorded at this size.
const CISize = 300

var (
	workers = flag.Int("workers", CISize, "fleet size for the shipped scenarios (baselines exist for 300)")
	update  = flag.Bool("update-baselines", false, "record testdata/baselines from this run instead of comparing")
)

const baselineDir = "../testdata/baselines"

// load parses a shipped scenario and scales it to the test's fleet size.
func load(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	data, err := scenarios.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("scenarios/"+name, data)
	if err != nil {
		t.Fatal(err)
	}
	if sc, err = sc.Scale(*workers); err != nil {
		t.Fatal(err)
	}
	return sc
}

// run runs one variant on the real stack and returns its judged report.
func run(t *testing.T, v scenario.Variant) *scenario.Report {
	t.Helper()
	rep, err := scenario.Run(context.Background(), v.Scenario, scenario.RunOptions{Variant: v.Name, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%s %s: %v", v.Scenario.Name, v.Name, err)
	}
	return rep
}

// TestShipped runs every shipped scenario the way CI's `sim check` does:
// scaled to 300 workers, each variant judged against its expectations and
// compared with its baseline.
func TestShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped scenario on the real stack (a few minutes)")
	}
	names, err := fs.Glob(scenarios.FS, "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no shipped scenarios: %v", err)
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			vs, err := load(t, name).Variants()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				rep := run(t, v)
				label := v.Scenario.Name
				if v.Name != "" {
					label += " [" + v.Name + "]"
				}
				if rep.Err != "" {
					t.Errorf("%s: run did not complete: %s", label, rep.Err)
				}
				for _, vd := range rep.Verdicts {
					if vd.Status == scenario.Fail {
						t.Errorf("%s: expectation failed: %s: %s (%s)", label, vd.Name, vd.Check, vd.Detail)
					}
				}
				checkBaseline(t, label, rep)
			}
		})
	}
}

func checkBaseline(t *testing.T, label string, rep *scenario.Report) {
	t.Helper()
	path := report.BaselinePath(baselineDir, rep.Scenario, rep.Variant)
	if *update {
		if err := report.UpdateBaseline(path, rep); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: baseline written to %s", label, path)
		return
	}
	b, err := report.LoadBaseline(path)
	if errors.Is(err, report.ErrNoBaseline) {
		t.Errorf("%s: no baseline at %s: record it with go test ./scenarios -update-baselines (or sim check scenarios/ --workers %d --update-baseline)", label, filepath.Clean(path), CISize)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	c := report.Compare(b, rep)
	if c.Skipped != "" {
		t.Errorf("%s: baseline not compared: %s", label, c.Skipped)
	}
	for _, d := range c.Regressions() {
		t.Errorf("%s: baseline regression: %s = %g, baseline %g (%s): %s", label, d.Metric, d.Got, d.Baseline, d.Rule, d.Why)
	}
}

// TestMechanismsOff switches off the mechanism each scenario
// demonstrates and checks that the scenario's own expectations catch it:
// an expectation that cannot fail would gate nothing.
func TestMechanismsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios on the real stack (a few minutes)")
	}
	for _, tc := range []struct {
		file   string
		off    string
		change func(*scenario.Scenario)
		fails  []string // expectations (by name) that must fail
	}{{
		file: "thundering-herd.yaml",
		off:  "an unbounded leader mailbox and immediate reconnects",
		change: func(s *scenario.Scenario) {
			s.Leader.Mailbox.Policy = mailbox.Unbounded
			s.Fleet.Worker.Reconnect.Policy = "immediate"
		},
		fails: []string{"the leader's queue stays bounded", "the leader pushed back instead of queueing"},
	}, {
		file:   "wave-deploy.yaml",
		off:    "a static relay limit",
		change: func(s *scenario.Scenario) { s.Leader.Relay.Limit.Strategy = "static" },
		fails:  []string{`the relay cut its concurrency on "full"`},
	}, {
		file:   "heartbeat-coalescing.yaml",
		off:    "heartbeats appended instead of overwritten",
		change: func(s *scenario.Scenario) { s.Leader.HeartbeatPolicy = "append" },
		fails:  []string{"at most one heartbeat per worker waits", "most heartbeats were coalesced"},
	}, {
		file:   "offline-reconnect.yaml",
		off:    "the relay trying workers it knows are away",
		change: func(s *scenario.Scenario) { s.Leader.Relay.TryOffline = true },
		fails:  []string{"no attempt was spent on a worker that was away"},
	}, {
		file: "telemetry-fallback.yaml",
		off:  "a local outbox of one message",
		change: func(s *scenario.Scenario) {
			one := 1
			s.Fleet.Worker.LocalOutbox = &one
		},
		fails: []string{"the local outboxes had room, nothing dropped"},
	}} {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			sc := load(t, tc.file)
			tc.change(sc)
			rep := run(t, scenario.Variant{Scenario: sc, Name: "off"})
			failed := map[string]bool{}
			for _, v := range rep.Verdicts {
				if v.Status == scenario.Fail {
					failed[v.Name] = true
				}
			}
			for _, name := range tc.fails {
				if !failed[name] {
					t.Errorf("with %s, expectation %q still passed: it does not guard the mechanism", tc.off, name)
				}
			}
		})
	}
}

// TestBaselinesLoad: every baseline file is valid, is at the CI size, and
// belongs to a shipped scenario (a stale file of a renamed scenario would
// otherwise sit there unused).
func TestBaselinesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(baselineDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no baselines in %s: %v", baselineDir, err)
	}
	for _, f := range files {
		b, err := report.LoadBaseline(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if _, err := scenarios.FS.ReadFile(b.Scenario + ".yaml"); err != nil {
			t.Errorf("%s: scenario %q is not shipped", f, b.Scenario)
		}
		if b.FleetCount != CISize {
			t.Errorf("%s: captured at %d workers, want %d", f, b.FleetCount, CISize)
		}
	}
}
