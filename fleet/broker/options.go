package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// DefaultTCPAddr is the address the fleetsim binaries listen on by
// default: loopback only, MQTT's port.
const DefaultTCPAddr = "127.0.0.1:1883"

// BrokerOptions configures StartBroker. The zero value is an in-memory-only
// broker without authentication, tuned for a large fleet.
//
// The tuning defaults were measured with 10k paho sessions over the
// in-memory listener on a 2-core machine (docs/BENCHMARKS.md, broker);
// each field says what it costs and why its default is what it is.
type BrokerOptions struct {
	// TCPAddr is the host:port of the TCP listener; "" means none (only
	// in-memory clients). Use "127.0.0.1:0" for a free port; Addr reports
	// it. A non-loopback address (":1883" included) needs Auth, or
	// AllowInsecure.
	TCPAddr string
	// TLS, if set, makes the TCP listener speak TLS.
	TLS *tls.Config
	// Auth, if set, is the login and topic policy (see Auth). Without it
	// every client may log in and use any topic.
	Auth *Auth
	// AllowInsecure permits a non-loopback TCPAddr without Auth: anyone who
	// can reach the port can then command the fleet.
	AllowInsecure bool
	// Logger receives mochi's and the broker's logs (nil: discarded).
	// Refusals (logins, topics, packets too large) are logged at Warn, at
	// most one line per client and kind per LogInterval, with their reason
	// and size, never a payload; so is the first drop for each connection.
	Logger *slog.Logger

	// MaxWritesPending is how many outbound packets the broker may queue
	// for a client before further messages to it are dropped and counted
	// (Stats.PublishDropped). Default 128. mochi's default, 8,192, is a
	// channel of 8,192 pointers allocated up front for every client: 64 KiB
	// each, 6.4 GB at 100k sessions, for workers that receive a command now
	// and then; 128 slots cost 1 KiB. A queue holds that many packets plus
	// the connection's buffer (64 KiB in memory, the socket buffer on TCP)
	// before a drop. The leader needs far more: give it its own with
	// transport.ClientOptions.WriteQueue (in-memory clients only).
	MaxWritesPending int
	// MaxInflight is how many QoS 1/2 messages a client may have
	// unacknowledged before further QoS 1/2 deliveries to it are refused
	// (Stats.InflightDropped). Default 65,535, the most a packet id can
	// tell apart: a map that costs nothing until used, though a client
	// that reads but never acknowledges can pin that many packets (some
	// 64 MB of small ones). A subscription to
	// the fleet's retained statuses receives one per worker at once, all
	// in flight together: at mochi's default of 8,192 a leader restarted
	// at 10,000 workers was refused 1,809 of them and never learned those
	// workers were online. A leader with a deeper WriteQueue takes the
	// workers' messages at QoS 0 — fleetsim acknowledges deliveries in the
	// application anyway — and is not bounded by it; its statuses are.
	MaxInflight int
	// ReceiveMaximum is how many QoS 2 messages (QoS 1 is released at once)
	// a client may have in flight to the broker before it is disconnected.
	// Default 1,024, mochi's: a counter, no memory.
	ReceiveMaximum int
	// SessionExpiry is how long the broker keeps the session of a client
	// that connected with CleanSession false after it goes away. Default 5
	// minutes: longer than a reconnect backoff, while a fleet offline for
	// hours does not pin its sessions and undelivered QoS 1 messages in
	// memory (fleetsim's outbox, not the broker, stores and forwards).
	// mochi's default is 136 years.
	SessionExpiry time.Duration
	// SysInterval is how often mochi refreshes its $SYS topics; each
	// refresh stops the world for runtime.ReadMemStats. Default 1 minute
	// (mochi: 1 s); fleetsim does not use $SYS and Auth closes it.
	SysInterval time.Duration
	// ExpiryScan is how often mochi looks for expired sessions, expired
	// in-flight messages and expired retained messages, each time walking
	// a copy of every client (or retained message). Default 10 s (mochi:
	// 1 s, fixed): a session is forgotten up to this long after
	// SessionExpiry, and MQTT 5 message expiry is enforced as late. At
	// one second the scans were an idle broker's only work, a fifth of a
	// core at 40k sessions.
	ExpiryScan time.Duration
	// ReadBuffer is the size of the broker's read buffer per client.
	// Default 1 KiB (mochi: 2 KiB): fleetsim messages are a few hundred
	// bytes, and a larger packet is read straight through; 1 KiB less per
	// client is 100 MB less at 100k sessions.
	ReadBuffer int
	// WriteBuffer is how many bytes mochi gathers for a client with a
	// backlog before it writes them out. Default 2 KiB, mochi's; it is
	// allocated only while a backlog lasts.
	WriteBuffer int
	// MemBuffer is the per-direction buffer of in-memory connections
	// (default DefaultMemBuffer, 64 KiB). It is a bound, not an allocation:
	// an idle connection holds no buffer.
	MemBuffer int
	// HandshakeTimeout is how long a TCP client has to send its CONNECT.
	// Default 10 s. mochi 2.7.9 alone waits forever.
	HandshakeTimeout time.Duration

	// MaxPacketSize is the longest MQTT packet, fixed header included, a
	// TCP client may send. Default DefaultMaxPacketSize (1 MiB): a
	// fleetsim message is at most a 64 KiB envelope, and a deploy request
	// of 1 MiB names some 80,000 workers. A packet announcing more is
	// refused from its fixed header, before its body is read or any
	// buffer is allocated for it: the connection is closed and counted
	// (Stats.PacketTooLarge). In-memory clients (the simulator's workers
	// and the leader in the same process, whose stats reports grow with
	// its deploys) are not limited.
	MaxPacketSize int
	// MaxConnectSize bounds a TCP client's first packet, its CONNECT,
	// which the broker reads from anyone, before the login is checked.
	// Default DefaultMaxConnectSize (4 KiB; a fleetsim CONNECT, will
	// included, is under 500 bytes), and never more than MaxPacketSize.
	MaxConnectSize int
	// PacketReadTimeout is how long a TCP client has to send the rest of
	// a packet it has begun, counting the time the broker waits to read
	// it, whatever the client's keepalive: one that takes longer is
	// disconnected (Stats.PacketTimeouts). mochi bounds a packet's arrival
	// only by the keepalive (1.5 times it), and keepalive 0 means never,
	// while it holds a buffer of the whole announced body from the
	// packet's fixed header on. Default 10 s, as HandshakeTimeout: at that
	// pace a 64 KiB message needs 53 kbit/s and a 1 MiB deploy request
	// 840 kbit/s. Negative: no deadline. A deadline on the connection,
	// so wall time.
	PacketReadTimeout time.Duration
	// MaxConnections bounds the TCP connections open at once, in their
	// handshake or logged in: one more is closed as it is accepted, before
	// anything is read from it (Stats.ConnectionsRefused). Default
	// DefaultMaxConnections (10,000): an idle logged-in TCP session costs
	// the broker about 29 KB of heap and goroutine stacks
	// (docs/BENCHMARKS.md), so the cap holds them to some 300 MB, and to
	// well under the file
	// descriptors a process gets; a larger fleet over TCP puts its
	// workers behind gateways or raises it. In-memory connections are
	// not counted. Negative: no cap.
	MaxConnections int
	// MaxPartialBytes bounds the bytes the broker holds, across TCP
	// connections, for packets it has begun to read and not finished:
	// mochi allocates a packet's whole body as soon as it has read its
	// fixed header. A packet whose body would take the total over it is
	// refused from its header, unread, and its connection closed
	// (Stats.PartialBudget). Default DefaultMaxPartialBytes (64 MiB: 64
	// deploy requests of 1 MiB at once, thousands of fleetsim messages),
	// or MaxPacketSize if that is larger; at least MaxPacketSize. The
	// leader's login is not counted. Negative: no bound.
	MaxPartialBytes int64
	// RateLimit is what each device may publish over a TCP login: a worker
	// gets it once, a gateway once per device in its range, the leader is
	// not limited. What a client publishes over it is dropped and counted
	// (Stats.RateLimited); a QoS 1 publish is still acknowledged, as
	// fleetsim's workers get their answers from the leader and ask again.
	// Without Auth, a client that gives no username is not limited
	// either: the broker cannot tell a worker from a gateway. In-memory
	// clients (the process's own) are not limited. Zero fields take
	// DefaultRateLimit's; see there for why. The time is Clock's.
	RateLimit RateLimit

	// Clock times the inbound rate limits and the refusal log's rate
	// limit. Default: the wall clock.
	Clock clock.Clock
	// LogInterval is the rate limit of the refusal log: at most one line
	// per client (per remote host before a login passed) and kind of
	// refusal per interval, saying how many it held back since the last.
	// Every refusal is counted all the same (Stats). Default 10 s.
	LogInterval time.Duration
}

