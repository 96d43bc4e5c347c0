package transport

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// InlineBroker is an embedded broker that the process it runs in can
// publish to and subscribe on with no connection between (mochi's inline
// client). fleet/broker's *Broker is one; declaring it here keeps the
// client free of the broker.
type InlineBroker interface {
	// InlineSubscribe routes the messages published on filter to h, in
	// the publisher's goroutine; retained ones arrive before it returns.
	// h must not block or modify payload. unsubscribe removes the route.
	InlineSubscribe(filter string, h func(topic string, payload []byte)) (unsubscribe func(), err error)
	// InlinePublish publishes to every matching subscriber before it
	// returns (queued to each connection, or handed to each inline
	// handler), and stores a retained message.
	InlinePublish(topic string, qos byte, retained bool, payload []byte) error
}

// InlineOptions configures NewInline.
type InlineOptions struct {
	// Will, if set, is published when the link ends without a goodbye
	// (Close(false)), as a broker publishes a session's last will when
	// its connection drops. The leader's is LeaderWill.
	Will *Will
}

// Inline is the leader's link to the broker it embeds: the calls of a
// Session (Publish, Send, Subscribe, Unsubscribe, Close) made on the
// broker directly, with no MQTT connection, packets or client goroutines
// between. It satisfies leader.Link. It is what a leader in the broker's
// process uses; a leader on an external broker uses a Session.
//
// What it keeps of a session:
//   - handlers run one at a time, as on a session's one delivery
//     goroutine, so a handler may decide and apply without a lock; but
//     they run in the publishers' goroutines (a worker's connection, the
//     broker's will), so a handler that blocks holds up that publisher
//     and every delivery behind it: hand messages to a bounded mailbox
//     and return;
//   - the retained messages matching a filter arrive before Subscribe
//     returns;
//   - Close(false) publishes the will, as the broker does when a
//     session's connection dies; Close(true) is the clean disconnect,
//     which publishes none. Either way no handler runs once Close has
//     returned, and later calls fail with ErrClosed.
//
// What it drops: the login and topic policy (it is the broker's own
// process), the PUBACK round trip (Publish returns once every matching
// subscriber has the message queued: that proves no more than a PUBACK
// did), and redialing (there is no connection to lose). Safe for
// concurrent use.
type Inline struct {
	b    InlineBroker
	will *Will

	// deliver lets one handler run at a time, in the order the publishers
	// came to it: a channel's waiting senders go first come, first served,
	// where a sync.Mutex hands itself to whichever waiter the scheduler
	// wakes (FIFO only once one has waited a millisecond of wall time), so
	// that the order of deliveries behind a handler that blocks would
	// change with the host's speed. It is taken after closed is read false
	// and closed read again under it, so that Close, which takes it once
	// after closing, returns with no handler running.
	deliver chan struct{} // a lock: full while a handler runs
	closed  atomic.Bool

	mu   sync.Mutex
	subs map[string][]func() // filter: the unsubscribes of its routes
}

// NewInline returns a link on b, the broker of this process. A Will must
// have a topic, a non-empty payload and QoS 0-2, as a session's.
func NewInline(b InlineBroker, o InlineOptions) (*Inline, error) {
	if b == nil {
		return nil, fmt.Errorf("transport: NewInline: nil InlineBroker; the inline link needs the embedded broker")
	}
	if w := o.Will; w != nil && (w.Topic == "" || len(w.Payload) == 0 || w.QoS > 2) {
		return nil, fmt.Errorf("transport: InlineOptions.Will %+v: want a topic, a non-empty payload and QoS 0-2", *w)
	}
	return &Inline{b: b, will: o.Will, deliver: make(chan struct{}, 1), subs: make(map[string][]func())}, nil
}

// Publish publishes payload and returns once every subscriber matching
// topic has it queued, or with ctx's error if ctx has ended. That proves
// nothing about any subscriber; the leader waits for acks on top.
func (s *Inline) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.publish(topic, qos, retained, payload)
}

