package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// ErrClosed: an inline publish or subscribe on a broker that Close has
// begun to stop.
var ErrClosed = errors.New("broker: closed")

// inlineIDs numbers inline subscriptions: mochi keys them by filter and
// id, so every one gets an id of its own and one process's subscriptions
// to the same filter stay apart (a leader restarted on the same broker).
var inlineIDs atomic.Int64

// InlineSubscribe routes every message published on filter to h, with no
// connection between: the subscription of the process the broker runs in
// (mochi's inline client). It is the leader's way to read the fleet when
// it embeds the broker: no MQTT packets, no write queue, no client
// goroutines.
//
// h runs in the goroutine of whoever published the message (a client's
// connection, an InlinePublish, a will), so it must not block: a blocked
// h stalls that publisher's connection. The retained messages matching
// filter arrive in h before InlineSubscribe returns, in its goroutine.
// payload is shared with the other subscribers and the retained store: h
// must not modify it. The inline client is no session: it has no login,
// no topic policy and no last will. unsubscribe removes the subscription; a message
// already on its way may still arrive.
func (b *Broker) InlineSubscribe(filter string, h func(topic string, payload []byte)) (unsubscribe func(), err error) {
	if b.logs.closing.Load() {
		return nil, ErrClosed
	}
	if h == nil {
		return nil, fmt.Errorf("broker: inline subscription to %q: nil handler", filter)
	}
	if filter == "" || !mqtt.IsValidFilter(filter, false) || mqtt.IsSharedFilter(filter) {
		return nil, fmt.Errorf("broker: inline subscription to %q: not a topic filter (want levels split by /, + for one level, # last)", filter)
	}
	id := int(inlineIDs.Add(1))
	fn := func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) { h(pk.TopicName, pk.Payload) }
	// mochi scans the retained store for the new subscription without the
	// index's locks: the guard keeps retained writes out meanwhile, as it
	// does for a connection's subscription (retain_guard.go).
	b.hook.retain.rw.RLock()
	err = b.srv.Subscribe(filter, id, fn)
	b.hook.retain.rw.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("broker: inline subscription to %q: %w", filter, err)
	}
	return func() { _ = b.srv.Unsubscribe(filter, id) }, nil
}

// InlinePublish publishes payload on topic as the broker's own process,
// with no connection between (see InlineSubscribe): every subscriber
// whose filter matches has it queued (a connection's write queue, or an
// inline subscription's handler called) before it returns, and a
// retained one is stored. Subscribers receive it at qos, or their
// subscription's if lower. It bypasses the topic policy, so only the
// process's own code calls it. An error means nothing was published.
func (b *Broker) InlinePublish(topic string, qos byte, retained bool, payload []byte) error {
	if b.logs.closing.Load() {
		return ErrClosed
	}
	if topic == "" || strings.ContainsAny(topic, "+#") || qos > 2 {
		return fmt.Errorf("broker: inline publish to %q at QoS %d: want a topic without wildcards, QoS 0-2", topic, qos)
	}
	if err := b.srv.Publish(topic, payload, retained, qos); err != nil {
		return fmt.Errorf("broker: inline publish to %q: %w", topic, err)
	}
	return nil
}
