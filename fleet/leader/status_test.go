package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// status hands the leader a status payload for worker, as the broker would.
func (r *rig) status(worker, payload string) {
	r.link.handler(r.tp.AllStatus())(r.tp.Status(worker), []byte(payload))
}

// acked is a check that the outbox has acked n commands.
func (r *rig) acked(n uint64) func() error {
	return func() error {
		return fleettest.Unless(r.l.Stats().Outbox.Acked == n, "%s", r.seen())
	}
}

// poll makes the relay partition of worker look at its queue now: a
// worker of the same partition comes back online, which wakes it. A
// command sent just after the partition's last poll would otherwise wait
// for the next (30 s on the fake clock).
func (r *rig) poll(worker string) {
	n := len(r.l.Stats().Relay.Partitions)
	for i := 0; ; i++ {
		if id := fmt.Sprintf("poker-%d", i); outbox.PartitionOf(id, n) == outbox.PartitionOf(worker, n) {
			r.status(id, "offline p")
			r.status(id, "online p")
			return
		}
	}
}

func (r *rig) online(t *testing.T, worker string) bool {
	t.Helper()
	for _, w := range r.l.Fleet().Workers {
		if w.ID == worker {
			return w.Online
		}
	}
	t.Fatalf("the leader has not seen %s", worker)
	return false
}

// TestStatusOrdering feeds the leader statuses in the orders a broker can
// deliver them. An offline whose epoch is not that of the online last
// applied is the late will of a replaced connection: ignored and counted.
// A matching offline applies; statuses without an epoch name no
// connection and, as garbage, are counted and change nothing.
func TestStatusOrdering(t *testing.T) {
	r := startLeader(t, leader.Config{})
	steps := []struct {
		worker, payload string
		online          bool
		stale, reconn   uint64
		malformed       uint64
	}{
		{"w-1", "online e1", true, 0, 0, 0},
		{"w-1", "online e2", true, 0, 1, 0},     // reconnected before e1's will arrived
		{"w-1", "offline e1", true, 1, 1, 0},    // e1's late will: stale
		{"w-1", "offline e2", false, 1, 1, 0},   // the current connection is gone
		{"w-1", "offline e2", false, 1, 1, 0},   // again (a retained replay): no change
		{"w-1", "online e3", true, 1, 2, 0},     //
		{"w-1", "online e3", true, 1, 2, 0},     // a retained replay of the same connection
		{"w-1", "offline", true, 1, 2, 1},       // no epoch: names no connection, refused
		{"w-1", "offline e3", false, 1, 2, 1},   //
		{"w-1", "online", false, 1, 2, 2},       // no epoch: refused, the worker stays offline
		{"w-1", "online e4", true, 1, 3, 2},     //
		{"w-1", "offline e3", true, 2, 3, 2},    // not the epoch of the last online
		{"w-1", "online\n", true, 2, 3, 3},      // malformed: refused, counted
		{"w-1", "", true, 2, 3, 3},              // a cleared retained message
		{"w-2", "offline e9", false, 2, 3, 3},   // first news of w-2 (a retained will at start)
		{"w-2", "online e10", true, 2, 4, 3},    // back after being seen offline
		{"w-2", "offline e9", true, 3, 4, 3},    // a will older still
		{"w-2", "offline e10 x", true, 3, 4, 4}, // malformed
		{"w-2", "Offline e10", true, 3, 4, 5},   // malformed
		{"w-2", "offline e10", false, 3, 4, 5},  //
		{"w-2", "online e10", true, 3, 5, 5},    // an online of a closed epoch: a replay, applied
	}
	for i, s := range steps {
		r.status(s.worker, s.payload)
		st := r.l.Stats()
		if got := r.online(t, s.worker); got != s.online || st.StatusStale != s.stale || st.Reconnects != s.reconn || st.Malformed != s.malformed {
			t.Fatalf("step %d (%s %q): online %v, stale %d, reconnects %d, malformed %d; want %v %d %d %d",
				i, s.worker, s.payload, got, st.StatusStale, st.Reconnects, st.Malformed, s.online, s.stale, s.reconn, s.malformed)
		}
	}
	r.status("_leader", "offline") // the leader's own status is not a worker's
	if v := r.l.Fleet(); len(v.Workers) != 2 || r.l.Stats().Malformed != 5 {
		t.Fatalf("after the leader's own status: %d workers, %d malformed; want 2, 5", len(v.Workers), r.l.Stats().Malformed)
	}
}

