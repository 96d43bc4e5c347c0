package report

import (
	"maps"
	"slices"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestRuleOfEveryMetric: every number the Result type can hold (every
// field, whatever map keys or list lengths a run has) has a rule from the
// registry that Capture can use: a timing value a timing rule, a band the
// scale of its kind. The scenario's inputs are left out; the timings that
// measure a mechanism are kept.
func TestRuleOfEveryMetric(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range result.Metrics() {
		if !m.Kind.Numeric() {
			continue
		}
		seen[m.Name] = true
		s, keep := specOf(m)
		if !keep {
			continue
		}
		if (m.Kind == result.Timing) != (s.Kind == Timing) {
			t.Errorf("%s: kind %s but rule %s", m.Name, m.Kind, s.Kind)
		}
		if (s.Kind == Exact) != (s.Scale == nil) || (s.Kind == Timing && s.Scale != &timings) || (s.Kind == Band && s.Scale == &timings) {
			t.Errorf("%s: rule %s with scale %v", m.Name, s.Kind, s.Scale)
		}
		if err := s.rule().Validate(); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	for _, p := range []string{"run.seed", "run.speed", "fleet.count", "fleet.groups[*]", "leader.mailbox.capacity",
		"workers.mailbox.capacity", "relay.partitions", "relay.limit.initial", "commands.poisoned"} {
		if _, keep := specFor(leaf{Pattern: p}); keep {
			t.Errorf("%s: kept, want left out: it echoes the scenario", p)
		}
	}
	for _, p := range []string{"run.sim_seconds", "leader.mailbox.wait.p50", "leader.mailbox.wait.p99", "workers.mailbox.wait.p50",
		"workers.mailbox.wait.p99", "heartbeats.age.p50", "heartbeats.age.p99", "deploys[*].duration", "outbox.oldest_max"} {
		if s, _ := specFor(leaf{Pattern: p, Timing: true}); s.Kind != Timing {
			t.Errorf("%s: %v, want a timing rule: it measures how long the mechanism made something wait", p, s)
		}
	}
	// herdReport, which the other tests use, holds every one of them.
	r := herdReport()
	for _, l := range leaves(&r.Result) {
		if _, ok := result.Lookup(l.Pattern); !ok {
			t.Errorf("%s: a number of the Result the registry lacks", l.Pattern)
		}
		delete(seen, l.Pattern)
	}
	if len(seen) > 0 {
		t.Errorf("herdReport lacks %v", slices.Sorted(maps.Keys(seen)))
	}
}
