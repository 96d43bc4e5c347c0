package leader_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// receiveFrom waits for n commands and returns the workers they went to,
// sorted, having acked each from its worker.
func (r *rig) receiveFrom(t *testing.T, n int, what string) []string {
	t.Helper()
	var got []string
	for range n {
		cmd := fleettest.Receive(t, 10*time.Second, what, r.link.out, r.seen)
		w, _, err := r.tp.Parse(r.link.topic(cmd.ID))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w)
		b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
		if err != nil {
			t.Fatal(err)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
	}
	slices.Sort(got)
	return got
}

// quiet checks that the leader has nothing in flight and published nothing
// more: every command it leased has been acked.
func (r *rig) quiet(t *testing.T, acked uint64) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, fmt.Sprintf("%d commands acked", acked), r.acked(acked))
	if s := r.l.Stats().Outbox; s.Leased != 0 {
		t.Fatalf("%d commands in flight, want none", s.Leased)
	}
	select {
	case cmd := <-r.link.out:
		t.Fatalf("published %s to %s besides", cmd.ID, r.link.topic(cmd.ID))
	default:
	}
}

// TestRestartResumesWaves: a leader restarted on the outbox of a deploy
// in waves carries on with the waves as planned. The retained "online" of
// every worker, replayed to it at subscribe, releases nothing due later;
// a command due now waits for its worker's "online" (the restarted leader
// does not know who is connected until it hears), and is sent when it
// comes. The fake clock moves only when the test moves it.
func TestRestartResumesWaves(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	st, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"w-0", "w-1", "w-2", "w-3", "w-4", "w-5"}
	first := runLeader(t, leader.Config{}, clk, clk, st)
	for _, w := range ids {
		first.status(w, "online e1")
	}
	if _, err := first.l.Deploy(context.Background(), leader.DeployPlan{Version: "2.0.0", Workers: ids, WaveSize: 2, WaveInterval: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	first.stop() // before its relay polled: wave 0 is due and unsent

	r := runLeader(t, leader.Config{}, clk, clk, st)
	for _, w := range slices.Backward(ids[2:]) { // the retained statuses, later waves first
		r.status(w, "online e1")
	}
	// Their wakes polled the relay, which found wave 0 due for workers it
	// has not heard from: parked, not sent.
	fleettest.Eventually(t, 10*time.Second, "wave 0 parked", func() error {
		skips := r.l.Stats().Relay.Total().OfflineSkips
		return fleettest.Unless(skips == 2, "%d offline skips; %s", skips, r.seen())
	})
	r.quiet(t, 0)
	r.status("w-1", "online e1")
	r.status("w-0", "online e1")
	if got := r.receiveFrom(t, 2, "wave 0"); !slices.Equal(got, ids[:2]) {
		t.Fatalf("wave 0 went to %q, want %q", got, ids[:2])
	}
	r.quiet(t, 2)

	poll := func() { // a worker with nothing queued comes back: its wake polls the relay
		r.status("poker", "offline p")
		r.status("poker", "online p")
	}
	clk.Advance(10*time.Second - time.Millisecond)
	poll()
	r.quiet(t, 2)
	clk.Advance(time.Millisecond)
	poll()
	if got := r.receiveFrom(t, 2, "wave 1"); !slices.Equal(got, ids[2:4]) {
		t.Fatalf("wave 1 went to %q, want %q", got, ids[2:4])
	}
	r.quiet(t, 4)
}
