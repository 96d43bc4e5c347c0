package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestStatusEpochs: each connection announces itself with a new epoch, and
// its last will (a crash) and its clean goodbye (a disconnect) say offline
// with that same epoch, so a leader can tell a late will of an earlier
// connection from the news that the current one is gone.
func TestStatusEpochs(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Reconnect: worker.Reconnect{Immediate: true}})
		statuses := make(chan string, 16)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.lead.Subscribe(ctx, r.tp.Status(workerID), 1, func(_ string, payload []byte) {
			statuses <- string(payload)
		}); err != nil {
			t.Fatal(err)
		}
		next := func(what string) wire.Status {
			t.Helper()
			p := fleettest.Receive(t, 10*time.Second, what, statuses, r.seen)
			s, err := wire.ParseStatus(r.tp.Status(workerID), []byte(p))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if s.Epoch == "" {
				t.Fatalf("%s: %q has no epoch", what, p)
			}
			return s
		}
		first := next("retained online of the first connection")
		if !first.Online || first.Via != r.via {
			t.Fatalf("first status %v, want online", first)
		}
		r.w.Crash()
		if s := next("last will of the first connection"); s != (wire.Status{Epoch: first.Epoch, Via: r.via}) {
			t.Fatalf("after a crash: %v, want offline %s", s, first.Epoch)
		}
		fleettest.Eventually(t, 10*time.Second, "worker reconnected", func() error {
			r.clk.Advance(worker.ImmediateRetry) // the reconnect is due a round trip later
			s := r.w.Stats()
			return fleettest.Unless(s.Reconnects == 1, "%d reconnects; %s", s.Reconnects, r.seen())
		})
		second := next("online of the second connection")
		if !second.Online || second.Epoch == first.Epoch {
			t.Fatalf("second connection announced %v; want online with an epoch other than %s", second, first.Epoch)
		}
		r.w.Disconnect()
		if s := next("goodbye of the second connection"); s != (wire.Status{Epoch: second.Epoch, Via: r.via}) {
			t.Fatalf("after a disconnect: %v, want offline %s", s, second.Epoch)
		}
	})
}
