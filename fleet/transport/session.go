package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Session is a connected MQTT client with the few calls fleetsim's leader
// and workers make: publish (waiting for the broker or not), subscribe,
// close cleanly or abruptly, go silent, and a channel that says the
// connection is gone. It satisfies leader.Link and worker.Session. Safe for
// concurrent use.
type Session struct {
	c        paho.Client
	conn     atomic.Pointer[silentConn]
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  atomic.Pointer[error]
}

// ErrSubscribeRefused: the broker refused a subscription (its ACL).
var ErrSubscribeRefused = errors.New("transport: subscription refused by the broker")

// Connect opens a session. opts.OnConnectionLost is wrapped, not replaced.
// It returns when the broker has accepted the CONNECT, or with an error
// naming the broker and the cause (refused login, unreachable, timeout).
func Connect(ctx context.Context, opts ClientOptions, mem *Broker) (*Session, error) {
	s := &Session{lost: make(chan struct{})}
	userLost := opts.OnConnectionLost
	opts.OnConnectionLost = func(c paho.Client, err error) {
		s.markLost(err)
		if userLost != nil {
			userLost(c, err)
		}
	}
	wrap := opts.WrapConn
	opts.WrapConn = func(c net.Conn) net.Conn {
		if wrap != nil {
			c = wrap(c)
		}
		sc := &silentConn{Conn: c}
		s.conn.Store(sc)
		return sc
	}
	c, err := NewClient(opts, mem)
	if err != nil {
		return nil, err
	}
	s.c = c
	if err := wait(ctx, c.Connect()); err != nil {
		c.Disconnect(0)
		return nil, fmt.Errorf("transport: connect %s as %q: %w", opts.Broker, opts.ID, err)
	}
	return s, nil
}

func (s *Session) markLost(err error) {
	s.lostOnce.Do(func() {
		if err != nil {
			s.lostErr.Store(&err)
		}
		close(s.lost)
	})
}

// wait waits for a paho token or ctx.
func wait(ctx context.Context, t paho.Token) error {
	select {
	case <-t.Done():
		return t.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Publish sends payload and waits until the broker has taken it (QoS 1:
// PUBACK; QoS 0: written) or ctx ends. That the broker took it proves
// nothing about any subscriber.
func (s *Session) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	return wait(ctx, s.c.Publish(topic, qos, retained, payload))
}

// Send hands payload to the client without waiting for the broker. It
// reports only an error the client knows at once (not connected).
func (s *Session) Send(topic string, qos byte, payload []byte) error {
	t := s.c.Publish(topic, qos, false, payload)
	select {
	case <-t.Done():
		return t.Error()
	default:
		return nil
	}
}

// Subscribe subscribes and waits for the broker's answer; a refusal is
// ErrSubscribeRefused. h runs on the client's one delivery goroutine: it
// must not block for long and must not wait for a publish.
func (s *Session) Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error {
	t := s.c.Subscribe(filter, qos, func(_ paho.Client, m paho.Message) { h(m.Topic(), m.Payload()) })
	if err := wait(ctx, t); err != nil {
		return fmt.Errorf("transport: subscribe %s: %w", filter, err)
	}
	if st, ok := t.(*paho.SubscribeToken); ok {
		for _, code := range st.Result() {
			if code == 0x80 {
				return fmt.Errorf("%w: %s", ErrSubscribeRefused, filter)
			}
		}
	}
	return nil
}

// Close ends the session. clean sends a DISCONNECT (the broker discards the
// will); otherwise the connection is cut and the broker publishes the will.
// It returns once the client's goroutines have stopped.
func (s *Session) Close(clean bool) {
	if !clean {
		if c := s.conn.Load(); c != nil {
			_ = c.Conn.Close()
		}
	}
	s.c.Disconnect(100)
	s.markLost(nil)
}

// Silence makes the connection go quiet both ways without closing it, as a
// network partition does: what the client writes is discarded, what arrives
// is never read. The client's keepalive fails (Lost fires), and the broker,
// hearing nothing for 1.5 × keepalive, closes its side and publishes the
// will. Without a keepalive nobody notices: use one.
func (s *Session) Silence() {
	if c := s.conn.Load(); c != nil {
		c.silent.Store(true)
	}
}

// Lost is closed when the connection is lost or the session closed.
func (s *Session) Lost() <-chan struct{} { return s.lost }

// Err returns why the connection was lost, if it was lost with an error.
func (s *Session) Err() error {
	if p := s.lostErr.Load(); p != nil {
		return *p
	}
	return nil
}

// silentConn can be told to stop all traffic without closing.
type silentConn struct {
	net.Conn
	silent atomic.Bool
}

func (c *silentConn) Write(p []byte) (int, error) {
	if c.silent.Load() {
		return len(p), nil // lost in the partition
	}
	return c.Conn.Write(p)
}

func (c *silentConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if err != nil || !c.silent.Load() {
			return n, err
		}
		// Silent: what arrives is lost; keep reading until the far end
		// gives up and closes, so the reader sees that as the error.
	}
}
