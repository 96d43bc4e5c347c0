package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestRemoteOverMQTT attaches a Remote to a running fleet (broker, leader
// on bbolt, workers over MQTT sessions) through the broker's TCP
// listener, as 'sim dash' attaches to a leader process: it sees the
// workers online, the leader's mailbox capacity and the relay's limits,
// the deploy and the workers at its version, and then the fleet going
// away: the workers offline and the leader down.
func TestRemoteOverMQTT(t *testing.T) {
	const n = 6
	f := fleettest.StartFleet(t, n, fleettest.Options{
		TCPAddr: "127.0.0.1:0",
		Leader:  leader.Config{Mailbox: mailbox.Options{Capacity: 37}, HeartbeatInterval: 50 * time.Millisecond},
		Outbox:  outbox.Options{Partitions: 3},
		Worker:  worker.Config{Heartbeat: 100 * time.Millisecond},
	})
	f.WaitOnline(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		f.Leader.PublishStats(ctx, 50*time.Millisecond)
	}()
	stopPub := func() { cancel(); <-pubDone }
	defer stopPub()

	r, err := DialRemote(ctx, RemoteOptions{Broker: "tcp://" + f.Broker.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	var l result.Live
	fleettest.Eventually(t, 20*time.Second, "every worker online and two reports", func() error {
		l = r.Snapshot()
		on := countState(l.Workers, result.StateOnline)
		return fleettest.Unless(len(l.Workers) == n && on == n && len(l.History) >= 2,
			"%d workers seen, %d online, %d reports", len(l.Workers), on, len(l.History))
	})
	s := l.Latest
	want := f.Leader.Stats().Relay.Partitions
	if !s.LeaderUp || s.LeaderCapacity != 37 || len(s.Limits) != 3 || s.Online != n {
		t.Fatalf("latest sample %+v; want the leader up, capacity 37, 3 limits, %d online", s, n)
	}
	for i, v := range s.Limits {
		if v != want[i].Limit {
			t.Errorf("partition %d: limit %d, the leader says %d", i, v, want[i].Limit)
		}
	}
	if l.Phase != PhaseRemote || l.Scenario != "remote: tcp://"+f.Broker.Addr() || l.Next != "" {
		t.Errorf("phase %q, scenario %q, next %q", l.Phase, l.Scenario, l.Next)
	}

	if _, err := f.Leader.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: f.IDs()}); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 20*time.Second, "the deploy and every worker at 2.0.0", func() error {
		l = r.Snapshot()
		return fleettest.Unless(l.Target == "2.0.0" && l.Latest.AtTarget == n, "target %q, %d at it", l.Target, l.Latest.AtTarget)
	})
	if !hasRecord(l.Records, "deploy 2.0.0") {
		t.Errorf("no deploy record in %+v", l.Records)
	}

	stopPub()
	f.Stop(t) // workers first (their offline statuses), then the leader's goodbye
	fleettest.Eventually(t, 20*time.Second, "every worker offline and the leader down", func() error {
		l = r.Snapshot()
		off := countState(l.Workers, result.StateOffline)
		return fleettest.Unless(off == n && !l.Latest.LeaderUp, "%d of %d offline, leader up %v", off, n, l.Latest.LeaderUp)
	})
	if !hasRecord(l.Records, "leader offline") {
		t.Errorf("no leader offline record in %+v", l.Records)
	}
	if r.Malformed() != 0 {
		t.Errorf("%d malformed messages", r.Malformed())
	}
}

// TestDialRemoteUnreachable: nothing listening is an error naming the
// broker, not a hang.
func TestDialRemoteUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := DialRemote(ctx, RemoteOptions{Broker: "tcp://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "tcp://127.0.0.1:1") {
		t.Fatalf("err = %v; want an error naming the broker", err)
	}
}

func countState(ws []result.WorkerState, s result.WorkerState) int {
	n := 0
	for _, w := range ws {
		if w == s {
			n++
		}
	}
	return n
}

func hasRecord(recs []result.Record, text string) bool {
	return slices.ContainsFunc(recs, func(r result.Record) bool { return strings.Contains(r.Text, text) })
}

// fakeConn is a connection that stays up.
type fakeConn struct{ lost chan struct{} }

func (c fakeConn) Lost() <-chan struct{}      { return c.lost }
func (fakeConn) Err() error                   { return nil }
func (fakeConn) Close(bool)                   {}
func (fakeConn) Redial(context.Context) error { return nil }
func (fakeConn) Closed() bool                 { return false }
func (fakeConn) Publish(context.Context, string, byte, bool, []byte) error {
	return nil
}

