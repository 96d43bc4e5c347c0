package leader

import "context"

// Link is the leader's MQTT session as the leader uses it.
// fleet/transport implements it over paho.
type Link interface {
	// Publish sends payload and returns once the broker has taken it (QoS 1:
	// its PUBACK) or ctx ends. That proves nothing about the receiver; the
	// leader waits for application-level acks on top.
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
	// Send hands payload to the client without waiting for the broker.
	Send(topic string, qos byte, payload []byte) error
	// Subscribe routes messages matching filter to h. h runs on the
	// client's delivery goroutine: it must not block for long and must not
	// call Publish.
	Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error
}

// Redialer is a Link that says when its connection is gone and can dial
// it again: transport.Session. A leader on a Redialer keeps its session:
// it pauses its relay while the session is down, dials again with
// Config.Reconnect's backoff, and resumes (see Run).
type Redialer interface {
	Link
	// Connected reports whether the connection is up now; it turns false
	// as soon as the connection fails, before Lost is closed.
	Connected() bool
	// Lost is closed when the current connection is lost; after a
	// successful Redial it returns a channel for the new connection.
	Lost() <-chan struct{}
	// Err says why the connection was lost, if it was lost with an error.
	Err() error
	// Redial connects again and makes every subscription made through
	// Subscribe again. On an error the link stays lost.
	Redial(ctx context.Context) error
	// Closed reports whether the link's owner has closed it for good:
	// Redial cannot succeed, and the leader stops trying.
	Closed() bool
}
