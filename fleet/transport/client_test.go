package transport

import (
	"context"
	"errors"
	"strings"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

func TestNewClientRejectsBadOptions(t *testing.T) {
	b := startBroker(t, broker.BrokerOptions{})
	for _, tc := range []struct {
		name    string
		opts    ClientOptions
		mem     MemDialer
		wantErr string
	}{
		{"no id", ClientOptions{Broker: "mem://"}, b, "ID is empty"},
		{"mem without broker", ClientOptions{ID: "a", Broker: "mem://"}, nil, "nil MemDialer"},
		{"unknown scheme", ClientOptions{ID: "a", Broker: "ws://h:1"}, b, `scheme "ws"`},
		{"no port", ClientOptions{ID: "a", Broker: "tcp://host"}, b, "tcp://host:port"},
		{"empty broker", ClientOptions{ID: "a"}, b, `broker "": empty`},
		{"a bad entry in a list", ClientOptions{ID: "a", Broker: "tcp://h:1,tcp://h"}, b, `entry 2 of 2 ("tcp://h"): not tcp://host:port`},
		{"an empty entry in a list", ClientOptions{ID: "a", Broker: "tcp://h:1,"}, b, `entry 2 of 2 (""): empty`},
		{"mem in a list", ClientOptions{ID: "a", Broker: "mem://,tcp://h:1"}, b, "stands alone"},
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

func TestWaitHonoursContext(t *testing.T) {
	b := startBroker(t, broker.BrokerOptions{})
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