// PublishesInline reports true: Publish returns once the broker has
// queued the message, without waiting on any connection.
func (s *Inline) PublishesInline() bool { return true }

// Send is Publish without a context: it does not wait any more than
// Publish does.
func (s *Inline) Send(topic string, qos byte, payload []byte) error {
	return s.publish(topic, qos, false, payload)
}

// SendRetained is Send of a retained message.
func (s *Inline) SendRetained(topic string, qos byte, payload []byte) error {
	return s.publish(topic, qos, true, payload)
}

func (s *Inline) publish(topic string, qos byte, retained bool, payload []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	growStack()
	return s.b.InlinePublish(topic, qos, retained, payload)
}

// growStack makes sure the calling goroutine's stack can take an inline
// publish, which runs the broker's whole fan-out in the caller. The relay
// delivers on goroutines whose stacks start small, and the GC halves
// them again while they wait for an ack; grown step by step as the
// publish went deeper, a stack was copied, every frame of it, more than
// once per message. One frame about as
// large as the publish needs makes the runtime grow the stack once, while
// it is shallow; on a stack already large enough it costs a clear of the
// frame. BenchmarkAckedDeliveries/memory: some 10% less CPU per delivery
// with it (docs/BENCHMARKS.md).
//
//go:noinline
func growStack() byte {
	var frame [publishStack]byte
	return frame[stackAt] // a variable index: the frame must exist
}

// publishStack is about the stack an inline publish takes.
const publishStack = 12 << 10

var stackAt = publishStack - 1

// Subscribe routes the messages published on filter to h, the retained
// ones before it returns. qos is that of a session's subscription and
// changes nothing here: a handler gets every message published at any
// QoS. h runs in the publisher's goroutine, one handler at a time (see
// Inline): it must not block, must not call Publish, and must not modify
// payload, which other subscribers share.
func (s *Inline) Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error {
	if h == nil {
		return fmt.Errorf("transport: subscribe %s: nil handler (an inline link has no default handler)", filter)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("transport: subscribe %s: %w", filter, err)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	unsub, err := s.b.InlineSubscribe(filter, func(topic string, payload []byte) {
		if s.closed.Load() {
			return
		}
		s.deliver <- struct{}{}
		defer func() { <-s.deliver }()
		if !s.closed.Load() {
			h(topic, payload)
		}
	})
	if err != nil {
		return fmt.Errorf("transport: subscribe %s: %w", filter, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() { // Close ran meanwhile and missed this one
		unsub()
		return ErrClosed
	}
	s.subs[filter] = append(s.subs[filter], unsub)
	return nil
}

// Unsubscribe removes the routes of filter that Subscribe made. A
// message already on its way may still arrive.
func (s *Inline) Unsubscribe(filter string) error {
	s.mu.Lock()
	unsubs := s.subs[filter]
	delete(s.subs, filter)
	s.mu.Unlock()
	for _, u := range unsubs {
		u()
	}
	return nil
}

// Close ends the link: every subscription is removed, no handler runs
// once it has returned, and later calls fail with ErrClosed. clean false
// is the link dying without a goodbye (a killed process): the Will, if
// any, is published then, as a broker publishes a dropped session's. It
// must not be called from a handler.
func (s *Inline) Close(clean bool) {
	if s.closed.Swap(true) {
		return
	}
	s.mu.Lock()
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for _, unsubs := range subs {
		for _, u := range unsubs {
			u()
		}
	}
	s.deliver <- struct{}{} // the handler running now, if any, has returned
	<-s.deliver
	if w := s.will; w != nil && !clean {
		_ = s.b.InlinePublish(w.Topic, w.QoS, w.Retained, w.Payload)
	}
}

// Closed reports whether Close has been called.
func (s *Inline) Closed() bool { return s.closed.Load() }
