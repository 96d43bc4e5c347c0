package worker

import (
	"context"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// MQTTDialer opens worker sessions through fleet/transport: over the
// embedded broker's in-memory listener ("mem://") or to any broker
// ("tcp://host:1883", "ssl://host:8883").
type MQTTDialer struct {
	// Broker is the broker URL.
	Broker string
	// Mem is the embedded broker, for "mem://".
	Mem *transport.Broker
	// Secret, if set, logs each worker in with its id and
	// transport.WorkerPassword(Secret, id).
	Secret []byte
}

// Dial connects one worker: client id = worker id, a clean session (the
// leader's outbox, not the broker, keeps what a worker missed), and a
// retained last will (o.WillPayload: "offline <epoch>") on its status topic.
func (d MQTTDialer) Dial(ctx context.Context, o DialOptions) (Session, error) {
	co := transport.ClientOptions{
		ID: o.ID, Broker: d.Broker, KeepAlive: o.KeepAlive, CleanSession: true,
		Will: &transport.Will{Topic: o.WillTopic, Payload: o.WillPayload, QoS: 1, Retained: true},
	}
	if d.Secret != nil {
		co.Username, co.Password = o.ID, transport.WorkerPassword(d.Secret, o.ID)
	}
	s, err := transport.Connect(ctx, co, d.Mem)
	if err != nil {
		return nil, err
	}
	return s, nil
}
