package dash

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/leader"
)

// TestRemoteDeployEvents: the leader reports the deploys it keeps, a
// bounded list that drops the oldest and outlives a restart; the remote
// records each deploy once, by its index.
func TestRemoteDeployEvents(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := newRemote(RemoteOptions{Broker: "tcp://leader.example:1883", Clock: clk}, fakeConn{make(chan struct{})}, "sim-dash-test")
	report := func(indexes ...int) {
		var rep leader.StatsReport
		for _, i := range indexes {
			rep.Deploys = append(rep.Deploys, leader.DeploySummary{Index: i, Version: fmt.Sprintf("2.0.%d", i), Kind: "firmware", Targets: 1})
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Second)
		r.onStats("fleet/_leader/stats", b)
	}
	deploys := func() string {
		var got []string
		for _, rec := range r.Snapshot().Records {
			if v, ok := strings.CutPrefix(rec.Text, "deploy "); ok {
				got = append(got, strings.Fields(v)[0])
			}
		}
		return strings.Join(got, " ")
	}
	report(0, 1, 2)
	report(1, 2, 3) // the leader keeps three: 0 dropped, 3 new
	report(1, 2, 3) // restarted on the same outbox: nothing new
	report(0)       // a leader on another outbox
	if got := deploys(); got != "2.0.0 2.0.1 2.0.2 2.0.3 2.0.0" {
		t.Fatalf("deploy events %q, want each deploy once, and the new outbox's first", got)
	}
}

// TestRemoteDeployWording: a deploy's event counts its workers and waves
// in words that agree with the count.
func TestRemoteDeployWording(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := newRemote(RemoteOptions{Broker: "tcp://leader.example:1883", Clock: clk}, fakeConn{make(chan struct{})}, "sim-dash-test")
	rep := leader.StatsReport{Deploys: []leader.DeploySummary{
		{Index: 0, Version: "2.0.0", Kind: "firmware", Targets: 1, Waves: 1},
		{Index: 1, Version: "2.0.1", Kind: "config", Targets: 60, Waves: 3},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	r.onStats("fleet/_leader/stats", b)
	var got []string
	for _, rec := range r.Snapshot().Records {
		if strings.HasPrefix(rec.Text, "deploy ") {
			got = append(got, rec.Text)
		}
	}
	want := []string{"deploy 2.0.0 (firmware) to 1 worker in 1 wave", "deploy 2.0.1 (config) to 60 workers in 3 waves"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("deploy events %q, want %q", got, want)
	}
}
