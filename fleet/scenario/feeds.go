package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/internal/wording"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// feedsOf returns what a run must send for the name at path to count
// anything ("relay.retries", "deploys[].delivered", "workers.at_version"):
// the registry's Feeds (result.Metric). A struct or a collection read
// whole counts when any of its metrics does: the union of their feeds, 0
// if one of them counts without any. ok is false for a path the registry
// does not reach.
func feedsOf(path string) (f result.Feed, ok bool) {
	pattern := strings.ReplaceAll(path, "[]", "[*]")
	for _, p := range []string{pattern, pattern + "[*]"} {
		if m, ok := result.Lookup(p); ok {
			return m.Feeds, true
		}
	}
	for _, m := range result.Metrics() {
		if !strings.HasPrefix(m.Name, pattern+".") && !strings.HasPrefix(m.Name, pattern+"[*]") {
			continue
		}
		if m.Feeds == 0 {
			return 0, true
		}
		f, ok = f|m.Feeds, true
	}
	return f, ok
}

// feeds is what s sends over its run. A jobs event sends job commands
// when some workers push (their share goes through the relay), and
// pulling workers send job requests (the scenario's validation refuses
// them without a jobs event, so they always have jobs to ask for).
func (s *Scenario) feeds() result.Feed {
	var f result.Feed
	pullers, _ := s.Pullers()
	for _, ev := range s.Timeline {
		if ev.Deploy != nil || ev.Poison != nil {
			f |= result.FeedCommands
		}
		if ev.HeartbeatStorm != nil {
			f |= result.FeedHeartbeats
		}
		if ev.Jobs != nil {
			f |= result.FeedJobs
			if pullers < s.Fleet.Count {
				f |= result.FeedCommands
			}
		}
	}
	if pullers > 0 {
		f |= result.FeedJobRequests
	}
	profiles := []*WorkerProfile{&s.Fleet.Worker}
	for i := range s.Fleet.Groups {
		profiles = append(profiles, &s.Fleet.Groups[i].WorkerProfile)
	}
	for _, p := range profiles {
		if p.Telemetry != nil && *p.Telemetry > 0 {
			f |= result.FeedTelemetry
		}
		if p.Heartbeat != nil && *p.Heartbeat > 0 {
			f |= result.FeedHeartbeats
		}
	}
	return f
}

// lacks says, for each feed, what a scenario that does not send it
// lacks.
var lacks = map[result.Feed]string{
	result.FeedCommands:    "no deploy or poison event or pushed jobs",
	result.FeedTelemetry:   "no telemetry interval",
	result.FeedHeartbeats:  "no heartbeat interval or heartbeat_storm event",
	result.FeedJobs:        "no jobs event",
	result.FeedJobRequests: "no pulling workers",
}

// vacuousMessage says why a check cannot depend on the run of a
// scenario that sends sent: every name it reads (v, worked out once per
// text by vacuityOf) counts something the scenario never sends (the
// registry's result.Metric.Feeds),
// so each stays 0 and the outcome is known before the run. It returns ""
// when the check reads a name the scenario can change.
func vacuousMessage(sent result.Feed, text string, v vacuity) string {
	if len(v.paths) == 0 {
		return ""
	}
	var need result.Feed
	var texts []string
	for i, p := range v.paths {
		f, ok := feedsOf(p)
		if !ok || f == 0 || f&sent != 0 {
			return ""
		}
		need |= f
		if t := v.written[i]; !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	var kinds, lacking []string
	for _, f := range result.Feeds {
		if need&f != 0 {
			kinds = append(kinds, f.String())
			lacking = append(lacking, lacks[f])
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
		strings.TrimSpace(text), wording.List(texts), wording.List(kinds), sends, strings.Join(lacking, ", "), outcome)
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
