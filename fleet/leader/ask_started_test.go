package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// inlineFake is the rig's fake link declared inline (leader.InlineLink):
// the leader starts its asks on the relay's loops instead of waiting for
// each on a goroutine.
type inlineFake struct{ *fakeLink }

func (inlineFake) PublishesInline() bool { return true }

// askPaths are the leader's two ways of asking: waiting, over a link
// whose Publish waits for the broker (a paho session), and started, over
// one that does not (the embedded broker's inline link). Every rule of
// an ask holds on both.
var askPaths = []struct {
	name string
	wrap func(*fakeLink) leader.Link
}{
	{"waiting", nil},
	{"started", func(f *fakeLink) leader.Link { return inlineFake{f} }},
}

// askW is the worker the ask tests send their one job to.
const askW = "w-1"

// askOne starts a leader with cfg on a memory store opened with so,
// over the fake link as wrap makes it, sends a job to askW, brings askW
// online (its wake polls the relay) and returns the command published.
func askOne(t *testing.T, cfg leader.Config, so outbox.Options, wrap func(*fakeLink) leader.Link) (*rig, wire.Envelope) {
	t.Helper()
	r := startLeaderWith(t, cfg, nil, nil, so, wrap)
	if _, err := r.l.Send(context.Background(), askW, wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.status(askW, "online e1")
	return r, fleettest.Receive(t, 10*time.Second, "the command", r.link.out, r.seen)
}

// TestAskTimesOut: a command no ack answers times out after AskTimeout,
// is counted so, and is delivered again as its next attempt; the ack of
// that one completes it, and nothing else is counted.
func TestAskTimesOut(t *testing.T) {
	for _, path := range askPaths {
		t.Run(path.name, func(t *testing.T) {
			r, first := askOne(t, leader.Config{AskTimeout: time.Second}, outbox.Options{}, path.wrap)
			fleettest.Eventually(t, 10*time.Second, "the ask timer armed", func() error {
				at, ok := r.clk.NextDeadline()
				return fleettest.Unless(ok && at.Equal(r.clk.Now().Add(time.Second)), "%s", r.seen())
			})
			r.clk.Advance(time.Second)
			fleettest.Eventually(t, 10*time.Second, "the ask timed out", func() error {
				return fleettest.Unless(r.l.Stats().AsksTimedOut == 1, "%s", r.seen())
			})
			fleettest.Eventually(t, 10*time.Second, "the timeout settled", func() error {
				s := r.st.Stats()
				return fleettest.Unless(s.Leased == 0 && s.Nacked == 1, "leased %d, nacked %d", s.Leased, s.Nacked)
			})
			r.clk.Advance(time.Hour) // past the retry's backoff, to the relay's tick
			again := fleettest.Receive(t, 10*time.Second, "the command again", r.link.out, r.seen)
			if again.ID != first.ID || again.Attempt != first.Attempt+1 {
				t.Fatalf("published %s attempt %d, want %s attempt %d", again.ID, again.Attempt, first.ID, first.Attempt+1)
			}
			r.link.handler(r.tp.AllUp())(r.tp.Up(askW), ack(t, again.ID, wire.ResultOK))
			fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
			if s := r.l.Stats(); s.AsksSent != 2 || s.AsksTimedOut != 1 || s.AcksOK != 1 || s.LateAcks != 0 {
				t.Fatalf("asks sent %d, timed out %d, acks ok %d, late %d; want 2 1 1 0", s.AsksSent, s.AsksTimedOut, s.AcksOK, s.LateAcks)
			}
		})
	}
}

// TestStopHandsBackAsks: a leader stopping with a command unanswered
// hands it back to the outbox without an attempt charged: it is not
// leased, and its next delivery is its first attempt again.
func TestStopHandsBackAsks(t *testing.T) {
	for _, path := range askPaths {
		t.Run(path.name, func(t *testing.T) {
			r, _ := askOne(t, leader.Config{AskTimeout: time.Hour}, outbox.Options{}, path.wrap)
			r.stop()
			if s := r.st.Stats(); s.Depth != 1 || s.Leased != 0 || s.Acked != 0 {
				t.Fatalf("after the stop: depth %d, leased %d, acked %d; want the command queued, not leased", s.Depth, s.Leased, s.Acked)
			}
			msgs, err := r.st.Dequeue(context.Background(), outbox.PartitionOf(askW, r.st.Partitions()), 1)
			if err != nil || len(msgs) != 1 || msgs[0].Attempts != 0 {
				t.Fatalf("dequeued %+v, %v; want the command with no attempt charged", msgs, err)
			}
		})
	}
}

// TestStartedAskSuperseded: a command the outbox hands out again while
// its started ask still waits (a lease shorter than the ask timeout) is
// published again, and the earlier ask ends at once, counted failed:
// one ask per command id waits for its ack, and the relay gets the
// outcome of each delivery it started (the leader stops cleanly).
func TestStartedAskSuperseded(t *testing.T) {
	cfg := leader.Config{AskTimeout: 2 * time.Hour, Relay: outbox.RelayOptions{Limiter: flow.LimiterOptions{Initial: 4, Min: 1, Max: 8}}}
	r, first := askOne(t, cfg, outbox.Options{LeaseTimeout: time.Second}, askPaths[1].wrap)
	r.clk.Advance(time.Hour) // the lease has run out by the relay's next tick
	again := fleettest.Receive(t, 10*time.Second, "the command handed out again", r.link.out, r.seen)
	if again.ID != first.ID {
		t.Fatalf("published %s, want %s again", again.ID, first.ID)
	}
	fleettest.Eventually(t, 10*time.Second, "the earlier ask ended", func() error {
		s := r.l.Stats()
		return fleettest.Unless(s.AsksFailed == 1 && s.AsksSent == 2 && s.AsksTimedOut == 0, "asks sent %d, failed %d, timed out %d", s.AsksSent, s.AsksFailed, s.AsksTimedOut)
	})
	r.stop()
	if got := r.l.Stats().Relay.Partitions[0].InFlight; got != 0 {
		t.Fatalf("%d deliveries in flight after the stop", got)
	}
}
