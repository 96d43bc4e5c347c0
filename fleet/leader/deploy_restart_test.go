package leader_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// frozenRecords is a store whose records stop changing once frozen: the
// saves of a leader killed before it could make them.
type frozenRecords struct {
	outbox.Store
	frozen atomic.Bool
}

func (f *frozenRecords) PutRecords(ctx context.Context, rs ...outbox.Record) error {
	if f.frozen.Load() {
		return errors.New("killed")
	}
	return f.Store.PutRecords(ctx, rs...)
}

// TestDeployProgressSurvivesRestart: a leader's deploy progress is in its
// outbox, so the next leader on the same outbox shows the deploy, goes on
// counting it, and numbers its own deploys after it. The first leader
// saved the progress before the first worker's ack and was killed before
// it could save again: the update that left the queue meanwhile counts as
// delivered.
func TestDeployProgressSurvivesRestart(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	st := &frozenRecords{Store: mem}
	ctx := context.Background()

	first := startOnStore(t, clk, st)
	// Both workers are away, so the deploy's updates wait parked: sent
	// before the minute below, w-1's ask would time out in it and its
	// retry be due only after it.
	first.status("w-1", "offline a")
	first.status("w-2", "offline b")
	if _, err := first.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2"}, WaveSize: 1}); err != nil {
		t.Fatal(err)
	}
	fleettest.Advance(t, clk, time.Minute, "the progress tick")
	fleettest.Eventually(t, 10*time.Second, "the deploy saved", func() error {
		rs, err := mem.ListRecords(ctx, "")
		return fleettest.Unless(err == nil && len(rs) == 1, "records %v, %v", rs, err)
	})
	st.frozen.Store(true)
	first.status("w-1", "online a2") // wakes its parked update
	first.answer(t, first.sent, "w-1", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "w-1 acked", first.acked(1))
	first.stop(t)

	second := startOnStore(t, clk, st)
	ds := second.l.Deploys()
	if len(ds) != 1 || ds[0].Index != 0 || ds[0].Version != "2.0.0" || ds[0].Delivered() != 1 || ds[0].Pending() != 1 {
		t.Fatalf("after the restart the leader shows %+v; want deploy 0 of 2.0.0, 1 delivered (acked after the last save), 1 pending", ds)
	}
	st.frozen.Store(false)
	second.status("w-2", "online b2")
	second.answer(t, second.sent, "w-2", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "the deploy finished by the second leader", func() error {
		d, _ := second.l.Progress(0)
		return fleettest.Unless(d.Delivered() == 2 && !d.Waves[1].Done.IsZero(), "%+v", d)
	})
	if i, err := second.l.Deploy(ctx, leader.DeployPlan{Version: "3.0.0", Workers: []string{"w-1"}}); err != nil || i != 1 {
		t.Fatalf("the second leader's first deploy: index %d, %v; want 1", i, err)
	}
}

// storeRig is a leader on a given store, stopped by stop or at cleanup.
type storeRig struct {
	*rig
	sent chan sent
	stop func(t *testing.T)
}

func startOnStore(t *testing.T, clk *clock.Fake, st outbox.Store) storeRig {
	t.Helper()
	r := &rig{clk: clk, link: &fakeLink{handlers: map[string]func(string, []byte){}, out: make(chan wire.Envelope, 8)}}
	ch := make(chan sent, 8)
	var err error
	r.l, err = leader.New(leader.Config{Link: &sentLink{r.link, ch}, Store: st, Clock: clk, HeartbeatInterval: time.Hour,
		ProgressEvery: time.Minute, Relay: outbox.RelayOptions{Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.l.Run(ctx) }()
	stopped := false
	stop := func(t *testing.T) {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("leader: %v", err)
		}
	}
	t.Cleanup(func() { stop(t) })
	fleettest.Eventually(t, 10*time.Second, "leader subscribed", func() error {
		return fleettest.Unless(r.link.handler(r.tp.AllStatus()) != nil, "not subscribed yet")
	})
	return storeRig{rig: r, sent: ch, stop: stop}
}
