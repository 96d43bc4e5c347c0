package fleettest_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// watchLeader subscribes a session of its own to the leader's status and
// returns what arrives, retained first.
func watchLeader(t *testing.T, f *fleettest.Fleet) <-chan string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, transport.ClientOptions{ID: "status-watcher", Broker: "mem://", CleanSession: true}, f.Broker)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(true) })
	ch := make(chan string, 16)
	if err := s.Subscribe(ctx, (wire.Topics{}).LeaderStatus(), 1, func(_ string, p []byte) { ch <- string(p) }); err != nil {
		t.Fatal(err)
	}
	return ch
}

// afterOnline returns the first status other than online. A watcher that
// subscribes while the leader announces itself may see online twice: once
// retained, delivered on subscribing, and once live.
func afterOnline(t *testing.T, what string, status <-chan string) string {
	t.Helper()
	for {
		if got := fleettest.Receive(t, 10*time.Second, what, status, nil); got != wire.StatusOnline {
			return got
		}
	}
}

// serving waits for the leader to answer a request. The broker sends the
// leader, in order, the PUBACK of its online status and then the request:
// answered, the leader has finished announcing itself (cut before, it
// would stop with an error for the announcement).
func serving(t *testing.T, f *fleettest.Fleet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, transport.ClientOptions{ID: "w-x", Broker: "mem://", CleanSession: true}, f.Broker)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(true)
	tp := wire.Topics{}
	replies := make(chan string, 1)
	if err := s.Subscribe(ctx, tp.Down("w-x"), 1, func(_ string, p []byte) { replies <- string(p) }); err != nil {
		t.Fatal(err)
	}
	b, err := wire.Encode(wire.Envelope{ID: "r1", Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: "sync"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(ctx, tp.Up("w-x"), 1, false, b); err != nil {
		t.Fatal(err)
	}
	fleettest.Receive(t, 10*time.Second, "the leader's reply", replies, nil)
}

// TestLeaderWillOnCrash: the leader says online once it serves; when its
// connection dies without a goodbye, its session's last will makes its
// retained status offline. Without the will a dead leader stayed online.
func TestLeaderWillOnCrash(t *testing.T) {
	f := fleettest.StartFleet(t, 1, fleettest.Options{})
	status := watchLeader(t, f)
	if got := fleettest.Receive(t, 10*time.Second, "the leader online", status, nil); got != wire.StatusOnline {
		t.Fatalf("leader status %q, want online", got)
	}
	serving(t, f)
	f.CutLeader()
	if got := afterOnline(t, "the leader's will", status); got != wire.StatusOffline {
		t.Fatalf("after the leader's connection died: %q, want offline", got)
	}
	late := watchLeader(t, f)
	if got := fleettest.Receive(t, 10*time.Second, "the retained status", late, nil); got != wire.StatusOffline {
		t.Fatalf("retained leader status %q, want offline", got)
	}
}

// TestLeaderRestartKeepsDeployProgress: the leader restarts mid-deploy on
// the same outbox; the new leader shows the deploy (index, version,
// targets, what was delivered) from its start, counts the rest of its
// deliveries, and numbers its own deploys after it.
func TestLeaderRestartKeepsDeployProgress(t *testing.T) {
	const n = 30
	o := fleettest.Options{}
	f := fleettest.StartFleet(t, n, o)
	f.WaitOnline(t, n)
	plan := leader.DeployPlan{Version: "2.0.0", Workers: f.IDs(), WaveSize: 10, WaveInterval: 300 * time.Millisecond}
	if _, err := f.Leader.Deploy(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 30*time.Second, "the first wave delivered", func() error {
		d, _ := f.Leader.Progress(0)
		return fleettest.Unless(d.Delivered() >= 10, "%d delivered", d.Delivered())
	})
	f.RestartLeader(t, o)
	ds := f.Leader.Deploys()
	if len(ds) != 1 || ds[0].Index != 0 || ds[0].Version != "2.0.0" || ds[0].Targets != n || ds[0].Delivered() < 10 {
		t.Fatalf("the restarted leader shows %+v; want deploy 0 of 2.0.0 to %d, at least 10 delivered", ds, n)
	}
	if ds[0].Delivered() == n {
		t.Fatalf("the deploy finished before the restart: the test proves nothing")
	}
	f.WaitVersion(t, 60*time.Second, "2.0.0", n)
	fleettest.Eventually(t, 10*time.Second, "the restarted leader counting the deploy to its end", func() error {
		d, _ := f.Leader.Progress(0)
		return fleettest.Unless(d.Delivered() == n && d.Pending() == 0, "%d delivered, %d pending", d.Delivered(), d.Pending())
	})
	if i, err := f.Leader.Deploy(context.Background(), leader.DeployPlan{Version: "2.0.1", Workers: f.IDs()[:1]}); err != nil || i != 1 {
		t.Fatalf("the restarted leader's first deploy: index %d, %v; want 1", i, err)
	}
}
