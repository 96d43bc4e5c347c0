package scenario

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// Every name a check can read reaches the registry's feeds: a name
// added to Result without a registry entry fails here (and in
// fleet/result). A struct read whole counts when any of its metrics
// does.
func TestFeedsOfEveryName(t *testing.T) {
	all := expect.ResultNames()
	if len(all) < 120 {
		t.Fatalf("only %d names: the walk is broken", len(all))
	}
	for _, p := range all {
		if _, ok := feedsOf(p); !ok {
			t.Errorf("%s: not in the registry (fleet/result/registry.go)", p)
		}
	}
	for path, want := range map[string]result.Feed{
		"lost":                      result.FeedCommands | result.FeedTelemetry,
		"relay.retries":             result.FeedCommands,
		"relay.limit.initial":       0,
		"workers.at_version":        0,
		"deploys":                   result.FeedCommands,
		"deploys[].delivered":       result.FeedCommands,
		"windows[].relay.delivered": result.FeedCommands,
		"relay":                     0, // relay.partitions counts without commands
		"telemetry":                 result.FeedTelemetry,
		"heartbeats.age":            result.FeedHeartbeats,
		"windows[].relay":           result.FeedCommands,
	} {
		if got, ok := feedsOf(path); got != want || !ok {
			t.Errorf("feedsOf(%s) = %v, %v; want %v", path, got, ok, want)
		}
	}
	if f, ok := feedsOf("nothing.here"); ok {
		t.Errorf("feedsOf(nothing.here) = %v, true; want false", f)
	}
	for segs, want := range map[string]string{
		"lost":                                 "lost",
		`workers.at_version.2.0.0`:             "workers.at_version",
		"deploys.[].delivered":                 "deploys[].delivered",
		"deploys":                              "deploys",
		"windows.herd.relay.delivered":         "windows[].relay.delivered",
		"windows.herd.leader.mailbox.wait.p99": "windows[].leader.mailbox.wait.p99",
		"events.heal.workers":                  "events[].workers",
	} {
		if got := expect.ResultPath(strings.Split(segs, ".")); got != want {
			t.Errorf("resultPath(%s) = %s, want %s", segs, got, want)
		}
	}
}

// The example of the task: a scenario that sends heartbeats and nothing
// else, whose lost == 0 cannot fail. Loading it says so, without refusing it.
func TestHeartbeatsOnlyWarning(t *testing.T) {
	s, err := Parse("heartbeats.yaml", []byte(heartbeatsOnly))
	if err != nil {
		t.Fatal(err)
	}
	want := `heartbeats.yaml:7:5: warning: expect[0]: check "lost == 0" reads only lost (commands and telemetry), and this scenario sends neither (no deploy or poison event or pushed jobs, no telemetry interval): it cannot fail` +
		"\n\t  - lost == 0\n\t    ^"
	if got := s.Warnings.Error(); got != want {
		t.Errorf("warnings:\n%s\nwant\n%s", got, want)
	}
}

const heartbeatsOnly = `name: heartbeats
duration: 3m
fleet:
  count: 100
  worker: {heartbeat: 5s}
expect:
  - lost == 0
  - heartbeats.max_queued <= fleet.count
`

