package broker

import (
	"context"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A connection that claims the leader's client id without the leader's
// credentials is refused at login, and the leader's session is not
// touched: it stays connected and keeps publishing and receiving. Only a
// login that passes may take over a session (MQTT's rule for the same id).
func TestRefusedLoginDoesNotTakeOverSession(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	lost := make(chan error, 1)
	lo := leaderOpts()
	lo.OnConnectionLost = func(_ paho.Client, err error) { lost <- err }
	leader := connect(t, b, lo)
	ups := make(inbox, 10)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)

	for i, tc := range []struct {
		name, username, password string
	}{
		{"no credentials", "", ""},
		{"wrong leader password", wire.LeaderUsername, "guess"},
		{"a worker's credentials", "w-1", wire.WorkerPassword(testSecret, "w-1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := rawLogin(t, b, lo.ID, tc.username, tc.password)
			if code != packets.ErrRefusedNotAuthorised {
				t.Fatalf("CONNACK %d for the leader's client id with %s; want %d (refused)", code, tc.name, packets.ErrRefusedNotAuthorised)
			}
			if got := b.Stats().AuthDenied; got != uint64(i+1) {
				t.Errorf("AuthDenied = %d after %d refusals", got, i+1)
			}
			// The leader's session still works both ways: a worker's
			// message reaches it, and its own publish goes out. A
			// session stopped by the refused login would fail here.
			w := connect(t, b, workerOpts("w-1"))
			publish(t, w, testTopics.Up("w-1"), 1, tc.name)
			select {
			case m := <-ups:
				if string(m.Payload()) != tc.name {
					t.Fatalf("leader got %q, want %q", m.Payload(), tc.name)
				}
			case err := <-lost:
				t.Fatalf("the leader lost its session: %v", err)
			case <-ctxT(t).Done():
				t.Fatal("the worker's message did not reach the leader")
			}
			publish(t, leader, testTopics.Down("w-1"), 1, "still here")
			w.Disconnect(250)
		})
	}
	if !leader.IsConnectionOpen() {
		t.Fatal("the leader's connection is closed")
	}
	// The same id with the leader's credentials does take the session
	// over: the leader's privileges are its credentials, not its id.
	if code := rawLogin(t, b, lo.ID, wire.LeaderUsername, "leader-pw"); code != packets.Accepted {
		t.Fatalf("CONNACK %d for the leader's own credentials", code)
	}
	select {
	case <-lost:
	case <-ctxT(t).Done():
		t.Fatal("a login with the leader's credentials and id did not take the session over")
	}
}

// rawLogin sends a CONNECT with client id, username and password (none if
// username is empty) over a bare in-memory connection, and returns the
// CONNACK's return code. The connection is closed when the test ends.
func rawLogin(t *testing.T, b *Broker, id, username, password string) byte {
	t.Helper()
	conn, err := b.DialMem(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	cp := packets.NewControlPacket(packets.Connect).(*packets.ConnectPacket)
	cp.ProtocolName, cp.ProtocolVersion = "MQTT", 4
	cp.ClientIdentifier, cp.CleanSession = id, true
	if username != "" {
		cp.UsernameFlag, cp.Username = true, username
		cp.PasswordFlag, cp.Password = true, []byte(password)
	}
	if err := cp.Write(conn); err != nil {
		t.Fatal(err)
	}
	ack, err := packets.ReadPacket(conn)
	ca, ok := ack.(*packets.ConnackPacket)
	if err != nil || !ok {
		t.Fatalf("no CONNACK: %v, %v", ack, err)
	}
	return ca.ReturnCode
}
