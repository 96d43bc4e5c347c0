package worker

import (
	"context"
	"time"
)

// Session is one MQTT connection of a worker. fleet/transport provides it
// over paho, against the embedded broker or any other.
type Session interface {
	// Publish sends payload and returns once the broker has taken it (QoS 1)
	// or ctx ends.
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
	// Send hands payload to the client and returns without waiting for the
	// broker: for acks and heartbeats sent from the worker's loop, which
	// must never wait on the client's delivery goroutine (that goroutine may
	// be waiting on the loop). A failure it cannot report is covered by the
	// leader's ask timeout.
	Send(topic string, qos byte, payload []byte) error
	// SendRetained is Send of a retained message (the worker's status,
	// announced again from its loop).
	SendRetained(topic string, qos byte, payload []byte) error
	// Subscribe routes messages matching filter to h, called on the
	// client's delivery goroutine.
	Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error
	// Close ends the session: clean sends a DISCONNECT (the broker drops the
	// will); otherwise the connection just drops (the broker publishes the
	// will).
	Close(clean bool)
	// Silence makes the connection go quiet both ways without closing, as
	// a network partition does: keepalives fail, the broker publishes the
	// will, the client notices and Lost fires.
	Silence()
	// Lost is closed when the connection is lost or closed.
	Lost() <-chan struct{}
}

// DialOptions are what a worker asks of its session.
type DialOptions struct {
	ID string // MQTT client id (= worker id)
	// Will is published (retained) by the broker if the session ends
	// without a clean disconnect.
	WillTopic   string
	WillPayload []byte
	KeepAlive   time.Duration

	// lost, if set, is called once when the session is lost, for a
	// worker with no goroutine to wait on Lost (a device on a loop). A
	// gateway's virtual session honours it; other sessions need not.
	lost func(Session)
	// taken, if set, is called once when the broker has taken the
	// session's first retained publish (the worker's "online"), or the
	// session has failed or is lost before: what a Pool's limit on first
	// connects (PoolOptions.FirstDials) waits for. A gateway's virtual
	// session honours it; other sessions need not.
	taken func()
}

// Dialer opens sessions.
type Dialer interface {
	Dial(ctx context.Context, o DialOptions) (Session, error)
}

// DialerFunc adapts a function to Dialer.
type DialerFunc func(ctx context.Context, o DialOptions) (Session, error)

// Dial calls f.
func (f DialerFunc) Dial(ctx context.Context, o DialOptions) (Session, error) { return f(ctx, o) }
