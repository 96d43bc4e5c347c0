package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Session is a connected MQTT client with the few calls fleetsim's leader
// and workers make: publish (waiting for the broker or not), subscribe,
// close cleanly or abruptly, go silent, a channel that says the
// connection is gone, and Redial to connect again. It satisfies
// leader.Link (and leader.Redialer) and worker.Session. Safe for
// concurrent use.
type Session struct {
	c    paho.Client
	clk  clock.Clock
	conn atomic.Pointer[silentConn]
	// cut is how long a silenced in-memory connection lasts (1.5 x
	// KeepAlive, when a broker's keepalive would end it); 0: for ever.
	cut time.Duration

	mu         sync.Mutex
	lost       chan struct{} // the current connection's
	lostClosed bool
	lostErr    error
	closed     bool           // Close was called: no Redial
	subs       []subscription // made through Subscribe, in order, for Redial
	redial     sync.Mutex     // one Redial at a time

	answers subAnswers // SubscribeNoWait's answers, read in the background
}

// subscription is one Subscribe call, as Redial repeats it.
type subscription struct {
	filter string
	qos    byte
	h      paho.MessageHandler
}

// ErrSubscribeRefused: the broker refused a subscription (its ACL).
var ErrSubscribeRefused = errors.New("transport: subscription refused by the broker")

// ErrClosed: Redial on a session that Close has ended.
var ErrClosed = errors.New("transport: session closed")

// Connect opens a session. opts.OnConnectionLost is wrapped, not replaced.
// It returns when the broker has accepted the CONNECT, or with an error
// naming the broker and the cause (refused login, unreachable, timeout).
func Connect(ctx context.Context, opts ClientOptions, mem MemDialer) (*Session, error) {
	s := &Session{lost: make(chan struct{}), clk: opts.Clock}
	if s.clk == nil {
		s.clk = clock.Real{}
	}
	if strings.HasPrefix(opts.Broker, "mem:") && opts.KeepAlive > 0 {
		s.cut = opts.KeepAlive * 3 / 2
	}
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
	if err := waitConnect(ctx, c.Connect()); err != nil {
		c.Disconnect(0)
		return nil, fmt.Errorf("transport: connect %s as %q: %w", opts.Broker, opts.ID, err)
	}
	return s, nil
}

