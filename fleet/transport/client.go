package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// ClientOptions configures NewClient. Zero durations take the defaults
// given.
type ClientOptions struct {
	// ID is the MQTT client id; required. A worker uses its worker id.
	ID string
	// Username and Password log in; a worker uses its id and
	// the password of its host's credentials (wire.Credentials), the
	// leader wire.LeaderUsername.
	Username, Password string
	// Broker says where to connect: "mem://" (the embedded broker's
	// in-memory listener: pass the broker to NewClient as its MemDialer),
	// "tcp://host:port" or "mqtt://host:port", and "ssl://", "tls://" or
	// "mqtts://host:port" for TLS. Several network URLs, separated by
	// commas ("tcp://a:1883,tcp://b:1883"), are the nodes of a cluster:
	// a connect, and every reconnect, tries them in turn (see
	// ParseBrokers).
	Broker string
	// TLS configures ssl:// connections (nil: the system's roots).
	TLS *tls.Config
	// KeepAlive is the MQTT keepalive. Default 30 s; negative: off. On
	// mem:// neither side runs a keepalive (an in-memory connection cannot
	// die silently; that saves a goroutine, a timer and a ping round trip
	// per keepalive per client): a positive KeepAlive there only sets how
	// long a connection a Session has silenced lasts (see Session.Silence).
	KeepAlive time.Duration
	// Will, if set, is published by the broker when the connection ends
	// without a DISCONNECT. A worker's will must be on its own status topic.
	Will *Will
	// CleanSession true makes the broker forget the session when the client
	// disconnects. False (the zero value) keeps its subscriptions and
	// unacknowledged QoS 1/2 messages for broker.BrokerOptions.SessionExpiry
	// on the embedded broker; messages queued meanwhile arrive on reconnect,
	// possibly before Subscribe has been called again, so set
	// DefaultHandler too.
	CleanSession bool
	// ConnectTimeout bounds opening the connection and the CONNECT/CONNACK
	// exchange. Default 10 s.
	ConnectTimeout time.Duration
	// WriteTimeout bounds how long Publish waits to hand a message to the
	// connection's writer, and how long a write may block (a broker that
	// does not read). Default 5 s; paho then fails the token and drops the
	// connection.
	WriteTimeout time.Duration
	// ManualAck: paho acknowledges a QoS 1/2 message only when the handler
	// calls Message.Ack (default: as soon as the handler returns).
	ManualAck bool
	// MemBuffer and WriteQueue size a mem:// connection: its per-direction
	// buffer in bytes and how many packets the broker queues for this
	// client before dropping (0: the broker's defaults,
	// broker.BrokerOptions.MemBuffer and MaxWritesPending). The leader,
	// which receives every worker's messages, wants several MiB and a queue
	// as long as the fleet is large, or a burst of heartbeats is dropped
	// (and counted) on its way.
	MemBuffer, WriteQueue int
	// WrapConn, if set, wraps the connection paho will use (Session uses
	// it to make a connection go silent, as in a network partition).
	WrapConn func(net.Conn) net.Conn
	// DefaultHandler receives messages that match no Subscribe callback.
	DefaultHandler paho.MessageHandler
	// OnConnect is called after each successful connection, in a goroutine
	// of paho's; it must return promptly.
	OnConnect func(paho.Client)
	// Clock times what the Session does on its own: the cut of a silenced
	// in-memory connection (Session.Silence) and the pause before a
	// subscription refused for its packet id is made again. A scenario
	// run passes its simulated clock, so that these count in simulated
	// time. Default: the wall clock. (paho's and the broker's own timers
	// stay on the wall clock: see fleet/clock's package doc.)
	Clock clock.Clock
	// OnConnectionLost is called when an established connection drops for
	// any reason other than Disconnect, in a goroutine of paho's; it must
	// return promptly. paho does not reconnect: the caller does, with its
	// own backoff, by calling Connect again.
	OnConnectionLost func(paho.Client, error)
}

