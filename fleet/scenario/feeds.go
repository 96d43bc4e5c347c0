package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/internal/wording"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// feed is what a run must send for a result name to count anything.
type feed uint8

const (
	// feedCommands: commands from the leader to the workers, which only
	// deploy and poison events send (the dashboard's deploy key does too,
	// but a file cannot rely on it).
	feedCommands feed = 1 << iota
	// feedTelemetry: a telemetry interval above 0 in fleet.worker or a
	// group.
	feedTelemetry
	// feedHeartbeats: a heartbeat interval above 0 in fleet.worker or a
	// group, or a heartbeat_storm event.
	feedHeartbeats
)

// fedBy decides, for every result name (resultNames), what the run must
// send for it to count anything: a name fed by several feeds counts when
// any of them is sent. 0 means the name counts without any (the fleet's
// connections and syncs, the configuration, the leader's own cadence): a
// check reading it is never called vacuous. "X.*" is X and every name
// under it, the items of a list or map included; an exact entry wins over
// it. An item of a list or map of structs is "[]": windows[].relay.
// Without its feed a name stays 0 (a list stays empty).
// TestFedByDecidesEveryName fails when a name is added to Result without
// an entry here.
var fedBy = map[string]feed{
	"lost":  feedCommands | feedTelemetry,
	"run.*": 0,

	"fleet.*": 0,

	"workers.at_version":        0, // the start version counts without a deploy
	"workers.applied":           feedCommands,
	"workers.applied_twice":     feedCommands,
	"workers.applied_twice_ids": feedCommands,
	"workers.stale":             feedCommands,
	"workers.duplicates":        feedCommands,
	"workers.expired":           feedCommands,
	"workers.acked_ok":          feedCommands,
	"workers.acked_full":        feedCommands,
	"workers.max_attempt":       feedCommands,
	"workers.connects":          0,
	"workers.connect_attempts":  0,
	"workers.reconnects":        0,
	"workers.connections_lost":  0,
	"workers.malformed":         0,
	"workers.crashes":           0,
	"workers.refused":           feedCommands,
	"workers.gateway_dropped":   0,            // syncs and their replies are always sent
	"workers.link_lost":         0,            // syncs and heartbeats cross the link too
	"gateways.*":                feedCommands, // wills and lost sessions too: 0 without gateways
	"workers.sync_sent":         0,
	"workers.sync_ok":           0,
	"workers.sync_full":         0,
	"workers.sync_timeouts":     0,
	"workers.mailbox.*":         feedCommands, // a worker's mailbox holds commands
	"workers.mailbox.capacity":  0,
	"workers.mailbox.policy":    0,

	"leader.mailbox.*":          0, // syncs on every connect
	"leader.requests_received":  0,
	"leader.requests_served":    0,
	"leader.telemetry_received": feedTelemetry,
	"leader.telemetry_served":   feedTelemetry,
	"leader.answered_full":      0,
	"leader.malformed":          0,
	"leader.reconnects":         0,
	"leader.ask_rtt.*":          feedCommands,
	"leader.asks_sent":          feedCommands,
	"leader.asks_timed_out":     feedCommands,

	"heartbeats.*":      feedHeartbeats,
	"heartbeats.rounds": 0, // the leader's cadence ticks without heartbeats

	"relay.*":          feedCommands,
	"relay.partitions": 0,
	// The limits stay at the configured ones without commands: not 0.
	"relay.limit.initial": 0,
	"relay.limit.min":     0,
	"relay.limit.max":     0,
	"relay.limit.final":   0,

	"outbox.*":    feedCommands,
	"commands.*":  feedCommands,
	"telemetry.*": feedTelemetry,
	"deploys.*":   feedCommands,

	"events.*": 0, // the timeline's own: when, and how many workers

	"windows[].from":               0,
	"windows[].to":                 0,
	"windows[].leader.*":           0,
	"windows[].relay.*":            feedCommands,
	"windows[].workers.connects":   0,
	"windows[].workers.sync_sent":  0,
	"windows[].workers.sync_ok":    0,
	"windows[].workers.sync_full":  0,
	"windows[].workers.acked_full": feedCommands,
}

