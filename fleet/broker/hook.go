package broker

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/fleetsim/fleetsim/fleet/ratelog"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Stats is a point-in-time view of a Broker's counters. Each count is
// exact: it is taken in the broker hook that mochi calls for every such
// event (or, for InflightDropped, mochi's own counter, which has no hook).
type Stats struct {
	// ClientsConnected is the number of sessions up now:
	// Connects - Disconnects. A client may read its CONNACK a moment
	// before its session is counted; once the broker has answered any
	// later packet of the client (a PUBACK, a SUBACK), it is.
	ClientsConnected int64
	// Connects counts sessions established (CONNACK sent to an accepted
	// client); Disconnects counts established sessions that ended, for
	// any reason (client DISCONNECT, lost connection, takeover, shutdown).
	Connects, Disconnects uint64
	// AuthDenied counts refused logins (bad credentials, client id not the
	// username, will topic not allowed).
	AuthDenied uint64
	// PacketTooLarge counts TCP connections closed for announcing a packet
	// longer than BrokerOptions.MaxPacketSize (MaxConnectSize for the
	// CONNECT), refused from its fixed header before its body was read.
	PacketTooLarge uint64
	// ACLDenied counts refused publishes, subscriptions and deliveries. A
	// refused QoS 0 publish is dropped; a refused QoS 1/2 publish from an
	// MQTT 3.1.1 client makes mochi disconnect the client; a refused
	// subscription gets SUBACK failure (0x80).
	ACLDenied uint64
	// PublishDropped counts messages not delivered to a subscriber because
	// its write queue (BrokerOptions.MaxWritesPending) was full: a slow
	// reader. Any QoS.
	PublishDropped uint64
	// QosDropped counts QoS 1/2 messages abandoned before their
	// acknowledgement: a clean-session client left with messages in
	// flight, or a flight expired.
	QosDropped uint64
	// InflightDropped counts QoS 1/2 deliveries refused because the
	// subscriber already had BrokerOptions.MaxInflight unacknowledged.
	InflightDropped uint64

	// RateLimited counts messages a TCP client published over its
	// inbound rate limit (BrokerOptions.RateLimit), dropped unsent to any
	// subscriber (a QoS 1 one acknowledged all the same).
	RateLimited uint64
	// PacketTimeouts counts TCP connections closed for a packet begun and
	// not received whole within BrokerOptions.PacketReadTimeout.
	PacketTimeouts uint64
	// PartialBudget counts TCP connections closed for a packet whose body
	// would have taken the bytes held for partial packets over
	// BrokerOptions.MaxPartialBytes, refused from its fixed header.
	PartialBudget uint64
	// ConnectionsRefused counts TCP connections closed as they were
	// accepted, with BrokerOptions.MaxConnections open.
	ConnectionsRefused uint64
	// TCPConnections is the number of TCP connections open now, in their
	// handshake or logged in (what MaxConnections bounds).
	TCPConnections int64
	// PartialBytes is the number of bytes held now for the partial
	// packets of TCP clients (what MaxPartialBytes bounds).
	PartialBytes int64
}

// hook is the fleetsim broker hook: login and topic policy (or allow-all
// when there is no Auth), the Stats counters, and the refusal log.
type hook struct {
	mqtt.HookBase
	srv    *mqtt.Server // set by StartBroker before the server starts
	policy *policy      // nil: everyone may do anything
	log    *slog.Logger
	lim    *ratelog.Limiter // refusal lines: one per client (or remote host) and kind per interval

	connects, disconnects      atomic.Uint64
	authDenied, aclDenied      atomic.Uint64
	packetTooLarge             atomic.Uint64
	publishDropped, qosDropped atomic.Uint64
	rateLimited, packetTimeout atomic.Uint64
	partialBudget, connsFull   atomic.Uint64

	rates  *rateLimiter // TCP clients' inbound rate limits; nil: none
	mu     sync.Mutex
	warned map[*mqtt.Client]warnKind // first of each kind logged

	gate connectGate // one connect per client id at a time (takeover.go)

	retain          retainGuard // retained writes apart from retained scans (retain_guard.go)
	retainAvailable bool        // the broker keeps retained messages: set by StartBroker

	// Tests only: called as a connection starts waiting for the cleanup
	// of an earlier session of its client id, and as a session ends.
	testTakeoverWait func(clientID string)
	testUnsubscribed func(cl *mqtt.Client)
}