// DefaultMaxPacketSize and DefaultMaxConnectSize are the defaults of
// BrokerOptions.MaxPacketSize and MaxConnectSize.
const (
	DefaultMaxPacketSize  = 1 << 20
	DefaultMaxConnectSize = 4 << 10
)

// DefaultMaxConnections, DefaultMaxPartialBytes and
// DefaultPacketReadTimeout are the defaults of BrokerOptions'
// MaxConnections, MaxPartialBytes and PacketReadTimeout.
const (
	DefaultMaxConnections    = 10_000
	DefaultMaxPartialBytes   = 64 << 20
	DefaultPacketReadTimeout = 10 * time.Second
)

// maxMQTTPacket is the longest packet MQTT can frame: a remaining length
// of 268,435,455 bytes, plus a 5-byte fixed header.
const maxMQTTPacket = 268_435_455 + 5

// withDefaults returns o with zero tuning fields set to their defaults.
func (o BrokerOptions) withDefaults() BrokerOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxWritesPending, 128)
	def(&o.MaxInflight, math.MaxUint16)
	def(&o.ReceiveMaximum, 1024)
	def(&o.ReadBuffer, 1024)
	def(&o.WriteBuffer, 2048)
	def(&o.MemBuffer, DefaultMemBuffer)
	if o.SessionExpiry <= 0 {
		o.SessionExpiry = 5 * time.Minute
	}
	if o.SysInterval <= 0 {
		o.SysInterval = time.Minute
	}
	if o.ExpiryScan <= 0 {
		o.ExpiryScan = 10 * time.Second
	}
	def(&o.MaxPacketSize, DefaultMaxPacketSize)
	def(&o.MaxConnectSize, DefaultMaxConnectSize)
	o.MaxConnectSize = min(o.MaxConnectSize, o.MaxPacketSize)
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.LogInterval <= 0 {
		o.LogInterval = 10 * time.Second
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.PacketReadTimeout == 0 {
		o.PacketReadTimeout = DefaultPacketReadTimeout
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxPartialBytes == 0 {
		o.MaxPartialBytes = max(DefaultMaxPartialBytes, int64(o.MaxPacketSize))
	}
	o.RateLimit = o.RateLimit.withDefaults()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// validate checks o (after withDefaults); errors name the field.
func (o BrokerOptions) validate() error {
	if o.MaxInflight > math.MaxUint16 || o.ReceiveMaximum > math.MaxUint16 {
		return fmt.Errorf("broker: MaxInflight %d / ReceiveMaximum %d: each must be at most %d",
			o.MaxInflight, o.ReceiveMaximum, math.MaxUint16)
	}
	if o.MaxWritesPending > math.MaxInt32 {
		return fmt.Errorf("broker: MaxWritesPending %d: must be at most %d", o.MaxWritesPending, math.MaxInt32)
	}
	if o.MaxPacketSize > maxMQTTPacket {
		return fmt.Errorf("broker: MaxPacketSize %d: must be at most %d, the longest packet MQTT can frame", o.MaxPacketSize, maxMQTTPacket)
	}
	if o.MaxPartialBytes > 0 && o.MaxPartialBytes < int64(o.MaxPacketSize) {
		return fmt.Errorf("broker: MaxPartialBytes %d: must be at least MaxPacketSize (%d), or no packet of that size could be read", o.MaxPartialBytes, o.MaxPacketSize)
	}
	if err := o.RateLimit.validate(); err != nil {
		return err
	}
	if o.SessionExpiry > math.MaxUint32*time.Second {
		return fmt.Errorf("broker: SessionExpiry %v: must be at most %v", o.SessionExpiry, math.MaxUint32*time.Second)
	}
	if o.Auth != nil {
		if err := o.Auth.validate(); err != nil {
			return err
		}
	}
	if o.TCPAddr == "" {
		if o.TLS != nil {
			return errors.New("broker: TLS is set but TCPAddr is empty; TLS applies to the TCP listener")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(o.TCPAddr)
	if err != nil {
		return fmt.Errorf("broker: TCPAddr %q: %v (want host:port, e.g. %s)", o.TCPAddr, err, DefaultTCPAddr)
	}
	if !isLoopback(host) && o.Auth == nil && !o.AllowInsecure {
		return fmt.Errorf("broker: TCPAddr %q is not a loopback address and Auth is not set: "+
			"anyone who can reach it could command the fleet; set Auth, listen on 127.0.0.1, "+
			"or set AllowInsecure if that is really what you want", o.TCPAddr)
	}
	return nil
}

// isLoopback: "localhost" or a loopback IP. An empty host means every
// interface, and a host name other than localhost may resolve to anything:
// neither is loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
