package leader_test

import (
	"encoding/json"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// TestStatsReportJSON: the report a remote dashboard reads has the
// documented keys, survives a JSON round trip with the numbers it reads,
// and leaves the limit histories out.
func TestStatsReportJSON(t *testing.T) {
	r := startLeader(t, leader.Config{Mailbox: mailbox.Options{Capacity: 7}})
	r.status("w-1", "online e1")
	r.status("w-2", "offline e9")
	rep := r.l.StatsReport()
	if !rep.At.Equal(r.clk.Now()) {
		t.Errorf("At = %v, want the leader's clock %v", rep.At, r.clk.Now())
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"at", "stats", "mailbox_wait_p99", "fleet", "deploys"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	var got leader.StatsReport
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Fleet.Online != 1 || got.Fleet.Offline != 1 {
		t.Errorf("fleet %+v, want 1 online and 1 offline", got.Fleet)
	}
	if got.Stats.Mailbox.Capacity != 7 {
		t.Errorf("mailbox capacity %d, want 7", got.Stats.Mailbox.Capacity)
	}
	parts := got.Stats.Relay.Partitions
	if len(parts) == 0 {
		t.Fatal("no relay partitions in the report")
	}
	for i, p := range parts {
		if p.Limit <= 0 || p.LimitHistory != nil {
			t.Errorf("partition %d: limit %d, history %v; want a limit and no history", i, p.Limit, p.LimitHistory)
		}
	}
}
