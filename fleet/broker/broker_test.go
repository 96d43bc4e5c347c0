package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// A thousand workers connect over the in-memory listener and exchange a
// message each way with the leader; every message arrives exactly once and
// the counters agree.
func TestThousandClientsExchange(t *testing.T) {
	const n = 1000
	b := startBroker(t, BrokerOptions{Auth: testAuth()})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, n)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)

	downs := make(inbox, n)
	workers := make([]paho.Client, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("w%04d", i)
			c, err := tryConnect(t, b, workerOpts(id))
			if err == nil {
				err = transport.Wait(ctxT(t), c.Subscribe(testTopics.Down(id), 1, downs.handler))
			}
			if err == nil {
				err = transport.Wait(ctxT(t), c.Publish(testTopics.Up(id), 1, false, id))
			}
			if err != nil {
				t.Errorf("worker %s: %v", id, err)
			}
			mu.Lock()
			workers[i] = c
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	got := map[string]bool{}
	for range n {
		m := ups.next(t)
		id, ch, err := testTopics.Parse(m.Topic())
		if err != nil || ch != "up" || string(m.Payload()) != id || got[id] {
			t.Fatalf("leader got %q on %q (err %v, duplicate %v)", m.Payload(), m.Topic(), err, got[id])
		}
		got[id] = true
		publish(t, leader, testTopics.Down(id), 1, "for "+id)
	}
	for range n {
		m := downs.next(t)
		id, _, _ := testTopics.Parse(m.Topic())
		if string(m.Payload()) != "for "+id || !got[id] {
			t.Fatalf("worker got %q on %q", m.Payload(), m.Topic())
		}
		delete(got, id)
	}

	s := b.Stats()
	want := Stats{ClientsConnected: n + 1, Connects: n + 1}
	if s != want {
		t.Errorf("Stats = %+v, want %+v", s, want)
	}
}

// Closing the broker drops every client's connection; each sees it through
// OnConnectionLost, and paho does not try to reconnect.
func TestBrokerCloseDropsClients(t *testing.T) {
	b, err := StartBroker(BrokerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 3)
	var clients []paho.Client
	for _, id := range []string{"a", "b", "c"} {
		o := transport.ClientOptions{ID: id, Broker: "mem://", CleanSession: true,
			OnConnectionLost: func(_ paho.Client, err error) { lost <- err }}
		c, err := transport.NewClient(o, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := transport.Wait(ctxT(t), c.Connect()); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	if err := b.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for range clients {
		select {
		case <-lost:
		case <-ctxT(t).Done():
			t.Fatal("a client did not see its connection drop")
		}
	}
	for _, c := range clients {
		if c.IsConnected() {
			t.Error("client still connected (reconnecting?) after the broker closed")
		}
		c.Disconnect(0) // already disconnected: returns at once
	}
	if _, err := b.DialMem(context.Background(), 0, 0); !errors.Is(err, ErrListenerClosed) || !errors.Is(err, net.ErrClosed) {
		t.Errorf("DialMem after Close: %v, want ErrListenerClosed", err)
	}
	if err := b.Close(ctxT(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A connect attempt after Close fails as a network error, not a refusal.
	c, _ := transport.NewClient(transport.ClientOptions{ID: "late", Broker: "mem://"}, b)
	if err := transport.Wait(ctxT(t), c.Connect()); err == nil || errors.Is(err, transport.ErrRefused) {
		t.Errorf("connect after Close: %v, want a network error", err)
	}
}

// A nil *Broker given to the client as its MemDialer is an error at
// connect time, not a panic.
func TestNilBrokerDialMem(t *testing.T) {
	var b *Broker
	_, err := transport.Connect(ctxT(t), transport.ClientOptions{ID: "a", Broker: "mem://"}, b)
	if err == nil || !strings.Contains(err.Error(), "nil *Broker") {
		t.Errorf("Connect over a nil *Broker: %v, want an error naming the nil *Broker", err)
	}
}
