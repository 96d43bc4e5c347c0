package leader_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// ackSent answers command c as its worker would.
func (r *rig) ackSent(t *testing.T, c sent, ack wire.Envelope) {
	t.Helper()
	ack.Kind, ack.Ref = wire.KindAck, c.env.ID
	b, err := wire.Encode(ack)
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(c.worker), b)
}

// reconnect takes each worker offline and back: its online wakes its
// relay partition, which meets whatever is due for it.
func (r *rig) reconnect(workers ...string) {
	for _, w := range workers {
		r.status(w, "offline r-"+w)
		r.status(w, "online r2-"+w)
	}
}

// noneSent fails if the leader published a command.
func noneSent(t *testing.T, cmds chan sent, what string) {
	t.Helper()
	select {
	case c := <-cmds:
		t.Fatalf("%s: a command went to %s", what, c.worker)
	default:
	}
}

// TestCancelDeploy: a deploy cancelled while its first wave is out for
// delivery and its second waits sends nothing more: the second wave's
// updates are withdrawn, the first wave's finish (one acked, counted
// delivered; one answered full, dropped and counted cancelled, not
// retried); and a leader restarted on the outbox shows it cancelled and
// does not send it either, and still knows which request started it.
func TestCancelDeploy(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first := startOnStore(t, clk, mem)
	for _, w := range []string{"w-1", "w-2", "w-3", "w-4"} {
		first.status(w, "offline a-"+w)
	}
	plan := leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2", "w-3", "w-4"}, WaveSize: 2, WaveInterval: time.Minute, Request: "r-1"}
	if _, err := first.l.Deploy(ctx, plan); err != nil {
		t.Fatal(err)
	}
	first.status("w-1", "online b-w-1")
	first.status("w-2", "online b-w-2")
	inFlight := map[string]sent{}
	for range 2 {
		c := fleettest.Receive(t, 10*time.Second, "wave 0's updates", first.sent, first.seen)
		inFlight[c.worker] = c
	}

	res, err := first.l.Cancel(ctx, 0)
	if err != nil || res.Withdrawn != 2 || res.InFlight != 2 || res.Again || res.Finished {
		t.Fatalf("cancel: %+v, %v; want wave 1's 2 updates withdrawn, wave 0's 2 in flight", res, err)
	}
	first.ackSent(t, inFlight["w-1"], wire.Envelope{Result: wire.ResultOK})
	first.ackSent(t, inFlight["w-2"], wire.Envelope{Result: wire.ResultFull, RetryAfterMs: 1})
	fleettest.Eventually(t, 10*time.Second, "wave 0 settled", func() error {
		s := mem.Stats()
		return fleettest.Unless(s.Acked == 1 && s.Leased == 0, "outbox %+v", s)
	})
	fleettest.Advance(t, clk, time.Minute, "the progress tick, and wave 1 due")
	first.reconnect("w-1", "w-2", "w-3", "w-4")
	// Four withdrawing versions: two replaced wave 1's updates in place,
	// two queued behind wave 0's (the one handed back was dropped for it).
	fleettest.Eventually(t, 10*time.Second, "every withdrawing version dropped unsent", func() error {
		s := mem.Stats()
		return fleettest.Unless(s.Depth == 0 && s.Expired == 4 && s.Overwritten == 3, "outbox %+v", s)
	})
	noneSent(t, first.sent, "after the cancel")
	fleettest.Advance(t, clk, time.Minute, "the progress tick")
	want := func(r *rig, what string) {
		t.Helper()
		fleettest.Eventually(t, 10*time.Second, what, func() error {
			d, _ := r.l.Progress(0)
			ok := d.Cancelled && d.Pending() == 0 && d.Delivered() == 1 && d.Waves[0].Cancelled == 1 && d.Waves[1].Cancelled == 2
			return fleettest.Unless(ok, "cancelled %v, wave 0: %s; wave 1: %s", d.Cancelled, wave(d.Waves[0]), wave(d.Waves[1]))
		})
	}
	want(first.rig, "w-1 delivered, the other three cancelled")
	first.stop(t)

	second := startOnStore(t, clk, mem)
	want(second.rig, "the cancel after a restart")
	if d, ok := second.l.DeployFor("r-1"); !ok || d.Index != 0 {
		t.Errorf("after a restart, the deploy of request r-1: %+v, %v; want deploy 0 (a copy of the request must not start another)", d, ok)
	}
	fleettest.Advance(t, clk, time.Minute, "the progress tick")
	second.reconnect("w-1", "w-2", "w-3", "w-4")
	noneSent(t, second.sent, "after the restart")
	if res, err := second.l.Cancel(ctx, 0); err != nil || !res.Finished || !res.Again {
		t.Fatalf("cancel again: %+v, %v; want nothing left to cancel", res, err)
	}
	if _, err := second.l.Cancel(ctx, 7); !errors.Is(err, leader.ErrNoDeploy) {
		t.Fatalf("cancel of a deploy the leader never had: %v, want ErrNoDeploy", err)
	}
}

// TestCancelSurvivesCrash: the withdrawn updates are gone from the
// outbox as soon as Cancel returns, so a leader killed before it could
// save the deploy's record as cancelled does not send them after its
// restart; on either store, whose Overwrite and TTL the withdrawal rests
// on.
func TestCancelSurvivesCrash(t *testing.T) {
	for _, name := range []string{"memory", "bolt"} {
		t.Run(name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			var store outbox.Store
			var err error
			if name == "memory" {
				store, err = outbox.NewMemory(outbox.Options{Clock: clk})
			} else {
				store, err = outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), outbox.Options{Clock: clk, Durability: outbox.None})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			st := &frozenRecords{Store: store}
			ctx := context.Background()
			first := startOnStore(t, clk, st)
			first.status("w-1", "offline a")
			first.status("w-2", "offline b")
			if _, err := first.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2"}, WaveSize: 1, WaveInterval: time.Minute}); err != nil {
				t.Fatal(err)
			}
			st.frozen.Store(true) // killed: nothing the leader writes to its records from here on stays
			if res, err := first.l.Cancel(ctx, 0); err != nil || res.Withdrawn != 2 {
				t.Fatalf("cancel: %+v, %v; want 2 withdrawn", res, err)
			}
			first.stop(t)

			st.frozen.Store(false)
			second := startOnStore(t, clk, st)
			fleettest.Advance(t, clk, time.Minute, "both waves due")
			second.reconnect("w-1", "w-2")
			fleettest.Eventually(t, 10*time.Second, "the withdrawing versions dropped unsent", func() error {
				s := store.Stats()
				return fleettest.Unless(s.Depth == 0 && s.Expired == 2, "outbox %+v", s)
			})
			noneSent(t, second.sent, "after the restart")
		})
	}
}