// Will is a last-will message. Topic and Payload must not be empty.
type Will struct {
	Topic    string
	Payload  []byte
	QoS      byte
	Retained bool
}

// MemDialer opens in-memory connections to an embedded broker, for
// ClientOptions.Broker "mem://". fleet/broker's *Broker is one; declaring
// it here keeps the client free of the broker.
type MemDialer interface {
	// DialMem connects a new in-memory client and returns its end of the
	// connection: buffer is the per-direction buffer in bytes, writeQueue
	// how many packets the broker may queue for the client before it
	// drops (0: the broker's defaults).
	DialMem(ctx context.Context, buffer, writeQueue int) (net.Conn, error)
}

// NewClient returns a paho client configured for a large fleet, not yet
// connected: call Connect (and wait for it with Wait). mem is the embedded
// broker for "mem://" and may be nil otherwise.
//
// Configuration, and why: MQTT 3.1.1 pinned (paho would otherwise retry a
// refused login as MQTT 3.1, a second attempt for every refusal); no paho
// auto-reconnect or connect retry (fleetsim workers reconnect with their
// own backoff and jitter); an in-memory store; handlers called in order on
// paho's one router goroutine (OrderMatters true: false starts a goroutine
// per message and saves none), so a handler must not block — hand the
// message to a mailbox and return.
//
// A connected client runs 9 goroutines (10 with keepalive, never on
// mem://); Disconnect
// stops them, waiting up to its quiesce argument in milliseconds.
func NewClient(opts ClientOptions, mem MemDialer) (paho.Client, error) {
	if opts.ID == "" {
		return nil, errors.New("transport: ClientOptions.ID is empty; want the client id (a worker's id)")
	}
	urls, err := ParseBrokers(opts.Broker)
	if err != nil {
		return nil, fmt.Errorf("transport: ClientOptions.Broker: %w", err)
	}
	u := urls[0]
	o := paho.NewClientOptions()
	keepAlive := 30 * time.Second
	switch u.Scheme {
	case "mem":
		if mem == nil {
			return nil, fmt.Errorf("transport: ClientOptions.Broker %q needs the embedded broker; NewClient got a nil MemDialer", opts.Broker)
		}
		o.SetCustomOpenConnectionFn(func(_ *url.URL, co paho.ClientOptions) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), co.ConnectTimeout)
			defer cancel()
			c, err := mem.DialMem(ctx, opts.MemBuffer, opts.WriteQueue)
			if err != nil || opts.WrapConn == nil {
				return c, err
			}
			return opts.WrapConn(c), nil
		})
	default:
		o.SetTLSConfig(opts.TLS)
		if opts.WrapConn != nil {
			o.SetCustomOpenConnectionFn(func(u *url.URL, co paho.ClientOptions) (net.Conn, error) {
				return dialWrapped(u, co, opts.WrapConn)
			})
		}
	}
	for _, u := range urls {
		o.AddBroker(u.String())
	}
	if opts.KeepAlive != 0 {
		keepAlive = max(opts.KeepAlive, 0)
	}
	if u.Scheme == "mem" {
		keepAlive = 0
	}
	o.SetKeepAlive(keepAlive)
	// paho waits 10 s for a PINGRESP by default; a client whose network
	// went silent should notice within about two keepalives, as the broker
	// does (1.5 x keepalive).
	if keepAlive > 0 {
		o.SetPingTimeout(keepAlive)
	}
	o.SetClientID(opts.ID)
	o.SetUsername(opts.Username)
	o.SetPassword(opts.Password)
	o.SetCleanSession(opts.CleanSession)
	o.SetProtocolVersion(4)
	o.SetAutoReconnect(false)
	o.SetConnectRetry(false)
	o.SetStore(paho.NewMemoryStore())
	o.SetOrderMatters(true)
	o.SetConnectTimeout(orDefault(opts.ConnectTimeout, 10*time.Second))
	o.SetWriteTimeout(orDefault(opts.WriteTimeout, 5*time.Second))
	o.SetAutoAckDisabled(opts.ManualAck)
	if w := opts.Will; w != nil && (w.Topic == "" || len(w.Payload) == 0 || w.QoS > 2) {
		// mochi refuses an empty will with a code MQTT 3.1.1 lacks, which
		// paho then takes for success.
		return nil, fmt.Errorf("transport: ClientOptions.Will %+v: want a topic, a non-empty payload and QoS 0-2", *w)
	}
	if opts.Will != nil {
		o.SetBinaryWill(opts.Will.Topic, opts.Will.Payload, opts.Will.QoS, opts.Will.Retained)
	}
	if opts.DefaultHandler != nil {
		o.SetDefaultPublishHandler(opts.DefaultHandler)
	}
	if opts.OnConnect != nil {
		o.SetOnConnectHandler(opts.OnConnect)
	}
	if opts.OnConnectionLost != nil {
		o.SetConnectionLostHandler(opts.OnConnectionLost)
	}
	return paho.NewClient(o), nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// dialWrapped opens a TCP or TLS connection as paho would and wraps it.
