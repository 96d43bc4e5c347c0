package leader_test

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestReconnectResendsAsk: a command out to a worker whose connection
// then goes is published again as soon as the worker is online on a new
// one, not after the ask timeout: the fake clock never moves here, so
// only the new connection's "online" can bring the second publish. An ack
// of it completes the ask, which is not counted as timed out.
func TestReconnectResendsAsk(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []string
	}{
		{"online on a new connection before the old one's will", []string{"online e2", "offline e1"}},
		{"offline, then online on a new connection", []string{"offline e1", "online e2"}},
	} {
		for _, path := range askPaths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) { reconnectResends(t, tc.statuses, path.wrap) })
		}
	}
}

func reconnectResends(t *testing.T, statuses []string, wrap func(*fakeLink) leader.Link) {
	const w = askW
	r, cmd := askOne(t, leader.Config{}, outbox.Options{}, wrap)
	for _, s := range statuses {
		r.status(w, s)
	}
	again := fleettest.Receive(t, 10*time.Second, "the command again, on the new connection", r.link.out, r.seen)
	if again.ID != cmd.ID || again.Attempt != cmd.Attempt {
		t.Fatalf("published %s attempt %d, want %s attempt %d again", again.ID, again.Attempt, cmd.ID, cmd.Attempt)
	}
	b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: again.ID, Result: wire.ResultOK})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	if s := r.l.Stats(); s.AsksTimedOut != 0 || s.AsksSent != 1 {
		t.Fatalf("asks sent %d, timed out %d; want 1 ask, answered", s.AsksSent, s.AsksTimedOut)
	}
}