// warnKind is a bit set of what has been logged for one connection.
type warnKind uint8

const (
	warnPublishDropped warnKind = 1 << iota
	warnQosDropped
)

func newHook(p *policy, log *slog.Logger, lim *ratelog.Limiter) *hook {
	return &hook{policy: p, log: log, lim: lim, warned: make(map[*mqtt.Client]warnKind)}
}

func (h *hook) ID() string { return "fleetsim" }

func (h *hook) Provides(b byte) bool {
	switch b {
	case mqtt.OnConnect, mqtt.OnConnectAuthenticate, mqtt.OnACLCheck, mqtt.OnSessionEstablished,
		mqtt.OnDisconnect, mqtt.OnPublishDropped, mqtt.OnQosDropped, mqtt.OnUnsubscribed,
		mqtt.OnSubscribed, mqtt.OnPacketSent, mqtt.OnPacketProcessed, mqtt.OnPublish, mqtt.OnWill, mqtt.OnRetainMessage:
		return true
	}
	return false
}

// authenticate checks cl's login against the policy. A refused login is
// answered here with CONNACK "bad user name or password" (mochi sends an
// MQTT 3.1.1 client "not authorized", 5), counted and logged, and its
// error ends the connection: mochi returns an OnConnect error at once,
// before it looks at any session.
func (h *hook) authenticate(cl *mqtt.Client, pk packets.Packet) error {
	if h.policy == nil {
		return nil
	}
	l := loginReq{clientID: cl.ID, username: string(pk.Connect.Username), password: pk.Connect.Password}
	if pk.Connect.WillFlag {
		l.willTopic = pk.Connect.WillTopic
	}
	reason := h.policy.check(l)
	if reason == "" {
		return nil
	}
	h.authDenied.Add(1)
	// Keyed by remote host: the client id and username are whatever the
	// refused party chose to send.
	h.lim.Warn(h.log, "login from "+remoteHost(cl.Net.Remote), "login refused", "reason", ratelog.Brief(reason, 200),
		"client", ratelog.Brief(cl.ID, 64), "username", ratelog.Brief(l.username, 64), "remote", cl.Net.Remote)
	if h.srv != nil {
		if err := h.srv.SendConnack(cl, packets.ErrBadUsernameOrPassword, false, nil); err != nil {
			return fmt.Errorf("login refused (%s); CONNACK not sent: %w", reason, err)
		}
	}
	return packets.ErrBadUsernameOrPassword
}