// TestStaleOfflineKeepsDelivering: the relay goes on delivering to a worker
// whose old connection's will came after its new online, parks its
// commands once the current connection's offline arrives, and delivers
// them when it is back. The fake clock never moves: the relay polls when a
// worker comes back online (another worker's, in the same partition, where
// the test needs a poll that unparks nobody).
func TestStaleOfflineKeepsDelivering(t *testing.T) {
	r := startLeader(t, leader.Config{})
	ctx := context.Background()
	const w = "w-1"
	poll := func() { r.poll(w) }
	// ackNext waits for the command the leader publishes and acks it.
	ackNext := func(what string) {
		t.Helper()
		cmd := fleettest.Receive(t, 10*time.Second, what+": the command", r.link.out, r.seen)
		b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
		if err != nil {
			t.Fatal(err)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
	}
	send := func() {
		t.Helper()
		if _, err := r.l.Send(ctx, w, wire.KindJob, nil); err != nil {
			t.Fatal(err)
		}
	}

	r.status(w, "online e1")
	r.status(w, "online e2")
	r.status(w, "offline e1") // late: e2 is the live connection
	send()
	poll()
	ackNext("after a stale offline")
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))

	r.status(w, "offline e2")
	send()
	poll()
	fleettest.Eventually(t, 10*time.Second, "the relay parks the job of the offline worker", func() error {
		skips := r.l.Stats().Relay.Total().OfflineSkips
		return fleettest.Unless(skips == 1, "%d offline skips; %s", skips, r.seen())
	})
	select {
	case cmd := <-r.link.out:
		t.Fatalf("published %s to a worker whose current connection is gone", cmd.ID)
	default:
	}
	r.status(w, "online e3") // wakes its queue at once
	ackNext("the parked job, when the worker is back")
	fleettest.Eventually(t, 10*time.Second, "both jobs acked", r.acked(2))
}

// TestOnlineCount: Online counts what Fleet does, without the copy.
func TestOnlineCount(t *testing.T) {
	r := startLeader(t, leader.Config{})
	r.status("w-1", "online e1")
	r.status("w-2", "online e1")
	r.status("w-3", "online e1")
	r.status("w-2", "offline e1")
	if got, want := r.l.Online(), r.l.Fleet().Online; got != 2 || want != 2 {
		t.Fatalf("Online() = %d, Fleet().Online = %d; want 2 and 2", got, want)
	}
}

// TestPlainOfflineKeepsDelivering: a status without an epoch, such as a
// retained "offline" published by whoever may write the worker's status
// topic, names no connection. The leader refuses it (counted as
// malformed), keeps the live worker online and goes on delivering to it.
func TestPlainOfflineKeepsDelivering(t *testing.T) {
	r := startLeader(t, leader.Config{})
	const w = "w-1"
	r.status(w, "online e1")
	r.status(w, "offline")
	r.gwStatus("gw-w-1", "offline")
	if !r.online(t, w) {
		t.Fatal("a plain offline took a live worker offline")
	}
	if _, err := r.l.Send(context.Background(), w, wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.poll(w)
	cmd := fleettest.Receive(t, 10*time.Second, "the job", r.link.out, r.seen)
	b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	if s := r.l.Stats(); s.Malformed != 2 || s.Relay.Total().OfflineSkips != 0 {
		t.Fatalf("malformed %d, offline skips %d; want 2 (both plain offlines refused), 0", s.Malformed, s.Relay.Total().OfflineSkips)
	}
}
