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
