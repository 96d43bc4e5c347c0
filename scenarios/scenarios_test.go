package scenarios_test

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	judging "github.com/fleetsim/fleetsim/fleet/judge"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/report"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
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
	sc, err := parse(t, name).Scale(*workers)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// parse parses a shipped scenario as written.
func parse(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	data, err := scenarios.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("scenarios/"+name, data)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// run runs one variant on the real stack and returns its judged report.
func run(t *testing.T, v scenario.Variant) *result.Report {
	t.Helper()
	rep, err := runner.Run(context.Background(), v.Scenario, runner.RunOptions{Variant: v.Name, Dir: t.TempDir()})
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
			judge(t, load(t, name), checkBaseline)
		})
	}
}

// judge runs every variant of sc on the real stack and fails t for each
// run that did not complete, each expectation and each comparison that
// failed; each (when not nil) is then called with every variant's report.
func judge(t *testing.T, sc *scenario.Scenario, each func(t *testing.T, label string, rep *result.Report)) {
	t.Helper()
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	var reps []*result.Report
	for _, v := range vs {
		rep := run(t, v)
		reps = append(reps, rep)
		label := v.Scenario.Name
		if v.Name != "" {
			label += " [" + v.Name + "]"
		}
		if rep.Err != "" {
			t.Errorf("%s: run did not complete: %s", label, rep.Err)
		}
		for _, vd := range rep.Verdicts {
			if vd.Status == result.Fail {
				t.Errorf("%s: expectation failed: %s: %s (%s)", label, vd.Name, vd.Check, vd.Detail)
			}
		}
		if each != nil {
			each(t, label, rep)
		}
	}
	for _, vd := range judging.Comparisons(sc, vs, reps) {
		if vd.Status == result.Fail {
			t.Errorf("%s: comparison failed: %s: %s (%s)", sc.Name, vd.Name, vd.Check, vd.Detail)
		}
	}
}

func checkBaseline(t *testing.T, label string, rep *result.Report) {
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

// TestMechanismsOff switches off, one at a time, the mechanism each
// scenario demonstrates, through the scenario key that does it, and checks
// that the expectations (or comparisons) naming the outcome that mechanism
// buys now fail: an expectation that holds whatever the mechanism does
// would gate nothing. The table is the one docs/SCENARIOS.md gives.
func TestMechanismsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios on the real stack (several minutes)")
	}
	for _, tc := range mechanisms {
		t.Run(strings.TrimSuffix(tc.file, ".yaml")+"/"+tc.name, func(t *testing.T) {
			sc := load(t, tc.file)
			vs, err := sc.Variants()
			if err != nil {
				t.Fatal(err)
			}
			var reps []*result.Report
			for _, v := range vs {
				if tc.only == "" || v.Label == tc.only {
					tc.off(v.Scenario)
				}
				reps = append(reps, run(t, v))
			}
			verdicts := judging.Comparisons(sc, vs, reps)
			for _, rep := range reps {
				verdicts = append(verdicts, rep.Verdicts...)
			}
			status := map[string][]result.Verdict{}
			for _, v := range verdicts {
				status[v.Name] = append(status[v.Name], v)
			}
			for _, name := range tc.fails {
				vs, ok := status[name]
				if !ok {
					t.Errorf("no expectation or comparison is named %q", name)
					continue
				}
				if !slices.ContainsFunc(vs, func(v result.Verdict) bool { return v.Status == result.Fail }) {
					t.Errorf("with %s off (%s), %q did not fail (%+v): it does not guard the mechanism", tc.name, tc.key, name, vs)
				}
			}
		})
	}
}

