package runner

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestRunRebootDuringDeploy: workers reboot while the leader waits for
// their acks (a 2 s round trip) in two deploys, and half of them while
// cut off with telemetry waiting in their local outboxes. The acks die
// with the RAM, so the leader delivers again; the workers' flash
// remembers what they applied, so each applies each version exactly
// once. The telemetry a reboot loses is counted, and nothing is lost.
func TestRunRebootDuringDeploy(t *testing.T) {
	sc, err := scenario.Parse("reboots.yaml", []byte(`
name: reboots
duration: 30s
speed: 20
drain: 60s
fleet:
  count: 20
  worker:
    service: 100us
    rtt: 2s
    keepalive: 2s
    heartbeat: 2s
    telemetry: 500ms
    ask_timeout: 1s
    reconnect: {base: 500ms, cap: 2s}
leader:
  outbox: {durability: none}
  relay: {backoff: {base: 100ms, cap: 2s}}
timeline:
  - {at: 0.5s, partition: {workers: 10-19}}
  - {at: 1s, deploy: {version: 2.0.0}}
  - {at: 1.5s, name: first, reboot: {workers: all}}
  - {at: 6s, heal: {workers: 10-19}}
  - {at: 14s, deploy: {version: 3.0.0}}
  - {at: 14.5s, name: second, reboot: {workers: 0-9}}
expect:
  - lost == 0
  - workers.applied_twice == 0
`))
	if err != nil {
		t.Fatal(err)
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	// Delivered counts the workers that applied a deploy's version at
	// least once; applies beyond their sum are a version applied twice.
	delivered := 0
	for _, d := range r.Deploys {
		delivered += d.Delivered
	}
	if r.Workers.Applied != uint64(delivered) || r.Workers.AppliedTwice != 0 || len(r.Workers.AppliedTwiceIDs) != 0 || r.Workers.AtVersion["3.0.0"] != 20 {
		t.Errorf("applied %d for %d deliveries, applied twice %d %v, at 3.0.0 %d of 20",
			r.Workers.Applied, delivered, r.Workers.AppliedTwice, r.Workers.AppliedTwiceIDs, r.Workers.AtVersion["3.0.0"])
	}
	if !rtKeptUp(t, rep) {
		return // a slow run may deliver 3.0.0 before 2.0.0 reached a worker, or no deploy before a reboot
	}
	// Each of the 20 applied each of the 2 versions: exactly once each.
	for _, d := range r.Deploys {
		if d.Delivered != 20 {
			t.Errorf("deploy %s: %d of 20 workers applied it", d.Version, d.Delivered)
		}
	}
	if r.Workers.Duplicates == 0 {
		t.Error("no redelivery deduplicated: the reboots did not catch an ack on its way, so the test proves nothing")
	}
	if r.Telemetry.LostInReboot == 0 {
		t.Error("no telemetry lost in a reboot: the cut-off workers had nothing stored, so the test proves nothing")
	}
	if e := r.Events; len(e) != 2 || e["first"].Workers != 20 || e["second"].Workers != 10 {
		t.Errorf("events %+v, want first: 20 workers, second: 10", e)
	}
}

// TestRunRebootLosesMailbox: a config server reboots with download jobs
// it had acked waiting in its mailbox. They are gone — the leader settled
// them as delivered — and counted (commands.lost_in_reboot), so the
// ledgers still balance, and an expectation on them can fail.
func TestRunRebootLosesMailbox(t *testing.T) {
	sc, err := scenario.Parse("reboot-mailbox.yaml", []byte(`
name: reboot-mailbox
duration: 10s
speed: 20
fleet:
  count: 20
  groups:
    - {name: servers, count: 1, mailbox: {capacity: 32}, service: 2s}
leader:
  outbox: {durability: none}
timeline:
  - at: 1s
    deploy: {version: 2.0.0, workers: "group:default", via: "group:servers"}
  - {at: 3s, reboot: {workers: "group:servers"}}
expect:
  - commands.lost_in_reboot == 0
`))
	if err != nil {
		t.Fatal(err)
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	c := rep.Result.Commands
	if c.LostInReboot == 0 {
		t.Fatal("no command lost in the reboot: the server's mailbox was empty")
	}
	if v := rep.Verdicts[0]; v.Status != result.Fail {
		t.Errorf("commands.lost_in_reboot == 0 %s with %d lost in the reboot", v.Status, c.LostInReboot)
	}
	if at := rep.Result.Workers.AtVersion["2.0.0"]; at != 19 {
		t.Errorf("%d of 19 at 2.0.0: the updates themselves went to the other workers", at)
	}
}
