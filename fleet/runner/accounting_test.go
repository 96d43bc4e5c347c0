package runner

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestDroppedAfterAck: a config server whose mailbox drops its oldest
// command to make room drops commands it had already acked. They are
// counted (commands.dropped_after_ack), close the workers' ledger, and
// an expectation on them can fail.
func TestDroppedAfterAck(t *testing.T) {
	sc, err := scenario.Parse("drops.yaml", []byte(`
name: drops
duration: 10s
speed: 20
fleet:
  count: 20
  groups:
    - {name: servers, count: 1, mailbox: {capacity: 1, policy: drop-oldest}, service: 2s}
timeline:
  - at: 1s
    deploy: {version: 2.0.0, workers: "group:default", via: "group:servers"}
expect:
  - commands.dropped_after_ack == 0
`))
	if err != nil {
		t.Fatal(err)
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	c := rep.Result.Commands
	if c.DroppedAfterAck == 0 {
		t.Fatalf("no command dropped after its ack: the scenario does not overload the server's mailbox")
	}
	if v := rep.Verdicts[0]; v.Status != result.Fail {
		t.Errorf("commands.dropped_after_ack == 0 %s with %d dropped", v.Status, c.DroppedAfterAck)
	}
	if at := rep.Result.Workers.AtVersion["2.0.0"]; at != 19 {
		t.Errorf("%d of 19 at 2.0.0: the updates themselves must not be dropped", at)
	}
}
