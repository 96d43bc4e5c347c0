package transport

import (
	"errors"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// TestRedialAfterBrokerRestart: a session whose broker stops sees Lost,
// fails to redial while the broker is down and stays lost, and once a
// broker listens on the address again, Redial connects and makes its
// subscriptions again: a message published after the restart reaches the
// handler given to Subscribe before it. After Close, Redial says
// ErrClosed.
func TestRedialAfterBrokerRestart(t *testing.T) {
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr()
	s, err := Connect(ctxT(t), ClientOptions{ID: "redialer", Broker: "tcp://" + addr, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(true)
	got := make(inbox, 4)
	if err := s.Subscribe(ctxT(t), "x/#", 1, func(topic string, payload []byte) { got <- fakeMessage{topic, payload} }); err != nil {
		t.Fatal(err)
	}
	first := s.Lost()
	if err := b.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	case <-ctxT(t).Done():
		t.Fatal("Lost not closed after the broker stopped")
	}
	if s.Connected() {
		t.Error("Connected after the broker stopped")
	}
	if err := s.Redial(ctxT(t)); err == nil {
		t.Fatal("Redial with no broker listening: nil error")
	}
	select {
	case <-s.Lost():
	default:
		t.Error("Lost open after a failed Redial: the session would pass for connected")
	}

	b2 := startBroker(t, broker.BrokerOptions{TCPAddr: addr})
	if err := s.Redial(ctxT(t)); err != nil {
		t.Fatalf("Redial with the broker back: %v (lost: %v)", err, s.Err())
	}
	select {
	case <-s.Lost():
		t.Fatal("Lost closed after a successful Redial")
	default:
	}
	if !s.Connected() {
		t.Error("not Connected after a successful Redial")
	}
	pub := connect(t, b2, ClientOptions{ID: "publisher", CleanSession: true})
	publish(t, pub, "x/1", 1, "after the restart")
	if m := got.next(t); m.Topic() != "x/1" || string(m.Payload()) != "after the restart" {
		t.Errorf("got %s %q, want x/1 \"after the restart\"", m.Topic(), m.Payload())
	}

	s.Close(true)
	if err := s.Redial(ctxT(t)); !errors.Is(err, ErrClosed) || !s.Closed() {
		t.Errorf("Redial after Close = %v (Closed %v), want ErrClosed", err, s.Closed())
	}
}

// fakeMessage carries what a Session handler gets, as an inbox holds it.
type fakeMessage struct {
	topic   string
	payload []byte
}

func (m fakeMessage) Duplicate() bool   { return false }
func (m fakeMessage) Qos() byte         { return 0 }
func (m fakeMessage) Retained() bool    { return false }
func (m fakeMessage) Topic() string     { return m.topic }
func (m fakeMessage) MessageID() uint16 { return 0 }
func (m fakeMessage) Payload() []byte   { return m.payload }
func (m fakeMessage) Ack()              {}

var _ paho.Message = fakeMessage{}

// TestFailoverToTheNextBroker: a session given two brokers, the nodes of
// one cluster, connects to the first; when that one stops, Redial goes on
// to the second, and the session's subscriptions are made there: a
// message published on the second reaches the handler.
func TestFailoverToTheNextBroker(t *testing.T) {
	first, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	second := startBroker(t, broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	list := "tcp://" + first.Addr() + ",tcp://" + second.Addr()
	s, err := Connect(ctxT(t), ClientOptions{ID: "failover", Broker: list, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(true)
	got := make(inbox, 4)
	if err := s.Subscribe(ctxT(t), "x/#", 1, func(topic string, payload []byte) { got <- fakeMessage{topic, payload} }); err != nil {
		t.Fatal(err)
	}
	if n := second.Stats().ClientsConnected; n != 0 {
		t.Fatalf("the second broker has %d clients before the first stopped, want 0: the list is tried in order", n)
	}
	lost := s.Lost()
	if err := first.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-ctxT(t).Done():
		t.Fatal("Lost not closed after the first broker stopped")
	}
	if err := s.Redial(ctxT(t)); err != nil {
		t.Fatalf("Redial with the second broker up: %v", err)
	}
	pub := connect(t, second, ClientOptions{ID: "publisher", CleanSession: true})
	publish(t, pub, "x/1", 1, "on the second broker")
	if m := got.next(t); m.Topic() != "x/1" || string(m.Payload()) != "on the second broker" {
		t.Errorf("got %s %q, want x/1 \"on the second broker\"", m.Topic(), m.Payload())
	}
}
