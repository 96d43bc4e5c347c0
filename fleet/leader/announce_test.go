package leader_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// announceLink records what the leader's status says and, when it says
// online, what the leader was doing by then.
type announceLink struct {
	*fakeLink
	st *outbox.Memory

	mu       sync.Mutex
	statuses []string
	atOnline string // the leader's state when it said online
	// asked counts the leader's requests that the fleet announce itself
	// again, early those made before it said online.
	asked, early int
}

func (a *announceLink) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if topic == (wire.Topics{}).Announce() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.asked++
		if a.atOnline == "" {
			a.early++
		}
		return nil
	}
	if topic == (wire.Topics{}).LeaderStatus() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.statuses = append(a.statuses, string(payload))
		if string(payload) == wire.StatusOnline {
			s := a.st.Stats()
			a.atOnline = fmt.Sprintf("subscribed to up %v, to statuses %v; %d commands leased, acked or parked",
				a.handler((wire.Topics{}).AllUp()) != nil, a.handler((wire.Topics{}).AllStatus()) != nil, s.Leased+int(s.Acked+s.Parked))
		}
		return nil
	}
	return a.fakeLink.Publish(ctx, topic, qos, retained, payload)
}

func (a *announceLink) said() ([]string, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.statuses...), a.atOnline
}

// TestOnlineOnceServing: the leader says online only once it serves: it
// has subscribed to the workers' messages and statuses, and its relay has
// taken its first turn (a command queued before the start for a worker it
// has not heard from yet is parked by then). Said earlier, a worker or an operator would take a leader for
// ready that answers nobody yet. Then it asks the fleet to announce
// itself again. Stopping, it says offline.
func TestOnlineOnceServing(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	st, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(context.Background(), outbox.Message{Receiver: "w-1", Kind: string(wire.KindJob)}); err != nil {
		t.Fatal(err)
	}
	link := &announceLink{fakeLink: &fakeLink{handlers: map[string]func(string, []byte){}, out: make(chan wire.Envelope, 8)}, st: st}
	l, err := leader.New(leader.Config{Link: link, Store: st, Clock: clk, HeartbeatInterval: time.Hour, ProgressEvery: time.Hour,
		Relay: outbox.RelayOptions{Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	fleettest.Eventually(t, 10*time.Second, "the leader saying online", func() error {
		got, _ := link.said()
		return fleettest.Unless(len(got) == 1, "statuses %q", got)
	})
	if _, at := link.said(); at != "subscribed to up true, to statuses true; 1 commands leased, acked or parked" {
		t.Errorf("said online while %s; want it subscribed to both and the command leased", at)
	}
	// Then it asks the fleet to announce itself again: a broker that
	// replays no retained status to its wildcard subscription leaves it
	// hearing of no one otherwise.
	fleettest.Eventually(t, 10*time.Second, "the leader asking the fleet to announce itself", func() error {
		link.mu.Lock()
		defer link.mu.Unlock()
		return fleettest.Unless(link.asked == 1 && link.early == 0, "asked %d times, %d before it said online", link.asked, link.early)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := link.said(); len(got) != 2 || got[1] != wire.StatusOffline {
		t.Fatalf("statuses %q; want online, then offline", got)
	}
}