// OnConnectAuthenticate lets every connection that reached it in: OnConnect
// has already refused the rest. (mochi refuses a login that no hook
// accepts, so the hook must still provide it.)
func (h *hook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool { return true }

func (h *hook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	if h.policy == nil || h.policy.allowed(string(cl.Properties.Username), cl.ID, topic, write) {
		return true
	}
	h.aclDenied.Add(1)
	op := "subscribe to or receive"
	if write {
		op = "publish to"
	}
	h.lim.Warn(h.log, "topic by "+cl.ID, "topic refused", "client", cl.ID, "username", string(cl.Properties.Username),
		"op", op, "topic", ratelog.Brief(topic, 128))
	return false
}

// connRefused counts and logs a packet refused by a limitConn (err: a
// *PacketTooLargeError, *PacketTimeoutError or *PartialBudgetError); it
// runs on the connection's goroutine, before the broker sees the packet.
func (h *hook) connRefused(c *limitConn, err error) {
	var kind, msg string
	var args []any
	switch e := err.(type) {
	case *PacketTooLargeError:
		h.packetTooLarge.Add(1)
		kind, msg, args = "packet", "packet too large; connection closed", []any{"packet", e.Packet, "size", e.Size, "limit", e.Limit}
	case *PacketTimeoutError:
		h.packetTimeout.Add(1)
		kind, msg, args = "slow packet", "packet not received in time; connection closed",
			[]any{"packet", e.Packet, "size", e.Size, "missing", e.Missing, "timeout", e.Timeout}
	case *PartialBudgetError:
		h.partialBudget.Add(1)
		kind, msg, args = "partial budget", "too many bytes held for partial packets; connection closed",
			[]any{"packet", e.Packet, "size", e.Size, "held", e.Held, "limit", e.Limit}
	default:
		return
	}
	remote := c.RemoteAddr().String()
	key := kind + " from host " + remoteHost(remote)
	args = append(args, "remote", remote)
	if id := c.client.Load(); id != nil {
		key, args = kind+" from "+*id, append(args, "client", *id)
	}
	h.lim.Warn(h.log, key, msg, args...)
}

// connsFull counts and logs a TCP connection closed as it was accepted,
// with BrokerOptions.MaxConnections open.
func (h *hook) connFull(c net.Conn, limit int) {
	h.connsFull.Add(1)
	remote := c.RemoteAddr().String()
	h.lim.Warn(h.log, "connection from host "+remoteHost(remote), "too many connections; connection closed unread",
		"limit", limit, "remote", remote)
}

func (h *hook) OnSessionEstablished(cl *mqtt.Client, pk packets.Packet) {
	h.gate.leave(cl) // registered in the client list: the next connect of its id may go on
	h.connects.Add(1)
	if c := limitConnOf(cl.Net.Conn); c != nil {
		id := cl.ID
		c.client.Store(&id) // its refusals are logged by client from now on
		user := string(cl.Properties.Username)
		c.exempt.Store(user == wire.LeaderUsername)
		if n := devices(user); n > 0 && h.rates != nil {
			c.bucket = h.rates.attach(id, n)
		}
	}
}

func (h *hook) OnDisconnect(cl *mqtt.Client, err error, expire bool) {
	h.disconnects.Add(1)
	h.mu.Lock()
	delete(h.warned, cl)
	h.mu.Unlock()
	if c := limitConnOf(cl.Net.Conn); c != nil && c.bucket != nil {
		h.rates.detach(c.bucket)
		c.bucket = nil
	}
}

// OnUnsubscribed runs as a session's subscriptions are removed, which a
// clean session's cleanup does just before it deletes the session from
// the client list: tests hold a cleanup there.
func (h *hook) OnUnsubscribed(cl *mqtt.Client, _ packets.Packet) {
	if h.testUnsubscribed != nil {
		h.testUnsubscribed(cl)
	}
}

func (h *hook) OnPublishDropped(cl *mqtt.Client, pk packets.Packet) {
	h.publishDropped.Add(1)
	if h.first(cl, warnPublishDropped) {
		h.log.Warn("message dropped: the client's write queue is full (a slow reader); further drops are counted, not logged",
			"client", cl.ID, "topic", pk.TopicName)
	}
}

func (h *hook) OnQosDropped(cl *mqtt.Client, pk packets.Packet) {
	h.qosDropped.Add(1)
	if h.first(cl, warnQosDropped) {
		h.log.Warn("QoS message abandoned unacknowledged; further ones are counted, not logged",
			"client", cl.ID, "packet_id", pk.PacketID)
	}
}

// first reports whether this is the first event of kind k for cl's
// connection. A client that has already disconnected is not remembered
// (OnDisconnect, which forgets clients, has run or is about to: mochi
// closes the client before calling it), so the map cannot leak; its events
// are counted but not logged.
func (h *hook) first(cl *mqtt.Client, k warnKind) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cl.Closed() {
		return false
	}
	seen := h.warned[cl]
	h.warned[cl] = seen | k
	return seen&k == 0
}

// stats reads the counters. Disconnects is read before Connects, so
// ClientsConnected is never negative.
func (h *hook) stats(info *mqtt.Server) Stats {
	s := Stats{Disconnects: h.disconnects.Load()}
	s.Connects = h.connects.Load()
	s.ClientsConnected = int64(s.Connects - s.Disconnects)
	s.AuthDenied = h.authDenied.Load()
	s.PacketTooLarge = h.packetTooLarge.Load()
	s.ACLDenied = h.aclDenied.Load()
	s.PublishDropped = h.publishDropped.Load()
	s.QosDropped = h.qosDropped.Load()
	s.InflightDropped = uint64(atomic.LoadInt64(&info.Info.InflightDropped))
	s.RateLimited = h.rateLimited.Load()
	s.PacketTimeouts = h.packetTimeout.Load()
	s.PartialBudget = h.partialBudget.Load()
	s.ConnectionsRefused = h.connsFull.Load()
	return s
}

// remoteHost is addr without its port (addr itself if it has none): the
// key of a refusal before a login has passed.
func remoteHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