func TestVacuousWarnings(t *testing.T) {
	const head = "name: v\nduration: 1m\n"
	none := head + "fleet: {count: 10}\n"
	deploy := head + "fleet: {count: 10}\ntimeline:\n  - at: 1s\n    deploy: {version: 2.0.0}\n"
	poison := head + "fleet: {count: 10}\ntimeline:\n  - at: 1s\n    name: poison\n    poison: {workers: 10%}\n"
	storm := head + "fleet: {count: 10}\ntimeline:\n  - at: 1s\n    heartbeat_storm: {interval: 1s, for: 10s}\n"
	telemetry := head + "fleet: {count: 10, worker: {telemetry: 5s}}\n"
	groupTelemetry := head + "fleet:\n  count: 10\n  groups: [{name: g, count: 2, telemetry: 5s}]\n"
	heartbeat := head + "fleet: {count: 10, worker: {heartbeat: 5s}}\n"
	windows := head + "fleet: {count: 10}\ntimeline:\n  - {at: 5s, name: e, crash: {workers: 10%}}\nwindows:\n  - {name: w, from: 5s, to: 20s}\n"
	jobs := "\ntimeline:\n  - {at: 1s, jobs: {count: 20}}\n"
	pushed := head + "fleet: {count: 10}" + jobs
	pulled := head + "fleet: {count: 10, worker: {delivery: pull}}" + jobs
	pulledGroup := head + "fleet:\n  count: 10\n  groups: [{name: p, count: 4, delivery: pull}]" + jobs
	for _, tc := range []struct {
		file, check, want string // want "": no warning
	}{
		{none, "lost == 0", `check "lost == 0" reads only lost (commands and telemetry), and this scenario sends neither (no deploy or poison event or pushed jobs, no telemetry interval): it cannot fail`},
		{none, "relay.retries == 0", `check "relay.retries == 0" reads only relay.retries (commands), and this scenario sends no commands (no deploy or poison event or pushed jobs): it cannot fail`},
		{none, "commands.sent > 0", "reads only commands.sent (commands), and this scenario sends no commands (no deploy or poison event or pushed jobs): it cannot pass"},
		{none, "telemetry.forwarded / telemetry.stored > 0.5", "reads only telemetry.forwarded and telemetry.stored (telemetry), and this scenario sends no telemetry (no telemetry interval): it is never judged"},
		{none, "heartbeats.coalesced_ratio >= 0.75", "reads only heartbeats.coalesced_ratio (heartbeats), and this scenario sends no heartbeats (no heartbeat interval or heartbeat_storm event): it cannot pass"},
		{none, "all(deploys, .delivered == .targets)", "reads only deploys (commands), and this scenario sends no commands (no deploy or poison event or pushed jobs): it cannot fail"},
		{none, "deploys[0].delivered == 10", "reads only deploys[0].delivered (commands)"},
		{none, "workers.mailbox.dropped == 0 && leader.ask_rtt.p99 < 1", "reads only workers.mailbox.dropped and leader.ask_rtt.p99 (commands and job requests)"},
		{none, "relay.retries == 0 || heartbeats.sent > 0", "reads only relay.retries and heartbeats.sent (commands and heartbeats), and this scenario sends neither (no deploy or poison event or pushed jobs, no heartbeat interval or heartbeat_storm event): it cannot fail"},
		{none, "lost == 0 && leader.telemetry_served == 0 && heartbeats.sent == 0", "(commands, telemetry and heartbeats), and this scenario sends none of them (no deploy or poison event or pushed jobs, no telemetry interval, no heartbeat interval or heartbeat_storm event): it cannot fail"},
		// The scenario's inputs alone.
		{poison, `commands.poisoned == 3 * events["poison"].workers`, `check "commands.poisoned == 3 * events[\"poison\"].workers" reads only commands.poisoned and events.poison.workers, which the scenario file sets whatever the code does`},
		{none, "run.leader_restarts == 1", "reads only run.leader_restarts, which the scenario file sets"},
		{none, "fleet.count >= 10 && leader.mailbox.capacity > 0", "reads only fleet.count and leader.mailbox.capacity, which"},
		{poison, `outbox.dead_letters == 3 * events["poison"].workers`, ""},
		// What counts without anything sent.
		{none, "heartbeats.rounds >= 6", ""},
		{none, "lost == 0 && fleet.online == fleet.count", ""},
		{none, `workers.at_version["1.0.0"] == fleet.count`, ""},
		{none, "relay.limit.min < relay.limit.initial", ""},
		{none, "leader.mailbox.max_depth <= 100", ""},
		{none, "workers.sync_ok >= fleet.count", ""},
		{none, "workers.mailbox.capacity == 160", "reads only workers.mailbox.capacity, which the scenario file sets"},
		// What the scenario sends.
		{deploy, "lost == 0", ""},
		{deploy, "relay.retries == 0", ""},
		{deploy, "all(deploys, .delivered == .targets)", ""},
		{poison, "outbox.dead_letters == commands.poisoned", ""},
		{telemetry, "lost == 0", ""},
		{telemetry, "relay.retries == 0", "reads only relay.retries (commands)"},
		{groupTelemetry, "telemetry.lost == 0", ""},
		{heartbeat, "heartbeats.coalesced_ratio >= 0.75", ""},
		{storm, "heartbeats.max_queued <= fleet.count && heartbeats.sent > 0", ""},
		{storm, "lost == 0", "reads only lost (commands and telemetry)"},
		{windows, `windows["w"].relay.retries == 0`, `reads only windows.w.relay.retries (commands)`},
		{windows, `windows["w"].workers.acked_full > 0`, `it cannot pass`},
		{windows, `windows["w"].leader.mailbox.rejected > 0`, ""},
		// Jobs: added by a jobs event, pushed or pulled; job requests
		// and the leader's job queue only with pulling workers.
		{none, "jobs.done == jobs.added", `check "jobs.done == jobs.added" reads only jobs.done and jobs.added (jobs), and this scenario sends no jobs (no jobs event): it cannot fail`},
		{deploy, "jobs.lost == 0 && jobs.makespan < 60", "reads only jobs.lost and jobs.makespan (jobs), and this scenario sends no jobs (no jobs event): it cannot fail"},
		{none, "jobs.polls > 0", "reads only jobs.polls (job requests), and this scenario sends no job requests (no pulling workers): it cannot pass"},
		{pushed, "jobs.done == jobs.added", ""},
		{pushed, `jobs.done_by["default"] > 0 && jobs.held_max["default"] <= 3`, ""},
		{pushed, "jobs.stranded_waits == 0", "reads only jobs.stranded_waits (job requests), and this scenario sends no job requests (no pulling workers): it cannot fail"},
		{pushed, "jobs.expired <= jobs.abandoned && jobs.depth == 0 && jobs.oldest_age < 10", "(job requests), and this scenario sends no job requests (no pulling workers): it cannot fail"},
		{pushed, "relay.delivered >= jobs.pushed", ""}, // the pushed jobs are commands
		{pushed, "workers.mailbox.max_depth <= 3", ""},
		{pulled, "jobs.done == jobs.added && jobs.stranded_waits == 0", ""},
		{pulled, "jobs.polls > jobs.drained", ""},
		{pulled, "workers.mailbox.max_depth <= 1", ""}, // a pulled job goes through the mailbox
		{pulled, "relay.delivered == 0", "reads only relay.delivered (commands), and this scenario sends no commands (no deploy or poison event or pushed jobs): it cannot fail"},
		{pulledGroup, "jobs.leases >= jobs.queued", ""},
		{pulledGroup, "relay.delivered >= jobs.pushed", ""}, // six workers push
		{windows, `windows["w"].workers.sync_full <= 8 * events["e"].workers`, ""},
	} {
		s, err := Parse("v.yaml", []byte(tc.file+"expect:\n  - fleet.online > 1\n  - "+tc.check+"\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.check, err)
			continue
		}
		switch {
		case tc.want == "" && len(s.Warnings) > 0:
			t.Errorf("%s: warned: %v", tc.check, s.Warnings)
		case tc.want != "" && len(s.Warnings) != 1:
			t.Errorf("%s: %d warnings, want 1: %v", tc.check, len(s.Warnings), s.Warnings)
		case tc.want != "":
			w := s.Warnings[0]
			if !w.Warning || w.Path != "expect[1]" || w.Line < 5 || w.Col != 5 || !strings.Contains(w.Msg, tc.want) {
				t.Errorf("%s: %#v\nwant a warning at expect[1] saying %s", tc.check, w, tc.want)
			}
		}
	}
}

// With a sweep, a check is vacuous when it is in every variant: a variant
// that sends what the check reads makes it a comparison.
func TestVacuousWarningsSweep(t *testing.T) {
	const file = "name: v\nduration: 1m\nfleet: {count: 10}\nexpect: [lost == 0]\nsweep:\n"
	for sweep, warns := range map[string]bool{
		"  fleet.worker.telemetry: [0s, 1s]\n":                                  false,
		"  fleet.worker.telemetry: [1s, 2s]\n":                                  false,
		"  leader.mailbox.capacity: [10, 20]\n":                                 true,
		"  leader.mailbox.capacity: [10, 20]\n  fleet.worker.heartbeat: [1s]\n": true,
		"  leader.mailbox.capacity: [10, 20]\n  fleet.worker.telemetry: [0s]\n": true,
		"  leader.mailbox.capacity: [10]\n  fleet.worker.telemetry: [0s, 5s]\n": false,
	} {
		s, err := Parse("v.yaml", []byte(file+sweep))
		if err != nil {
			t.Errorf("%s: %v", sweep, err)
			continue
		}
		if got := len(s.Warnings) == 1; got != warns || len(s.Warnings) > 1 {
			t.Errorf("sweep\n%swarnings: %v, want a warning: %v", sweep, s.Warnings, warns)
		}
	}
}

// An outbox lease no longer than the ask timeout loads, with a warning at
// the lease: a slow worker's command would go out twice. The defaults
// (30 s against 5 s) warn of nothing.
func TestLeaseNotAboveAskTimeoutWarning(t *testing.T) {
	for _, tc := range []struct {
		leader, want string
	}{
		{"", ""},
		{"leader: {ask_timeout: 5s, outbox: {lease_timeout: 6s}}", ""},
		{"leader: {ask_timeout: 5s, outbox: {lease_timeout: 5s}}", "lease.yaml:5:51: warning: leader.outbox.lease_timeout: 5s is not above leader.ask_timeout (5s)"},
		{"leader: {ask_timeout: 40s}", "warning: leader.outbox.lease_timeout: 30s is not above leader.ask_timeout (40s)"},
	} {
		s, err := Parse("lease.yaml", []byte("name: lease\nduration: 1m\nfleet:\n  count: 10\n"+tc.leader+"\n"))
		if err != nil {
			t.Fatalf("%q: %v", tc.leader, err)
		}
		got := s.Warnings.Error()
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%q: warned: %s", tc.leader, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%q: warnings %q, want one containing %q", tc.leader, got, tc.want)
		}
	}
}
