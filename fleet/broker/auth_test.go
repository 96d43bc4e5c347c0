package broker

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Logins the broker must refuse, end to end, each counted once.
func TestLoginRefused(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	good := workerOpts("w-1")
	for i, tc := range []struct {
		name string
		edit func(*transport.ClientOptions)
	}{
		{"wrong worker password", func(o *transport.ClientOptions) {
			o.Password = wire.WorkerPassword([]byte("another-secret-0123"), o.ID)
		}},
		{"another worker's password", func(o *transport.ClientOptions) { o.Password = wire.WorkerPassword(testSecret, "w-2") }},
		{"client id differs from username", func(o *transport.ClientOptions) { o.ID = "w-2" }},
		{"invalid worker id", func(o *transport.ClientOptions) {
			o.ID, o.Username, o.Password = "w/1", "w/1", wire.WorkerPassword(testSecret, "w/1")
		}},
		{"wrong leader password", func(o *transport.ClientOptions) { *o = leaderOpts(); o.Password = "guess" }},
		{"no credentials", func(o *transport.ClientOptions) { o.Username, o.Password = "", "" }},
		{"will on another worker's status", func(o *transport.ClientOptions) {
			o.Will = &transport.Will{Topic: testTopics.Status("w-2"), Payload: []byte("offline")}
		}},
		{"will on its own up topic", func(o *transport.ClientOptions) {
			o.Will = &transport.Will{Topic: testTopics.Up("w-1"), Payload: []byte("x")}
		}},
		{"leader will outside the prefix", func(o *transport.ClientOptions) {
			*o = leaderOpts()
			o.Will = &transport.Will{Topic: "other/x", Payload: []byte("x")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			_, err := tryConnect(t, b, o)
			var re *transport.RefusedError
			// mochi answers an MQTT 3.1.1 client "not authorized" (5) for
			// every refusal, bad credentials included.
			if !errors.As(err, &re) || !errors.Is(err, transport.ErrRefused) || re.Code != packets.ErrRefusedNotAuthorised {
				t.Fatalf("connect: %v; want a *RefusedError with CONNACK 5", err)
			}
			if got := b.Stats().AuthDenied; got != uint64(i+1) {
				t.Errorf("AuthDenied = %d after %d refusals", got, i+1)
			}
		})
	}
	// The same worker with the right credentials and its own will gets in.
	o := good
	o.Will = &transport.Will{Topic: testTopics.Status("w-1"), Payload: []byte("offline"), Retained: true}
	connect(t, b, o)
}

// A worker's will is published on its status topic when its connection
// drops without a DISCONNECT.
func TestWorkerWillIsPublished(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	statuses := make(inbox, 1)
	subscribe(t, leader, testTopics.AllStatus(), 1, statuses.handler)

	conn := rawConnect(t, b, "w-1", wire.WorkerPassword(testSecret, "w-1"), testTopics.Status("w-1"))
	conn.Close() // no DISCONNECT: the broker sends the will
	m := statuses.next(t)
	if m.Topic() != testTopics.Status("w-1") || string(m.Payload()) != "offline" {
		t.Errorf("got %q on %q, want offline on the worker's status", m.Payload(), m.Topic())
	}
}

// rawConnect logs in over a bare in-memory connection with a will, and
// checks the CONNACK.
func rawConnect(t *testing.T, b *Broker, id, password, will string) net.Conn {
	t.Helper()
	conn, err := b.DialMem(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cp := packets.NewControlPacket(packets.Connect).(*packets.ConnectPacket)
	cp.ProtocolName, cp.ProtocolVersion = "MQTT", 4
	cp.ClientIdentifier, cp.CleanSession = id, true
	cp.UsernameFlag, cp.Username = true, id
	cp.PasswordFlag, cp.Password = true, []byte(password)
	cp.WillFlag, cp.WillTopic, cp.WillMessage, cp.WillRetain = true, will, []byte("offline"), true
	if err := cp.Write(conn); err != nil {
		t.Fatal(err)
	}
	ack, err := packets.ReadPacket(conn)
	if ca, ok := ack.(*packets.ConnackPacket); err != nil || !ok || ca.ReturnCode != 0 {
		t.Fatalf("CONNACK = %v, %v", ack, err)
	}
	return conn
}

// Worker A may not publish to worker B's up topic nor subscribe to B's
// down topic; each refusal is counted once, and its own topics still work.
func TestWorkerConfinedToItsTopics(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, 10)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)
	a := connect(t, b, workerOpts("w-a"))
	workerB := connect(t, b, workerOpts("w-b"))
	downsB := make(inbox, 10)
	subscribe(t, workerB, testTopics.Down("w-b"), 1, downsB.handler)

	// QoS 0 to B's up is dropped; A's next message to its own up arrives
	// and nothing arrived before it. The broker handles A's packets in order.
	publish(t, a, testTopics.Up("w-b"), 0, "forged")
	publish(t, a, testTopics.Up("w-a"), 1, "mine")
	if m := ups.next(t); m.Topic() != testTopics.Up("w-a") || string(m.Payload()) != "mine" {
		t.Fatalf("leader got %q on %q; the forged message went through", m.Payload(), m.Topic())
	}
	if got := b.Stats().ACLDenied; got != 1 {
		t.Errorf("ACLDenied = %d after one forged publish", got)
	}

	// Subscribing to B's down is refused with SUBACK failure; messages to
	// B's down reach B only.
	downsA := make(inbox, 10)
	err := transport.Wait(ctxT(t), a.Subscribe(testTopics.Down("w-b"), 1, downsA.handler))
	var re *transport.RefusedError
	if !errors.As(err, &re) || re.Op != "subscribe" || re.Code != 0x80 {
		t.Fatalf("subscribe to B's down: %v, want a *RefusedError with SUBACK 0x80", err)
	}
	subscribe(t, a, testTopics.Down("w-a"), 1, downsA.handler)
	publish(t, leader, testTopics.Down("w-b"), 1, "for b")
	publish(t, leader, testTopics.Down("w-a"), 1, "for a")
	if m := downsA.next(t); string(m.Payload()) != "for a" {
		t.Fatalf("A got %q on %q before its own message", m.Payload(), m.Topic())
	}
	if m := downsB.next(t); string(m.Payload()) != "for b" {
		t.Fatalf("B got %q", m.Payload())
	}
	if s := b.Stats(); s.ACLDenied != 2 || s.AuthDenied != 0 {
		t.Errorf("ACLDenied = %d, AuthDenied = %d; want 2 and 0", s.ACLDenied, s.AuthDenied)
	}
}

// A refused QoS 1 publish makes mochi disconnect an MQTT 3.1.1 client: the
// worker sees a lost connection, and the Publish token fails.
func TestRefusedQoS1PublishDisconnects(t *testing.T) {
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	lost := make(chan error, 1)
	o := workerOpts("w-a")
	o.OnConnectionLost = func(_ paho.Client, err error) { lost <- err }
	a := connect(t, b, o)
	if err := transport.Wait(ctxT(t), a.Publish(testTopics.Up("w-b"), 1, false, "forged")); err == nil {
		t.Error("refused QoS 1 publish completed without error")
	}
	select {
	case <-lost:
	case <-ctxT(t).Done():
		t.Fatal("connection not lost after a refused QoS 1 publish")
	}
	if got := b.Stats().ACLDenied; got != 1 {
		t.Errorf("ACLDenied = %d", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
