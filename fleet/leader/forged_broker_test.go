package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// loginAs connects to the fleet's broker as worker id, with the password
// its fleet secret gives it.
func loginAs(t *testing.T, f *fleettest.Fleet, secret []byte, id string) *transport.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, transport.ClientOptions{
		ID: id, Username: id, Password: wire.WorkerPassword(secret, id), Broker: "mem://", CleanSession: true,
	}, f.Broker)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(true) })
	return s
}

// TestForgedAcksOverTheBroker: the same forgery by a worker logged in
// with its own credentials, over the broker with its login and topic
// policy on: A may publish only on its own up topic, and what it says
// there about B's command changes nothing; B's ack delivers it.
func TestForgedAcksOverTheBroker(t *testing.T) {
	secret := []byte("forged-acks-test-fleet-secret-32")
	f := fleettest.StartFleet(t, 0, fleettest.Options{Secret: secret, Leader: leader.Config{AskTimeout: time.Minute}})
	tp := wire.Topics{}
	a, b := loginAs(t, f, secret, "w-a"), loginAs(t, f, secret, "w-b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmds := make(chan wire.Envelope, 4)
	if err := b.Subscribe(ctx, tp.Down("w-b"), 1, func(topic string, p []byte) {
		if env, err := wire.Decode(topic, p, wire.Down, 0); err == nil {
			cmds <- env
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, tp.Status("w-b"), 1, true, []byte("online b1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Leader.Send(ctx, "w-b", wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	stats := func() string { return fmtAcks(f.Leader.Stats()) }
	cmd := fleettest.Receive(t, 10*time.Second, "the command at w-b", cmds, stats)
	for _, r := range []wire.Result{wire.ResultReject, wire.ResultOK} {
		if err := a.Publish(ctx, tp.Up("w-a"), 1, false, ack(t, cmd.ID, r)); err != nil {
			t.Fatal(err)
		}
	}
	fleettest.Eventually(t, 10*time.Second, "two forged acks counted", func() error {
		return fleettest.Unless(f.Leader.Stats().AcksForged == 2, "%s", stats())
	})
	if s := f.Leader.Stats(); s.Outbox.Acked != 0 || s.Outbox.DeadLetters != 0 || s.AcksOK+s.AcksReject != 0 {
		t.Fatalf("forged acks answered the command: %s", stats())
	}
	if err := b.Publish(ctx, tp.Up("w-b"), 1, false, ack(t, cmd.ID, wire.ResultOK)); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 10*time.Second, "the command delivered by w-b's ack", func() error {
		s := f.Leader.Stats()
		return fleettest.Unless(s.Outbox.Acked == 1 && s.AcksOK == 1, "%s", stats())
	})
	if s := f.Leader.Stats(); s.Outbox.DeadLetters != 0 || s.AcksReject != 0 || s.AcksForged != 2 {
		t.Fatalf("after w-b's ack: %s", stats())
	}
}

func fmtAcks(s leader.Stats) string {
	return fmt.Sprintf("acked %d, dead letters %d, acks ok %d, reject %d, forged %d, late %d",
		s.Outbox.Acked, s.Outbox.DeadLetters, s.AcksOK, s.AcksReject, s.AcksForged, s.LateAcks)
}