// markLost closes the current connection's Lost channel, once.
func (s *Session) markLost(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostClosed {
		return
	}
	s.lostClosed = true
	if err != nil {
		s.lostErr = err
	}
	close(s.lost)
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

// waitConnect is wait for a connect token: a refused login is a
// *RefusedError (ErrRefused), which RefusedLogin recognises too.
func waitConnect(ctx context.Context, t paho.Token) error {
	if err := wait(ctx, t); err != nil {
		if ct, ok := t.(*paho.ConnectToken); ok && ctx.Err() == nil {
			return connectError(ct)
		}
		return err
	}
	return nil
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
	return now(s.c.Publish(topic, qos, false, payload))
}

// SendRetained is Send of a retained message: a gateway's stand-in for the
// last will of a device that dropped off it, published from the device's
// loop, which must not wait for the broker.
func (s *Session) SendRetained(topic string, qos byte, payload []byte) error {
	return now(s.c.Publish(topic, qos, true, payload))
}

// now is a token's error if it has one already, else nil.
func now(t paho.Token) error {
	select {
	case <-t.Done():
		return t.Error()
	default:
		return nil
	}
}

// Subscribe subscribes and waits for the broker's answer; a refusal is
// ErrSubscribeRefused. h runs on the client's one delivery goroutine: it
// must not block for long and must not wait for a publish. A nil h adds no
// route of its own: the filter's messages go to ClientOptions.DefaultHandler.
// That is how one session routes for many subscribers (a gateway's
// devices): paho matches every message against every route in turn, while
// one handler can look the topic up in a map. A subscription the broker
// accepted is made again by Redial.
func (s *Session) Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error {
	sub := subscription{filter: filter, qos: qos}
	if h != nil {
		sub.h = func(_ paho.Client, m paho.Message) { h(m.Topic(), m.Payload()) }
	}
	if err := s.subscribe(ctx, sub); err != nil {
		return err
	}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return nil
}

// Unsubscribe asks the broker to drop filter and returns without waiting
// for its answer (a message already on its way may still arrive); Redial
// no longer makes the subscription. It reports only an error the client
// knows at once (not connected).
func (s *Session) Unsubscribe(filter string) error {
	s.mu.Lock()
	s.subs = slices.DeleteFunc(s.subs, func(sub subscription) bool { return sub.filter == filter })
	s.mu.Unlock()
	return now(s.c.Unsubscribe(filter))
}

func (s *Session) subscribe(ctx context.Context, sub subscription) error {
	filter := sub.filter
	for attempt := 1; ; attempt++ {
		t := s.c.Subscribe(filter, sub.qos, sub.h)
		if err := wait(ctx, t); err != nil {
			return fmt.Errorf("transport: subscribe %s: %w", filter, err)
		}
		code := subackCode(t, filter)
		if d, again := retryAfter(code, attempt); again {
			if err := s.retryPause(ctx, d); err != nil {
				return fmt.Errorf("transport: subscribe %s: %w", filter, err)
			}
			continue
		}
		return subackError(filter, code)
	}
}

// retryAfter reports whether a subscription answered code on its
// attempt-th try is made again, and after how long. mochi (2.7.9) checks a
// SUBSCRIBE's packet id against the ids of the QoS 1 messages it is
// sending the client, a space MQTT keeps apart, and refuses the
// subscription when they collide (0x91): a subscription made while
// retained messages pour in (the leader's to the statuses) was lost that
// way, its token complete. The broker's message is acked at once, so a
// moment later the id is free.
func retryAfter(code byte, attempt int) (time.Duration, bool) {
	if code == subackIDInUse && attempt < subscribeAttempts {
		return time.Duration(attempt) * 5 * time.Millisecond, true
	}
	return 0, false
}

// retryPause waits before a refused subscription is made again: d, or on
// a simulation's virtual clock until the process has settled, by when
// the message whose packet id the subscription collided with has been
// acked. A collision depends on which goroutine ran first within an
// instant; the settle keeps it from also moving the simulation's time.
func (s *Session) retryPause(ctx context.Context, d time.Duration) error {
	if clock.Settles(s.clk) {
		return clock.Settle(ctx, s.clk)
	}
	return clock.Sleep(ctx, s.clk, d)
}

// subackError is the error of a subscription's final answer: nil for a
// grant, ErrSubscribeRefused for any failure code.
func subackError(filter string, code byte) error {
	if code >= 0x80 {
		return fmt.Errorf("%w: %s (SUBACK 0x%02x)", ErrSubscribeRefused, filter, code)
	}
	return nil
}

// subackIDInUse is MQTT 5's "packet identifier in use", which mochi also
// sends an MQTT 3.1.1 client in a SUBACK.
const subackIDInUse = 0x91

// subscribeAttempts bounds the retries of a subscription refused for its
// packet id.
const subscribeAttempts = 20

// subackCode returns the broker's answer to a one-filter subscription.
func subackCode(t paho.Token, filter string) byte {
	if st, ok := t.(*paho.SubscribeToken); ok {
		if code, ok := st.Result()[filter]; ok {
			return code
		}
	}
	return 0
}

// closing counts the sessions in Close, for a virtual clock's settle
// check.
var closing = clock.NewHold("MQTT sessions closing")

// Close ends the session. clean sends a DISCONNECT (the broker discards the
// will); otherwise the connection is cut and the broker publishes the will.
// It returns once the client's goroutines have stopped.
func (s *Session) Close(clean bool) {
	if !clean {
		if c := s.conn.Load(); c != nil {
			_ = c.Conn.Close()
		}
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// paho waits up to 100 ms of wall time for its DISCONNECT to go out:
	// a virtual clock must not move meanwhile.
	closing.Add(1)
	s.c.Disconnect(100)
	closing.Add(-1)
	s.answers.stop()
	s.markLost(nil)
}

// Silence makes the connection go quiet both ways without closing it, as a
// network partition does: what the client writes is discarded, what arrives
// is never read. The client's keepalive fails (Lost fires), and the broker,
// hearing nothing for 1.5 × keepalive, closes its side and publishes the
// will. Without a keepalive nobody notices: use one.
//
// On mem://, where no keepalive runs, the session plays the broker's
// part: it cuts the connection 1.5 × KeepAlive after Silence, and both
// sides notice at that moment (the broker publishes the will, Lost fires),
// where over a network the client would notice about half a keepalive
// later, at its own ping timeout.
func (s *Session) Silence() {
	c := s.conn.Load()
	if c == nil || c.silent.Swap(true) {
		return
	}
	if s.cut > 0 {
		s.clk.AfterFunc(s.cut, c.cutOff)
	}
}

// Lost is closed when the connection is lost or the session closed.
// After a successful Redial it returns a new channel, for the new
// connection.
func (s *Session) Lost() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// Err returns why the connection was lost, if it was lost with an error.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lostErr
}

// Closed reports whether Close has been called: Redial cannot succeed.
func (s *Session) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Connected reports whether the connection is up now. It turns false as
// soon as the client sees the connection fail, before Lost is closed
// (paho first fails what was waiting on the connection, then reports the
// loss).
func (s *Session) Connected() bool { return s.c.IsConnectionOpen() }

// Redial connects the session's client again after Lost, with the same
// options (client id, credentials, last will), and makes every
// subscription of Subscribe again, in the order they were made: with a
// clean session the broker has forgotten them. It returns nil once all
// are in place, and Lost then returns a channel for the new connection.
// On a failure the session stays lost: call Redial again (with a
// backoff). After Close it returns ErrClosed (see Closed). paho's own
// auto-reconnect is off (NewClient): it re-subscribes only for a
// persistent session, and its waits are neither jittered nor on the
// caller's clock.
//
// Messages published to the session's topics while it was down are lost
// (clean session) unless retained; the retained ones arrive again with
// the subscriptions.
func (s *Session) Redial(ctx context.Context) error {
	s.redial.Lock()
	defer s.redial.Unlock()
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case !s.lostClosed:
		s.mu.Unlock()
		return nil // connected: nothing to do
	}
	// The new channel before the CONNECT: a connection that fails at once
	// closes this one, not the old.
	s.lost, s.lostClosed, s.lostErr = make(chan struct{}), false, nil
	subs := slices.Clone(s.subs)
	s.mu.Unlock()
	if err := waitConnect(ctx, s.c.Connect()); err != nil {
		if ctx.Err() != nil {
			s.c.Disconnect(0) // stop the attempt still under way
		}
		s.markLost(err)
		return fmt.Errorf("transport: reconnect: %w", err)
	}
	for _, sub := range subs {
		if err := s.subscribe(ctx, sub); err != nil {
			// Half subscribed is not connected: drop it and let the caller
			// try again from the start.
			s.c.Disconnect(0)
			s.markLost(err)
			return fmt.Errorf("transport: reconnect: %w", err)
		}
	}
	return nil
}

