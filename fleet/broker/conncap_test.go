package broker

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// With MaxConnections open — logged in or still in their handshake — the
// next TCP connection is closed as it is accepted, unread, counted and
// logged; once one of them has gone, a new one gets in. In-memory clients
// do not count.
func TestConnectionCap(t *testing.T) {
	var logs syncBuffer
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), MaxConnections: 3,
		HandshakeTimeout: patience, Logger: slogTo(&logs)})
	connect(t, b, leaderOpts()) // in memory
	w1 := dialRaw(t, b, "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"))
	dialRaw(t, b, "w-2", "w-2", wire.WorkerPassword(testSecret, "w-2"))
	dialTCP(t, b) // says nothing: in its handshake

	over := dialTCP(t, b)
	over.closedByBroker()
	if s := b.Stats(); s.ConnectionsRefused != 1 || s.TCPConnections != 3 {
		t.Fatalf("ConnectionsRefused %d, TCPConnections %d; want 1, 3", s.ConnectionsRefused, s.TCPConnections)
	}

	w1.Close()
	waitFor(t, "w-1's connection gone", func() bool { return b.Stats().TCPConnections == 2 })
	w3 := dialRaw(t, b, "w-3", "w-3", wire.WorkerPassword(testSecret, "w-3"))
	w3.fence(testTopics.Up("w-3"))
	if s := b.Stats(); s.ConnectionsRefused != 1 || s.TCPConnections != 3 {
		t.Fatalf("after one left: ConnectionsRefused %d, TCPConnections %d; want 1, 3", s.ConnectionsRefused, s.TCPConnections)
	}
	if l := logs.String(); !strings.Contains(l, "too many connections; connection closed unread") || !strings.Contains(l, "limit=3 remote=127.0.0.1") {
		t.Errorf("log does not say the refusal:\n%s", l)
	}
}
