package leader_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestSendAll: many commands go into the outbox in one call, each with a
// key of its own (a worker listed twice gets two commands, in order), and
// a call the outbox refuses puts none of them in.
func TestSendAll(t *testing.T) {
	r := startLeader(t, leader.Config{})
	ctx := context.Background()
	if err := r.l.SendAll(ctx, nil, wire.KindJob, nil); err != nil || r.st.Stats().Enqueued != 0 {
		t.Fatalf("SendAll of none: %v, %d enqueued; want nil, 0", err, r.st.Stats().Enqueued)
	}
	if err := r.l.SendAll(ctx, []string{"w-1", "w-1", "w-2"}, wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	if n := r.st.Stats().Enqueued; n != 3 {
		t.Fatalf("%d enqueued, want 3", n)
	}
	r.status("w-1", "online d1")
	r.status("w-2", "online d1")
	keys := map[string]string{}
	var w1 []string // w-1's keys in the order they came: its commands keep the list's order
	for range 3 {
		cmd := fleettest.Receive(t, 10*time.Second, "a command", r.link.out, r.seen)
		if prev, dup := keys[cmd.Key]; dup {
			t.Fatalf("key %q of %s is also %s's", cmd.Key, cmd.ID, prev)
		}
		keys[cmd.Key] = cmd.ID
		b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
		if err != nil {
			t.Fatal(err)
		}
		worker := "w-2"
		if r.link.topic(cmd.ID) == r.tp.Down("w-1") {
			worker = "w-1"
			w1 = append(w1, cmd.Key)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up(worker), b)
	}

	if len(w1) != 2 || !strings.HasSuffix(w1[0], "/0") || !strings.HasSuffix(w1[1], "/1") {
		t.Errorf("w-1 got %q, want its two commands in the list's order (keys ending /0, /1)", w1)
	}

	full := startLeaderWith(t, leader.Config{}, nil, nil, outbox.Options{MaxDepth: 2}, nil)
	if err := full.l.SendAll(ctx, []string{"w-1", "w-2", "w-3"}, wire.KindJob, nil); err == nil || full.st.Stats().Enqueued != 0 {
		t.Fatalf("three commands into an outbox of two: %v, %d enqueued; want an error and none", err, full.st.Stats().Enqueued)
	}
}