// remoteFixture is a Remote fed by hand, on a fake clock: 60 workers (a
// tenth offline), the leader online, a report every 2 s for a minute with
// the limits moving, a deploy at 30 s.
func remoteFixture(t *testing.T) *Remote {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := newRemote(RemoteOptions{Broker: "tcp://leader.example:1883", Clock: clk}, fakeConn{make(chan struct{})}, "sim-dash-test")
	for i := range 60 {
		st := "online e1"
		if i%10 == 9 {
			st = "offline e1"
		}
		r.onStatus(fmt.Sprintf("fleet/w-%03d/status", i), []byte(st))
	}
	r.onStatus("fleet/_leader/status", []byte("online")) // the wildcard's catch: not a worker
	r.onLeaderStatus("fleet/_leader/status", []byte("online"))
	for k := range 30 {
		clk.Advance(2 * time.Second)
		var rep leader.StatsReport
		rep.At = clk.Now()
		rep.Stats.Mailbox = mailbox.Stats{Capacity: 1000, Depth: (k * 37) % 900, Offered: uint64(k * 600), RejectedFull: uint64(k * 8)}
		rep.MailboxWaitP99 = time.Duration(k%5) * 100 * time.Millisecond
		for p := range 4 {
			rep.Stats.Relay.Partitions = append(rep.Stats.Relay.Partitions, outbox.PartitionStats{
				Limit: sawtooth(k*4, p), InFlight: 5 + p, Delivered: uint64(k * 60), Backpressure: uint64(k / 3),
			})
		}
		rep.Stats.Outbox = outbox.Stats{Depth: 100 + k*10, OldestAge: 1500 * time.Millisecond}
		rep.Fleet = leader.FleetSummary{Online: 54, Offline: 6, ByVersion: map[string]int{"1.0.0": 54 - k, "2.0.0": k}}
		if k >= 15 {
			rep.Deploys = []leader.DeploySummary{{Version: "2.0.0", Kind: "firmware", Targets: 60, Waves: 3}}
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		r.onStats("fleet/_leader/stats", b)
	}
	clk.Advance(500 * time.Millisecond)
	return r
}

// TestRemoteSnapshot checks what the fixture maps to, field by field.
func TestRemoteSnapshot(t *testing.T) {
	r := remoteFixture(t)
	l := r.Snapshot()
	if len(l.Workers) != 60 || countState(l.Workers, result.StateOnline) != 54 {
		t.Fatalf("%d workers, %d online; want 60 and 54", len(l.Workers), countState(l.Workers, result.StateOnline))
	}
	s := l.Latest
	if s.T != 60 || l.Now != 60.5 || !s.LeaderUp || s.LeaderCapacity != 1000 || s.Online != 54 || s.AtTarget != 29 || l.Target != "2.0.0" {
		t.Errorf("latest %+v now %v target %q", s, l.Now, l.Target)
	}
	if len(l.History) != 30 || s.LeaderRejected != 29*8 || s.Delivered != 4*29*60 || s.InFlight != 5+6+7+8 {
		t.Errorf("history %d, rejected %d, delivered %d, in-flight %d", len(l.History), s.LeaderRejected, s.Delivered, s.InFlight)
	}
	if s.LeaderWaitP99 != 0.4 {
		t.Errorf("wait p99 %v, want 0.4", s.LeaderWaitP99)
	}
	if r.Malformed() != 0 {
		t.Errorf("%d malformed", r.Malformed())
	}
	r.onStatus("fleet/w-000/status", []byte("maybe"))
	r.onStats("fleet/_leader/stats", []byte("{"))
	if r.Malformed() != 2 || !hasRecord(r.Snapshot().Records, "malformed") {
		t.Errorf("malformed %d; want 2 counted and a warning", r.Malformed())
	}
}

// TestRemoteStale: a leader that stops reporting without a goodbye (a
// killed process leaves its retained "online") is shown down after
// StaleAfter, and up again with the next report.
func TestRemoteStale(t *testing.T) {
	r := remoteFixture(t)
	clk := r.o.Clock.(*clock.Fake)
	clk.Advance(9 * time.Second) // 9.5 s since the last report
	if l := r.Snapshot(); !l.Latest.LeaderUp {
		t.Fatal("down before StaleAfter")
	}
	clk.Advance(time.Second)
	l := r.Snapshot()
	if l.Latest.LeaderUp || !hasRecord(l.Records, "no stats from the leader") {
		t.Fatalf("up %v after 10.5 s of silence; records %+v", l.Latest.LeaderUp, l.Records)
	}
	b, _ := json.Marshal(leader.StatsReport{Stats: leader.Stats{Mailbox: mailbox.Stats{Capacity: 5}}})
	r.onStats("fleet/_leader/stats", b)
	if l := r.Snapshot(); !l.Latest.LeaderUp || l.Latest.LeaderCapacity != 5 {
		t.Errorf("not up again after a report: %+v", l.Latest)
	}
	r.onLeaderStatus("fleet/_leader/status", []byte("offline"))
	if l := r.Snapshot(); l.Latest.LeaderUp {
		t.Error("up while its status says offline")
	}
}

// TestGoldenRemote is the dashboard over a remote leader, read-only.
func TestGoldenRemote(t *testing.T) {
	live := remoteFixture(t).Snapshot()
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := screen(t, live, nil, sz[0], sz[1])
			out := m.View()
			for _, want := range []string{"remote: tcp://leader.example:1883", "read-only"} {
				if !strings.Contains(out, want) {
					t.Errorf("screen lacks %q:\n%s", want, out)
				}
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// TestRemoteKeysDisabled: a run key on a remote view changes nothing and
// says why.
func TestRemoteKeysDisabled(t *testing.T) {
	m := screen(t, remoteFixture(t).Snapshot(), nil, 80, 24)
	var tm tea.Model = m
	tm, _ = tm.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'k'}})
	tm, _ = tm.Update(tickMsg{})
	if out := tm.View(); !strings.Contains(out, "read-only") {
		t.Errorf("no read-only marker after k:\n%s", out)
	}
}

