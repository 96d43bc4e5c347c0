package leader_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// ack is the ack of the command id with result r, as a worker sends it.
func ack(t *testing.T, id string, r wire.Result) []byte {
	t.Helper()
	env := wire.Envelope{Kind: wire.KindAck, Ref: id, Result: r}
	if r == wire.ResultReject {
		env.Reason = "unknown version"
	}
	b, err := wire.Encode(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedAcksChangeNothing: command ids are sequential, so worker A can
// name worker B's command in an ack on its own up topic. A forged reject
// would send B's command to the dead letters, a forged ok count it
// delivered; bound to its receiver, the ask ignores both, counts them,
// logs the forger once (by name, never the payload), and is answered by
// B's own ack.
func TestForgedAcksChangeNothing(t *testing.T) {
	for _, path := range askPaths {
		t.Run(path.name, func(t *testing.T) { forgedAcks(t, path.wrap) })
	}
}

func forgedAcks(t *testing.T, wrap func(*fakeLink) leader.Link) {
	const a, b = "w-a", "w-b"
	var logs lockedBuffer
	r := startLeaderWith(t, leader.Config{AskTimeout: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil, nil, outbox.Options{}, wrap)
	if _, err := r.l.Send(context.Background(), b, wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.status(a, "online a1")
	r.status(b, "online b1")
	cmd := fleettest.Receive(t, 10*time.Second, "the command for "+b, r.link.out, r.seen)
	if got := r.link.topic(cmd.ID); got != r.tp.Down(b) {
		t.Fatalf("command %s published on %s, want %s", cmd.ID, got, r.tp.Down(b))
	}
	up := r.link.handler(r.tp.AllUp())
	up(r.tp.Up(a), ack(t, cmd.ID, wire.ResultReject))
	up(r.tp.Up(a), ack(t, cmd.ID, wire.ResultOK))
	if s := r.l.Stats(); s.AcksForged != 2 || s.AcksOK != 0 || s.AcksReject != 0 {
		t.Fatalf("after two forged acks: forged %d, ok %d, reject %d; want 2 forged, nothing answered", s.AcksForged, s.AcksOK, s.AcksReject)
	}
	up(r.tp.Up(b), ack(t, cmd.ID, wire.ResultOK))
	fleettest.Eventually(t, 10*time.Second, "the command acked by "+b, r.acked(1))
	s := r.l.Stats()
	if s.Outbox.DeadLetters != 0 || s.AcksOK != 1 || s.AcksReject != 0 || s.AcksForged != 2 || s.LateAcks != 0 || s.Refused.ForgedAck != 2 {
		t.Fatalf("dead letters %d, acks ok %d, reject %d, forged %d, late %d; want 0 1 0 2 0",
			s.Outbox.DeadLetters, s.AcksOK, s.AcksReject, s.AcksForged, s.LateAcks)
	}
	lines := strings.Count(logs.String(), "ack ignored")
	if lines != 1 || !strings.Contains(logs.String(), "from="+a) || !strings.Contains(logs.String(), "reason=forged_ack") || strings.Contains(logs.String(), cmd.ID) {
		t.Fatalf("want one line naming %s and not the payload, got %d:\n%s", a, lines, logs.String())
	}
}
