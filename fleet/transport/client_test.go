package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
)

func TestNewClientRejectsBadOptions(t *testing.T) {
	b := startBroker(t, BrokerOptions{})
	for _, tc := range []struct {
		name    string
		opts    ClientOptions
		mem     *Broker
		wantErr string
	}{
		{"no id", ClientOptions{Broker: "mem://"}, b, "ID is empty"},
		{"mem without broker", ClientOptions{ID: "a", Broker: "mem://"}, nil, "nil *Broker"},
		{"unknown scheme", ClientOptions{ID: "a", Broker: "ws://h:1"}, b, `scheme "ws"`},
		{"no port", ClientOptions{ID: "a", Broker: "tcp://host"}, b, "tcp://host:port"},
		{"empty broker", ClientOptions{ID: "a"}, b, "scheme"},
		{"will without payload", ClientOptions{ID: "a", Broker: "mem://", Will: &Will{Topic: "x"}}, b, "non-empty payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(tc.opts, tc.mem)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NewClient: %v, want an error containing %q", err, tc.wantErr)
			}
		})
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
		o := ClientOptions{ID: id, Broker: "mem://", CleanSession: true,
			OnConnectionLost: func(_ paho.Client, err error) { lost <- err }}
		c, err := NewClient(o, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := Wait(ctxT(t), c.Connect()); err != nil {
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
	if _, err := b.DialMem(context.Background()); !errors.Is(err, ErrListenerClosed) || !errors.Is(err, net.ErrClosed) {
		t.Errorf("DialMem after Close: %v, want ErrListenerClosed", err)
	}
	if err := b.Close(ctxT(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A connect attempt after Close fails as a network error, not a refusal.
	c, _ := NewClient(ClientOptions{ID: "late", Broker: "mem://"}, b)
	if err := Wait(ctxT(t), c.Connect()); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("connect after Close: %v, want a network error", err)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	b := startBroker(t, BrokerOptions{})
	c := connect(t, b, ClientOptions{ID: "a", CleanSession: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := neverDone{Token: c.Publish("x", 0, false, "y")}
	if err := Wait(ctx, never); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context: %v", err)
	}
}

// neverDone is a token that never completes.
type neverDone struct{ paho.Token }

func (neverDone) Done() <-chan struct{} { return nil }