// fedByName returns what feeds the name at path ("relay.retries",
// "deploys[].delivered"), and whether fedBy decides it.
func fedByName(path string) (feed, bool) {
	if f, ok := fedBy[path]; ok {
		return f, true
	}
	for p := path; p != ""; p = parent(p) {
		if f, ok := fedBy[strings.TrimSuffix(p, "[]")+".*"]; ok {
			return f, true
		}
	}
	return 0, false
}

// feeds is what s sends over its run.
func (s *Scenario) feeds() feed {
	var f feed
	for _, ev := range s.Timeline {
		if ev.Deploy != nil || ev.Poison != nil {
			f |= feedCommands
		}
		if ev.HeartbeatStorm != nil {
			f |= feedHeartbeats
		}
	}
	profiles := []*WorkerProfile{&s.Fleet.Worker}
	for i := range s.Fleet.Groups {
		profiles = append(profiles, &s.Fleet.Groups[i].WorkerProfile)
	}
	for _, p := range profiles {
		if p.Telemetry != nil && *p.Telemetry > 0 {
			f |= feedTelemetry
		}
		if p.Heartbeat != nil && *p.Heartbeat > 0 {
			f |= feedHeartbeats
		}
	}
	return f
}

// feedNames describe each feed: what it is, and what a scenario lacks
// without it.
var feedNames = []struct {
	feed        feed
	name, ifNot string
}{
	{feedCommands, "commands", "no deploy or poison event"},
	{feedTelemetry, "telemetry", "no telemetry interval"},
	{feedHeartbeats, "heartbeats", "no heartbeat interval or heartbeat_storm event"},
}

// vacuousMessage says why a check cannot depend on the run of a
// scenario that sends sent: every name it reads (v, worked out once per
// text by vacuityOf) counts something the scenario never sends (fedBy),
// so each stays 0 and the outcome is known before the run. It returns ""
// when the check reads a name the scenario can change.
func vacuousMessage(sent feed, text string, v vacuity) string {
	if len(v.paths) == 0 {
		return ""
	}
	var need feed
	var texts []string
	for i, p := range v.paths {
		f, ok := fedByName(p)
		if !ok || f == 0 || f&sent != 0 {
			return ""
		}
		need |= f
		if t := v.written[i]; !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	var kinds, lacks []string
	for _, fn := range feedNames {
		if need&fn.feed != 0 {
			kinds = append(kinds, fn.name)
			lacks = append(lacks, fn.ifNot)
		}
	}
	sends := "no " + kinds[0]
	switch len(kinds) {
	case 2:
		sends = "neither"
	case 3:
		sends = "none of them"
	}
	var outcome string
	switch v.outcome {
	case result.Pass:
		outcome = "it cannot fail"
	case result.Fail:
		outcome = "it cannot pass"
	default:
		outcome = "it is never judged"
	}
	return fmt.Sprintf("check %q reads only %s (%s), and this scenario sends %s (%s): %s",
		strings.TrimSpace(text), wording.List(texts), wording.List(kinds), sends, strings.Join(lacks, ", "), outcome)
}

// inputsOnlyMessage says why a check that reads nothing but the scenario's
// own inputs (the fleet's size, what the timeline sends and when, the
// leader restarts it orders) cannot tell a working mechanism from a
// broken one, or returns "" when it reads a name the run measures.
func inputsOnlyMessage(text string) string {
	written, paths := expect.Reads(text)
	if len(paths) == 0 {
		return ""
	}
	var texts []string
	for i, p := range paths {
		m, ok := result.Lookup(strings.ReplaceAll(p, "[]", "[*]"))
		if !ok {
			m, ok = result.Lookup(p + "[*]")
		}
		if !ok || m.Kind != result.Input {
			return ""
		}
		if t := written[i]; !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	return fmt.Sprintf("check %q reads only %s, which the scenario file sets whatever the code does: it cannot tell a working mechanism from a broken one; compare with a name the run measures (as in outbox.dead_letters == 3 * events[\"poison\"].workers)",
		strings.TrimSpace(text), wording.List(texts))
}
