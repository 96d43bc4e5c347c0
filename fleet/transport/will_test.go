package transport

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestLeaderWill: a leader session that says online and then loses its
// connection without a goodbye leaves "offline" as its retained status,
// under the fleet's login and topic policy. Without a will the retained
// status would say online for ever.
func TestLeaderWill(t *testing.T) {
	b := startBroker(t, broker.BrokerOptions{Auth: &broker.Auth{LeaderPassword: "leader-pw", Secret: testSecret}})
	o := leaderOpts()
	o.ID, o.Broker, o.Will = "leader-session", "mem://", LeaderWill(testTopics)
	s, err := Connect(ctxT(t), o, b)
	if err != nil {
		t.Fatal(err)
	}
	// The watcher subscribes before the online is published, and may
	// still get it twice: the broker sends a new subscription's retained
	// messages after its SUBACK, by when the online may be retained too.
	watcher := connect(t, b, leaderOpts())
	live := make(inbox, 4)
	subscribe(t, watcher, testTopics.LeaderStatus(), 1, live.handler)
	if err := s.Publish(ctxT(t), testTopics.LeaderStatus(), 1, true, []byte(wire.StatusOnline)); err != nil {
		t.Fatal(err)
	}
	if got := string(live.next(t).Payload()); got != wire.StatusOnline {
		t.Fatalf("leader status %q, want online", got)
	}
	s.Close(false) // no DISCONNECT: the broker publishes the will
	if got := live.nextOther(t, wire.StatusOnline); got != wire.StatusOffline {
		t.Fatalf("after the leader's connection died: %q, want offline", got)
	}
	late := ClientOptions{ID: "late-reader", Username: wire.LeaderUsername, Password: "leader-pw", CleanSession: true}
	in := make(inbox, 4)
	subscribe(t, connect(t, b, late), testTopics.LeaderStatus(), 1, in.handler)
	if m := in.next(t); string(m.Payload()) != wire.StatusOffline || !m.Retained() {
		t.Fatalf("a reader that comes later gets %q (retained %v), want the retained offline", m.Payload(), m.Retained())
	}
}