func dialWrapped(u *url.URL, co paho.ClientOptions, wrap func(net.Conn) net.Conn) (net.Conn, error) {
	d := &net.Dialer{Timeout: co.ConnectTimeout}
	var (
		c   net.Conn
		err error
	)
	switch u.Scheme {
	case "ssl", "tls", "mqtts":
		conf := co.TLSConfig
		if conf == nil {
			conf = &tls.Config{}
		}
		if conf.ServerName == "" {
			conf = conf.Clone()
			conf.ServerName = u.Hostname()
		}
		c, err = tls.DialWithDialer(d, "tcp", u.Host, conf)
	default:
		c, err = d.Dial("tcp", u.Host)
	}
	if err != nil {
		return nil, err
	}
	return wrap(c), nil
}

// ParseBrokers reads a broker list: "mem://" alone, or one or more
// network URLs separated by commas, each tcp:// or mqtt:// (ssl://, tls://
// or mqtts:// for TLS) with a host and a port, the nodes of one broker or
// cluster, tried in this order. The error names the entry at fault and
// says what would be valid.
func ParseBrokers(s string) ([]*url.URL, error) {
	const want = "want tcp://host:port (or mqtt://, ssl://, tls://, mqtts://), several separated by commas, e.g. tcp://10.0.0.1:1883,tcp://10.0.0.2:1883"
	parts := strings.Split(s, ",")
	out := make([]*url.URL, 0, len(parts))
	for i, p := range parts {
		where := fmt.Sprintf("%q", p)
		if len(parts) > 1 {
			where = fmt.Sprintf("entry %d of %d (%q)", i+1, len(parts), p)
		}
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case strings.TrimSpace(p) == "":
			return nil, fmt.Errorf("broker %s: empty: %s", where, want)
		case !strings.Contains(p, "://"):
			return nil, fmt.Errorf("broker %s: no scheme: %s", where, want)
		case err != nil:
			return nil, fmt.Errorf("broker %s: %v: %s", where, err, want)
		case u.Scheme == "mem" && len(parts) > 1:
			return nil, fmt.Errorf("broker %s: the embedded broker's mem:// stands alone, in no list: %s", where, want)
		case u.Scheme == "mem":
		case u.Scheme != "tcp" && u.Scheme != "mqtt" && u.Scheme != "ssl" && u.Scheme != "tls" && u.Scheme != "mqtts":
			return nil, fmt.Errorf("broker %s: scheme %q not supported: %s", where, u.Scheme, want)
		case u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/"):
			return nil, fmt.Errorf("broker %s: not %s://host:port: %s", where, u.Scheme, want)
		}
		out = append(out, u)
	}
	return out, nil
}