// silentConn can be told to stop all traffic without closing, and later
// be cut off as a broker's keepalive would.
type silentConn struct {
	net.Conn
	silent atomic.Bool
	cut    atomic.Bool
}

// errKeepAliveCut is what the client reads from a connection cut off by
// cutOff: a loss, where the closed-connection error of its own Close would
// tell paho the close was deliberate, and it would not report it.
var errKeepAliveCut = errors.New("transport: silenced in-memory connection cut at 1.5 x keepalive")

// cutOff closes the connection; the broker reads EOF and publishes the
// will, the client reads errKeepAliveCut.
func (c *silentConn) cutOff() {
	c.cut.Store(true)
	_ = c.Conn.Close()
}

func (c *silentConn) Write(p []byte) (int, error) {
	if c.cut.Load() {
		return 0, errKeepAliveCut
	}
	if c.silent.Load() {
		return len(p), nil // lost in the partition
	}
	return c.Conn.Write(p)
}

func (c *silentConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if c.cut.Load() {
			return 0, errKeepAliveCut
		}
		if err != nil || !c.silent.Load() {
			return n, err
		}
		// Silent: what arrives is lost; keep reading until the far end
		// gives up and closes, so the reader sees that as the error.
	}
}

// RefusedLogin reports whether err (from Connect) is the broker refusing
// the login: CONNACK "bad user name or password" or "not authorized".
func RefusedLogin(err error) bool {
	return errors.Is(err, packets.ErrorRefusedNotAuthorised) || errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword)
}