// A remote dashboard says only what the leader's stats and the statuses
// carry: no busy, full or updated counts; the workers at the target from
// the latest stats; the wait as a mean (no buckets on the wire).
func TestRemoteSaysWhatItKnows(t *testing.T) {
	r := remoteFixture(t)
	l := r.Snapshot()
	if l.AtTarget != 29 {
		t.Errorf("at target %d, want the latest stats' 29", l.AtTarget)
	}
	m := screen(t, l, nil, 120, 36)
	fleet := strings.Join(paneLines(t, m, "Fleet"), "\n")
	for _, bad := range []string{"updated", "busy", "full"} {
		if strings.Contains(fleet, bad) {
			t.Errorf("the remote fleet pane counts %q, which statuses do not say:\n%s", bad, fleet)
		}
	}
	if !strings.Contains(fleet, "target 2.0.0: 29 of 60 run it") {
		t.Errorf("fleet pane:\n%s", fleet)
	}
	if leaderPane := strings.Join(paneLines(t, m, "Leader"), "\n"); strings.Contains(leaderPane, "p99") || !strings.Contains(leaderPane, "wait avg") {
		t.Errorf("leader pane names a p99 it cannot know:\n%s", leaderPane)
	}
	// The deploy's acks run ahead of the heartbeats' count by version:
	// the fresher of the two is shown, as soon as a report carries it.
	rep := leader.StatsReport{Fleet: leader.FleetSummary{ByVersion: map[string]int{"2.0.0": 29}},
		Deploys: []leader.DeploySummary{{Version: "2.0.0", Targets: 60, Waves: 2, Totals: leader.WaveProgress{Delivered: 42}}}}
	b, _ := json.Marshal(rep)
	r.onStats("fleet/_leader/stats", b)
	if l := r.Snapshot(); l.AtTarget != 42 || l.Latest.AtTarget != 42 {
		t.Errorf("at target %d (latest sample %d) after 42 acks, want 42", l.AtTarget, l.Latest.AtTarget)
	}
}

// While the leader is down, a remote adds a sample every second, so the
// charts show the outage, and Latest has no gauges of a leader that is
// not there.
func TestRemoteDownSamples(t *testing.T) {
	r := remoteFixture(t)
	clk := r.o.Clock.(*clock.Fake)
	r.onLeaderStatus("fleet/_leader/status", []byte("offline"))
	n := len(r.Snapshot().History)
	for range 5 {
		clk.Advance(time.Second)
		r.Snapshot()
	}
	l := r.Snapshot()
	if len(l.History) != n+5 || l.History[len(l.History)-1].LeaderUp {
		t.Fatalf("history %d → %d samples, newest up %v; want 5 down samples more", n, len(l.History), l.History[len(l.History)-1].LeaderUp)
	}
	if l.Latest.LeaderCapacity != 0 || l.Latest.LeaderRejected == 0 {
		t.Errorf("latest while down: %+v; want no gauges, the counters kept", l.Latest)
	}
	m := screen(t, l, nil, 120, 36)
	if out := strings.Join(lines(m), "\n"); !strings.Contains(out, "LEADER DOWN") || strings.Contains(out, "mailbox    0/") {
		t.Errorf("the view of a leader that is down:\n%s", out)
	}
}
