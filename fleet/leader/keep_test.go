package leader_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// redialLink is a fakeLink whose session the test can lose and whose
// Redial fails a given number of times before it succeeds. While it is
// down, every publish fails, as paho's does, and is counted.
type redialLink struct {
	*fakeLink

	mu        sync.Mutex
	up        bool
	lost      chan struct{}
	fails     int // Redials still to fail
	redials   int
	refused   int      // publishes while down
	announced []string // the leader's own statuses
	asked     int      // its requests that the fleet announce itself
}

func newRedialLink(f *fakeLink) *redialLink {
	return &redialLink{fakeLink: f, up: true, lost: make(chan struct{})}
}

var errNotConnected = errors.New("not connected")

func (r *redialLink) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	r.mu.Lock()
	if !r.up {
		r.refused++
		r.mu.Unlock()
		return errNotConnected
	}
	switch topic {
	case (wire.Topics{}).LeaderStatus():
		r.announced = append(r.announced, string(payload))
	case (wire.Topics{}).Announce():
		r.asked++
	}
	r.mu.Unlock()
	return r.fakeLink.Publish(ctx, topic, qos, retained, payload)
}

func (r *redialLink) Send(topic string, qos byte, payload []byte) error {
	return r.Publish(context.Background(), topic, qos, false, payload)
}

func (r *redialLink) Connected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.up
}

func (r *redialLink) Lost() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

func (r *redialLink) Err() error { return errors.New("EOF") }

func (r *redialLink) Closed() bool { return false }

func (r *redialLink) Redial(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.redials++
	if r.fails > 0 {
		r.fails--
		return errors.New("connection refused")
	}
	r.up, r.lost = true, make(chan struct{})
	return nil
}

// drop makes the connection fail, as paho sees it first: publishes fail
// and Connected is false. The leader notices at notice.
func (r *redialLink) drop(fails int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up, r.fails = false, fails
}

// notice closes Lost: the client reports the loss.
func (r *redialLink) notice() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.lost)
}

func (r *redialLink) counts() (redials, refused int, announced string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.redials, r.refused, strings.Join(r.announced, ",")
}

var testReconnect = flow.Backoff{Base: 100 * time.Millisecond, Cap: 800 * time.Millisecond}

// startRedialLeader starts a leader on a redialLink with worker w online
// and one job for it, and returns once the job is published.
func startRedialLeader(t *testing.T, w string) (*rig, *redialLink, wire.Envelope) {
	t.Helper()
	var link *redialLink
	r := startLeaderWith(t, leader.Config{Reconnect: testReconnect}, nil, nil, outbox.Options{}, func(f *fakeLink) leader.Link {
		link = newRedialLink(f)
		return link
	})
	if _, err := r.l.Send(context.Background(), w, wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.status(w, "online e1") // its wake polls the relay
	cmd := fleettest.Receive(t, 10*time.Second, "the job", r.link.out, r.seen)
	// Started: it has said online and asked the fleet to announce itself,
	// so that nothing of its start-up is published into a session the
	// test drops.
	fleettest.Eventually(t, 10*time.Second, "the leader's start-up publishes", func() error {
		link.mu.Lock()
		defer link.mu.Unlock()
		return fleettest.Unless(len(link.announced) == 1 && link.asked == 1, "said %q, asked %d", link.announced, link.asked)
	})
	return r, link, cmd
}

// redialThrough advances the fake clock through the leader's attempts to
// dial again, n of them, and returns the wait before each. Each wait
// must be armed within its backoff window, or the test fails.
func redialThrough(t *testing.T, r *rig, link *redialLink, n int) []time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var waits []time.Duration
	for i := range n {
		if err := r.clk.WaitDue(ctx, testReconnect.Ceiling(i)); err != nil {
			t.Fatalf("attempt %d to dial again: %v", i+1, err)
		}
		at, _ := r.clk.NextDeadline()
		waits = append(waits, at.Sub(r.clk.Now()))
		r.clk.Set(at)
		fleettest.Eventually(t, 10*time.Second, fmt.Sprintf("attempt %d to dial again", i+1), func() error {
			got, _, _ := link.counts()
			return fleettest.Unless(got == i+1, "%d attempts", got)
		})
	}
	return waits
}

// ack answers cmd ok from worker w.
func (r *rig) ack(t *testing.T, w string, cmd wire.Envelope) {
	t.Helper()
	b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(w), b)
}

