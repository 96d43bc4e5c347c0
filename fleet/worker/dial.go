package worker

import (
	"context"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// MQTTDialer opens worker sessions through fleet/transport: over the
// embedded broker's in-memory listener ("mem://") or to any broker
// ("tcp://host:1883", "ssl://host:8883").
type MQTTDialer struct {
	// Broker is the broker URL.
	Broker string
	// Mem dials the embedded broker (a *broker.Broker), for "mem://".
	Mem transport.MemDialer
	// Credentials, if set, log each worker in with its id and
	// Credentials.Password(id), each gateway with its username and
	// Credentials.Password(username): what a worker host holds, issued for
	// its range of ids ('leader credentials').
	Credentials *wire.Credentials
	// Secret, if set (and Credentials not), logs each worker in with its
	// id and wire.WorkerPassword(Secret, id), each gateway with its
	// username and wire.WorkerPassword(Secret, username): for a process
	// that holds the fleet secret itself, the leader's own (sim).
	Secret []byte
	// Clock times what a session does on its own (see
	// transport.ClientOptions.Clock). Default: the wall clock.
	Clock clock.Clock
}

// Dial connects one worker: client id = worker id, a clean session (the
// leader's outbox, not the broker, keeps what a worker missed), and a
// retained last will (o.WillPayload: "offline <epoch>") on its status topic.
func (d MQTTDialer) Dial(ctx context.Context, o DialOptions) (Session, error) {
	co := transport.ClientOptions{
		ID: o.ID, Broker: d.Broker, KeepAlive: o.KeepAlive, CleanSession: true, Clock: d.Clock,
		Will: &transport.Will{Topic: o.WillTopic, Payload: o.WillPayload, QoS: 1, Retained: true},
	}
	co.Username, co.Password = d.login(o.ID)
	s, err := transport.Connect(ctx, co, d.Mem)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// login returns the username and password of username's login, or
// nothing when the dialer has no credentials.
func (d MQTTDialer) login(username string) (string, string) {
	switch {
	case d.Credentials != nil:
		return username, d.Credentials.Password(username)
	case d.Secret != nil:
		return username, wire.WorkerPassword(d.Secret, username)
	}
	return "", ""
}

// GatewayLink is a gateway's one MQTT session, which carries its devices'
// traffic. *transport.Session provides it.
type GatewayLink interface {
	Session
	// SendRetained is Send of a retained message (a device's will, played
	// by the gateway).
	SendRetained(topic string, qos byte, payload []byte) error
	// Unsubscribe drops a subscription without waiting for the broker.
	Unsubscribe(filter string) error
	// SubscribeNoWait subscribes filter, its messages going to the
	// session's default route (GatewayDialOptions.Route), and returns
	// without waiting for the broker's answer; a refusal read later is
	// passed to refused, on another goroutine.
	SubscribeNoWait(filter string, qos byte, refused func(error)) error
	// SendRetainedDone is SendRetained that returns a channel closed once
	// the broker has taken the message (it may stay open if the session
	// is lost first).
	SendRetainedDone(topic string, qos byte, payload []byte) (<-chan struct{}, error)
}

// GatewayDialOptions are what a gateway asks of its session.
type GatewayDialOptions struct {
	ID    string           // gateway id (its client id is its username, see DialGateway)
	Range wire.DeviceRange // the devices it carries: part of its login
	// Will is published (retained) by the broker if the session ends
	// without a clean disconnect: the gateway's "offline <epoch>".
	WillTopic   string
	WillPayload []byte
	KeepAlive   time.Duration
	// Route receives every message of a subscription made with a nil
	// handler, on the session's delivery goroutine; it must not block.
	Route func(topic string, payload []byte)
}

// GatewayDialer opens gateway sessions.
type GatewayDialer interface {
	DialGateway(ctx context.Context, o GatewayDialOptions) (GatewayLink, error)
}

// DialGateway connects one gateway: client id = its username,
// wire.GatewayUsername(id, range) (a namespace of its own: no worker id
// has a "/"), logged in with that username when Credentials or Secret is
// set, a clean session and a retained last will on the gateway's status
// topic.
func (d MQTTDialer) DialGateway(ctx context.Context, o GatewayDialOptions) (GatewayLink, error) {
	user := wire.GatewayUsername(o.ID, o.Range)
	co := transport.ClientOptions{
		ID: user, Broker: d.Broker, KeepAlive: o.KeepAlive, CleanSession: true, Clock: d.Clock,
		Will:           &transport.Will{Topic: o.WillTopic, Payload: o.WillPayload, QoS: 1, Retained: true},
		DefaultHandler: func(_ paho.Client, m paho.Message) { o.Route(m.Topic(), m.Payload()) },
	}
	co.Username, co.Password = d.login(user)
	s, err := transport.Connect(ctx, co, d.Mem)
	if err != nil {
		return nil, err
	}
	return s, nil
}