// mechanisms is each shipped scenario's mechanism, the key that switches
// it off, and the outcome expectations that must then fail.
var mechanisms = []struct {
	file, name string
	key        string                   // the scenario key, as docs/SCENARIOS.md names it
	only       string                   // the sweep variant to switch it off in ("": every one)
	off        func(*scenario.Scenario) // sets key
	fails      []string
}{{
	file: "thundering-herd.yaml", name: "the bounded leader mailbox", key: "leader.mailbox.policy: unbounded",
	off:   func(s *scenario.Scenario) { s.Leader.Mailbox.Policy = mailbox.Unbounded },
	fails: []string{"a request waited little during the herd (bounded mailbox)"},
}, {
	file: "thundering-herd.yaml", name: "backoff with jitter", key: "fleet.worker.reconnect.policy: immediate",
	off:   func(s *scenario.Scenario) { s.Fleet.Worker.Reconnect.Policy = "immediate" },
	fails: []string{"the herd cost about one refused request per worker (spread hints, honoured with jitter)"},
}, {
	file: "thundering-herd.yaml", name: "spread retry hints", key: "leader.mailbox.retry_after: drain",
	off:   func(s *scenario.Scenario) { s.Leader.Mailbox.RetryAfter = mailbox.RetryDrain },
	fails: []string{"the herd cost about one refused request per worker (spread hints, honoured with jitter)"},
}, {
	file: "wave-deploy.yaml", name: "AIMD", key: "leader.relay.limit.strategy: static", only: "aimd",
	off:   func(s *scenario.Scenario) { s.Leader.Relay.Limit.Strategy = "static" },
	fails: []string{"AIMD deploys at least twice as fast as the cautious static limit"},
}, {
	file: "gateway-rollout.yaml", name: "AIMD", key: "leader.relay.limit.strategy: static", only: "aimd",
	off:   func(s *scenario.Scenario) { s.Leader.Relay.Limit.Strategy = "static" },
	fails: []string{"AIMD deploys at least 1.5 times as fast as the cautious static limit"},
}, {
	file: "gateway-rollout.yaml", name: "parking the commands of devices cut off", key: "leader.relay.try_offline: true",
	off:   func(s *scenario.Scenario) { s.Leader.Relay.TryOffline = true },
	fails: []string{"the devices cut off were parked, not tried"},
}, {
	file: "heartbeat-coalescing.yaml", name: "last-write-wins coalescing", key: "leader.heartbeat_policy: append",
	off: func(s *scenario.Scenario) { s.Leader.HeartbeatPolicy = "append" },
	fails: []string{"each round processed one heartbeat per worker, not six",
		"the newer heartbeats replaced the waiting ones",
		"what the leader processed was at most one heartbeat interval old"},
}, {
	file: "offline-reconnect.yaml", name: "parking commands for away workers", key: "leader.relay.try_offline: true",
	off:   func(s *scenario.Scenario) { s.Leader.Relay.TryOffline = true },
	fails: []string{"no attempt was spent on a worker that was away"},
}, {
	file: "offline-reconnect.yaml", name: "replacing a queued update", key: "deploy.replace: false",
	off: func(s *scenario.Scenario) {
		for i := range s.Timeline {
			if d := s.Timeline[i].Deploy; d != nil {
				d.Replace = new(bool)
			}
		}
	},
	fails: []string{"the away workers applied only the latest version"},
}, {
	file: "telemetry-fallback.yaml", name: "the local outbox fallback", key: "fleet.worker.local_outbox: 1",
	off: func(s *scenario.Scenario) {
		one := 1
		s.Fleet.Worker.LocalOutbox = &one
	},
	fails: []string{"the local outboxes had room, nothing dropped"},
}, {
	file: "poison-dlq.yaml", name: "dead-lettering a refusal at once", key: "leader.relay.retry_rejects: true",
	off:   func(s *scenario.Scenario) { s.Leader.Relay.RetryRejects = true },
	fails: []string{"no attempt was spent retrying a refusal", "and was not held up behind the poison (4 waves, 2 s apart)"},
}, {
	file: "lossy-links.yaml", name: "retrying a lost delivery", key: "leader.outbox.max_attempts: 1",
	off:   func(s *scenario.Scenario) { s.Leader.Outbox.MaxAttempts = 1 },
	fails: []string{"only the updates never answered in time are dead letters, once before their replay and once after", "every worker ends at 2.0.0"},
}, {
	file: "leader-crash.yaml", name: "the durable outbox", key: "leader.outbox.store: memory",
	off:   func(s *scenario.Scenario) { s.Leader.Outbox.Store = "memory" },
	fails: []string{"lost == 0", "every worker is at 2.0.0"},
}, {
	file: "mailbox-policies.yaml", name: "the mailbox's bound", key: "leader.mailbox.capacity: 10000000",
	off: func(s *scenario.Scenario) { s.Leader.Mailbox.Capacity = 10_000_000 },
	fails: []string{"rejecting keeps the wait bounded (a quarter of unbounded's or less)",
		"dropping the oldest keeps the wait bounded", "blocking the sender keeps the wait bounded"},
}, {
	file: "work-pulling.yaml", name: "work pulling", key: "fleet.worker.delivery: push", only: "pull",
	off: func(s *scenario.Scenario) {
		push := scenario.DeliveryPush
		s.Fleet.Worker.Delivery = &push
	},
	fails: []string{"pulling drains the queue at least 1.5 times as fast", "pulling gives the fast devices more of the work",
		"no jobs wait at a slow device when it pulls", "what pulling costs is polls answered drained"},
}}

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

// TestFleetNeverUp: heartbeat-coalescing's heartbeat checks hold as well
// for a fleet that never came up, so it also expects the whole fleet
// online at the end. A ramp longer than the run (a fleet too large to
// connect in time) must fail that expectation.
func TestFleetNeverUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario on the real stack")
	}
	sc := load(t, "heartbeat-coalescing.yaml")
	sc.Fleet.Ramp = 2 * (sc.Duration + sc.Drain)
	vs, err := sc.Variants()
	if err != nil {
		t.Fatal(err)
	}
	rep := run(t, vs[0])
	const name = "the whole fleet was online at the end, as the leader sees it"
	i := slices.IndexFunc(rep.Verdicts, func(v result.Verdict) bool { return v.Name == name })
	if i < 0 || rep.Verdicts[i].Status != result.Fail {
		t.Errorf("with a ramp longer than the run, %q did not fail: %+v", name, rep.Verdicts)
	}
}
