package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// heartbeat feeds the leader a heartbeat from worker w.
func (r *rig) heartbeat(t *testing.T, w string, seq uint64) {
	t.Helper()
	b, err := wire.Encode(wire.Envelope{V: wire.Version, ID: "h", Kind: wire.KindHeartbeat, Key: "hb", Seq: seq, Body: wire.Body(wire.Heartbeat{Version: "1.0.0"})})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
}

// waitParked makes w's relay partition look at its queue and waits until
// it has parked one command (of w's, the only one queued).
func (r *rig) waitParked(t *testing.T, w, what string) {
	t.Helper()
	r.partitionPoker(w)()
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		skips := r.l.Stats().Relay.Total().OfflineSkips
		return fleettest.Unless(skips == 1, "%d offline skips; %s", skips, r.seen())
	})
}

// TestTrafficBringsWorkerOnline: a worker whose retained status never
// reached the leader (a broker that replays no retained message to a
// wildcard subscription) is parked as unknown, until a message of its
// own comes: then it is online and its job goes out. So is a worker
// whose offline came more than a moment before its message (a will the
// broker delivered late, or one of a connection it replaced).
func TestTrafficBringsWorkerOnline(t *testing.T) {
	r := startLeader(t, leader.Config{})
	ctx := context.Background()
	if _, err := r.l.Send(ctx, "w-1", wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.waitParked(t, "w-1", "the relay parks the job of a worker never heard of")
	r.heartbeat(t, "w-1", 1)
	cmd := fleettest.Receive(t, 10*time.Second, "the job, once the worker is heard", r.link.out, r.seen)
	r.ack(t, "w-1", cmd)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	if s := r.l.Stats(); s.HeardBack != 1 || !r.online(t, "w-1") {
		t.Errorf("heard back %d, w-1 online %v; want 1, true", s.HeardBack, r.online(t, "w-1"))
	}
	// Its status, come late, is no reconnect.
	before := r.l.Stats().Reconnects // the partition poker's
	r.status("w-1", "online e1")
	if s := r.l.Stats(); s.Reconnects != before {
		t.Errorf("reconnects %d after the late status of a worker heard before it, want %d", s.Reconnects, before)
	}

	// A will, then a message sent before the drop that a cluster
	// delivered after it: within a moment of the offline it revives
	// nothing; later traffic does.
	r.status("w-1", "offline e1")
	r.heartbeat(t, "w-1", 2)
	if r.online(t, "w-1") {
		t.Fatal("online by a message that came with its will")
	}
	r.clk.Advance(2 * time.Second)
	r.heartbeat(t, "w-1", 3)
	if !r.online(t, "w-1") {
		t.Fatal("not online by a message two seconds after its will")
	}
	// The next offline applies, whatever its epoch: the traffic that
	// brought the worker back named none.
	r.status("w-1", "offline e9")
	if r.online(t, "w-1") {
		t.Fatal("online after an offline that followed its traffic")
	}
}

// TestSilentWorkerSuspect: with SuspectAfter, an online worker not heard
// from for that long is suspect: counted apart from the online, and its
// job parked without an attempt (a broker that lost its will would
// otherwise have it tried until the dead letters). Heard again, it gets
// the job.
func TestSilentWorkerSuspect(t *testing.T) {
	r := startLeader(t, leader.Config{SuspectAfter: 20 * time.Second})
	ctx := context.Background()
	r.status("w-1", "online e1")
	r.status("w-2", "online e1")
	for i := range 5 { // 25 s: w-2 keeps talking, w-1 is silent
		fleettest.Advance(t, r.clk, 5*time.Second, "the silence watch")
		r.heartbeat(t, "w-2", uint64(i+1))
	}
	fleettest.Eventually(t, 10*time.Second, "w-1 suspect", func() error {
		s, f := r.l.Stats(), r.l.Fleet()
		return fleettest.Unless(s.Suspected == 1 && f.Suspect == 1 && f.Online == 1 && r.l.Online() == 1,
			"suspected %d, suspect %d, online %d", s.Suspected, f.Suspect, f.Online)
	})
	if _, err := r.l.Send(ctx, "w-1", wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.waitParked(t, "w-1", "the relay parks the suspect worker's job")
	select {
	case cmd := <-r.link.out:
		t.Fatalf("published %s to a suspect worker", cmd.ID)
	default:
	}
	r.heartbeat(t, "w-1", 1)
	cmd := fleettest.Receive(t, 10*time.Second, "the job, once the worker is heard again", r.link.out, r.seen)
	r.ack(t, "w-1", cmd)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	if f := r.l.Fleet(); f.Suspect != 0 || !r.online(t, "w-1") {
		t.Errorf("suspect %d, w-1 online %v after it was heard; want 0, true", f.Suspect, r.online(t, "w-1"))
	}

	// Silent again, then back on a new connection: its online status
	// brings it back as its traffic did (a broker node that died took its
	// session, and the worker reconnected).
	for i := range 5 {
		fleettest.Advance(t, r.clk, 5*time.Second, "the silence watch")
		r.heartbeat(t, "w-2", uint64(10+i))
	}
	fleettest.Eventually(t, 10*time.Second, "w-1 suspect again", func() error {
		v, _ := r.view("w-1")
		return fleettest.Unless(v.Suspect, "%+v", v)
	})
	if _, err := r.l.Send(ctx, "w-1", wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.partitionPoker("w-1")()
	fleettest.Eventually(t, 10*time.Second, "the relay parks its second job", func() error {
		skips := r.l.Stats().Relay.Total().OfflineSkips
		return fleettest.Unless(skips == 2, "%d offline skips; %s", skips, r.seen())
	})
	r.status("w-1", "online e2")
	cmd = fleettest.Receive(t, 10*time.Second, "the second job, once the worker says online on a new connection", r.link.out, r.seen)
	r.ack(t, "w-1", cmd)
	fleettest.Eventually(t, 10*time.Second, "the second job acked", r.acked(2))
}