// TestLostSessionPausesRelay: a job is out when the session is lost.
// The relay pauses: the job is handed back with no attempt charged and
// nothing is published while the session is down. The leader dials again
// with a backoff whose waits grow within their jittered windows; the
// fourth attempt succeeds, the leader says online again, and the job goes
// out again as the same attempt and is acked. Stats.Broker counts the
// outage and its length on the leader's clock.
func TestLostSessionPausesRelay(t *testing.T) {
	const w = "w-1"
	r, link, cmd := startRedialLeader(t, w)
	link.drop(3)
	link.notice()
	fleettest.Eventually(t, 10*time.Second, "the relay paused, the job handed back", func() error {
		s := r.l.Stats()
		return fleettest.Unless(!s.Broker.Connected && s.Outbox.Leased == 0 && relaySum(s, inFlight) == 0,
			"broker %+v, leased %d, in flight %d", s.Broker, s.Outbox.Leased, relaySum(s, inFlight))
	})
	waits := redialThrough(t, r, link, 4)
	var downtime time.Duration
	for _, d := range waits {
		downtime += d
	}
	again := fleettest.Receive(t, 10*time.Second, "the job again, after the reconnect", r.link.out, r.seen)
	if again.ID != cmd.ID || again.Attempt != cmd.Attempt {
		t.Errorf("published %s attempt %d after the reconnect, want %s attempt %d: the outage charged an attempt", again.ID, again.Attempt, cmd.ID, cmd.Attempt)
	}
	r.ack(t, w, again)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	_, refused, announced := link.counts()
	if refused != 0 {
		t.Errorf("%d publishes into the lost session, want none: the relay must pause", refused)
	}
	if announced != "online,online" {
		t.Errorf("the leader said %q, want online, and online again after the reconnect", announced)
	}
	s := r.l.Stats()
	want := leader.BrokerStats{Connected: true, Disconnects: 1, Reconnects: 1, FailedRedials: 3, Downtime: downtime}
	if s.Broker != want {
		t.Errorf("broker stats %+v, want %+v (waits %v)", s.Broker, want, waits)
	}
	if relaySum(s, retries) != 0 || s.Outbox.DeadLetters != 0 || s.AsksTimedOut != 0 {
		t.Errorf("retries %d, dead letters %d, asks timed out %d; want none for an outage",
			relaySum(s, retries), s.Outbox.DeadLetters, s.AsksTimedOut)
	}
}

// TestPublishIntoLostSessionNotCharged: the client fails a publish as
// soon as the connection breaks, before it reports the loss. An ask that
// meets that failure waits for the pause instead of counting it against
// the worker, so the job goes out again after the reconnect as the same
// attempt.
func TestPublishIntoLostSessionNotCharged(t *testing.T) {
	const w = "w-1"
	r, link, cmd := startRedialLeader(t, w)
	link.drop(0)
	r.status(w, "online e2") // a new connection: the ask publishes again, into the broken one
	fleettest.Eventually(t, 10*time.Second, "a publish refused", func() error {
		_, refused, _ := link.counts()
		return fleettest.Unless(refused == 1, "%d refused", refused)
	})
	link.notice()
	redialThrough(t, r, link, 1)
	again := fleettest.Receive(t, 10*time.Second, "the job again, after the reconnect", r.link.out, r.seen)
	if again.ID != cmd.ID || again.Attempt != cmd.Attempt {
		t.Errorf("published %s attempt %d after the reconnect, want %s attempt %d: the failed publish was charged", again.ID, again.Attempt, cmd.ID, cmd.Attempt)
	}
	r.ack(t, w, again)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
	if s := r.l.Stats(); s.AsksFailed != 0 || relaySum(s, retries) != 0 {
		t.Errorf("asks failed %d, retries %d; want none", s.AsksFailed, relaySum(s, retries))
	}
}

func inFlight(p outbox.PartitionStats) uint64 { return uint64(p.InFlight) }
func retries(p outbox.PartitionStats) uint64  { return p.Retries }

// relaySum adds up f over the relay's partitions.
func relaySum(s leader.Stats, f func(outbox.PartitionStats) uint64) uint64 {
	var n uint64
	for _, p := range s.Relay.Partitions {
		n += f(p)
	}
	return n
}
