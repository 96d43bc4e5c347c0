package report

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// TestRuleTableComplete keeps the rule table in step with the Result
// schema: every number the Result type can hold (every field, whatever
// map keys or list lengths a run has) is given a rule or left out with a
// reason, and every entry of the tables names a real one. The scenario's
// inputs are left out as such; the timings are kept.
func TestRuleTableComplete(t *testing.T) {
	seen := map[string]bool{}
	timing := map[string]bool{}
	typeLeaves(reflect.TypeFor[result.Result](), "", seen, timing)
	for p := range seen {
		s, ruled := rules[p]
		why, skip := skipped[p]
		if ruled == skip {
			t.Errorf("%s: in rules %v, in skipped %v; want exactly one (add it to metrics.go)", p, ruled, skip)
		}
		if skip && why == "" {
			t.Errorf("skipped[%q]: no reason", p)
		}
		if !ruled {
			continue
		}
		if timing[p] != (s.Kind == Timing) {
			t.Errorf("%s: timing value %v but rule %s", p, timing[p], s.Kind)
		}
		if (s.Kind == Exact) != (s.Scale == nil) || (s.Kind == Timing && s.Scale != &timings) || (s.Kind == Band && s.Scale == &timings) {
			t.Errorf("%s: rule %s with scale %v", p, s.Kind, s.Scale)
		}
		if err := s.rule().Validate(); err != nil {
			t.Errorf("rules[%q]: %v", p, err)
		}
	}
	for p := range rules {
		if !seen[p] {
			t.Errorf("rules[%q]: no such metric in result.Result", p)
		}
	}
	for p := range skipped {
		if !seen[p] {
			t.Errorf("skipped[%q]: no such metric in result.Result", p)
		}
	}
	for _, p := range []string{"run.seed", "run.speed", "fleet.count", "fleet.groups[*]", "leader.mailbox.capacity",
		"workers.mailbox.capacity", "relay.partitions", "relay.limit.initial", "commands.poisoned"} {
		if !strings.HasPrefix(skipped[p], input) {
			t.Errorf("%s: skipped %q, want %q: it echoes the scenario", p, skipped[p], input)
		}
	}
	for _, p := range []string{"run.sim_seconds", "leader.mailbox.wait.p50", "leader.mailbox.wait.p99", "workers.mailbox.wait.p50",
		"workers.mailbox.wait.p99", "heartbeats.age.p50", "heartbeats.age.p99", "deploys[*].duration", "outbox.oldest_max"} {
		if rules[p].Kind != Timing {
			t.Errorf("%s: %v, want a timing rule: it measures how long the mechanism made something wait", p, rules[p])
		}
	}
	// herdReport, which the other tests use, holds every one of them.
	r := herdReport()
	for _, l := range leaves(&r.Result) {
		delete(seen, l.Pattern)
	}
	if len(seen) > 0 {
		t.Errorf("herdReport lacks %v", slices.Sorted(maps.Keys(seen)))
	}
}

// typeLeaves is leaves over a type: every number a value of t can hold,
// by pattern, whether its maps and lists are empty or not.
func typeLeaves(t reflect.Type, pattern string, seen, timing map[string]bool) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("expr"); tag != "" && tag != "-" {
				typeLeaves(t.Field(i).Type, dot(pattern, tag), seen, timing)
			}
		}
	case reflect.Map, reflect.Slice:
		typeLeaves(t.Elem(), pattern+"[*]", seen, timing)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		seen[pattern] = true
		timing[pattern] = t == secondsType
	}
}
