package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/fleetsim/fleetsim/fleet/ratelog"
)

// Broker is an embedded mochi MQTT broker with an in-memory listener, an
// optional TCP (or TLS) listener, fleetsim's login and topic policy, and
// exact counters. Its methods are safe for concurrent use.
type Broker struct {
	srv  *mqtt.Server
	mem  *MemListener
	tcp  *tcpListener
	hook *hook
	logs *logState

	partial *partialBudget // the TCP clients' partial packets; nil: unbounded

	closeOnce sync.Once
	done      chan struct{} // closed when shutdown has finished
}

// StartBroker validates opts, starts the broker and returns once its
// listeners are serving. Errors name the option at fault (a non-loopback
// TCPAddr without Auth, an Auth without a password, a port in use, ...).
func StartBroker(opts BrokerOptions) (*Broker, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	lim := ratelog.New(ratelog.Options{Clock: o.Clock, Every: o.LogInterval})
	wh, st := newWatchHandler(o.Logger.Handler(), lim)
	log := slog.New(wh)

	caps := mqtt.NewDefaultServerCapabilities()
	caps.MaximumClientWritesPending = int32(o.MaxWritesPending)
	caps.MaximumInflight = uint16(o.MaxInflight)
	caps.ReceiveMaximum = uint16(o.ReceiveMaximum)
	caps.MaximumSessionExpiryInterval = uint32(o.SessionExpiry.Seconds())
	// mochi deletes any retained message older than this, even a worker's
	// "online" status that is still true: 0 turns that off. (Messages in
	// flight are bounded by MaxInflight and SessionExpiry instead.)
	caps.MaximumMessageExpiryInterval = 0
	srv := mqtt.New(&mqtt.Options{
		Capabilities:             caps,
		ClientNetReadBufferSize:  o.ReadBuffer,
		ClientNetWriteBufferSize: o.WriteBuffer,
		SysTopicResendInterval:   max(int64(o.SysInterval.Seconds()), 1),
		Logger:                   log,
		// The process's own client (InlineSubscribe, InlinePublish): the
		// embedding leader's, with no connection to pay for.
		InlineClient: true,
	})
	if err := setScanInterval(srv, o.ExpiryScan); err != nil {
		return nil, err
	}

	var p *policy
	if o.Auth != nil {
		p = newPolicy(o.Auth)
	}
	b := &Broker{srv: srv, hook: newHook(p, log, lim), logs: st, done: make(chan struct{})}
	b.hook.srv = srv
	b.hook.retainAvailable = caps.RetainAvailable != 0
	if err := srv.AddHook(b.hook, nil); err != nil {
		return nil, fmt.Errorf("broker: add hook: %w", err)
	}
	queues := &writeQueues{caps: caps, def: caps.MaximumClientWritesPending}
	b.mem = NewMemListener("mem", o.MemBuffer)
	b.mem.set.queues = queues
	if err := srv.AddListener(b.mem); err != nil {
		return nil, fmt.Errorf("broker: add in-memory listener: %w", err)
	}
	if o.TCPAddr != "" {
		b.tcp = newTCPListener("tcp", o.TCPAddr, o.TLS, o.HandshakeTimeout)
		lims := &connLimits{connectMax: o.MaxConnectSize, max: o.MaxPacketSize, onRefuse: b.hook.connRefused}
		if o.PacketReadTimeout > 0 {
			lims.timeout = o.PacketReadTimeout
		}
		if o.MaxPartialBytes > 0 {
			lims.budget = &partialBudget{max: o.MaxPartialBytes}
			b.partial = lims.budget
		}
		b.tcp.limit = func(c net.Conn) net.Conn { return newLimitConn(c, lims) }
		b.tcp.maxConns = o.MaxConnections
		b.tcp.onFull = func(c net.Conn) { b.hook.connFull(c, o.MaxConnections) }
		b.hook.rates = newRateLimiter(o.Clock, o.RateLimit, o.LogInterval, lim, log, &b.hook.rateLimited)
		b.tcp.set.queues = queues
		if err := srv.AddListener(b.tcp); err != nil {
			return nil, err
		}
	}
	if err := srv.Serve(); err != nil { // starts the event loop and the listeners
		if b.tcp != nil {
			b.tcp.ln.Close()
		}
		return nil, fmt.Errorf("broker: start mochi: %w", err)
	}
	<-b.mem.served
	if b.tcp != nil {
		<-b.tcp.started
	}
	return b, nil
}

// DialMem connects a new in-memory client and returns its end of the
// connection; the client then speaks MQTT on it (transport.NewClient does
// this for paho over "mem://"). buffer is the connection's per-direction
// buffer in bytes (0: BrokerOptions.MemBuffer) and writeQueue how many
// packets the broker may queue for this client before dropping (0:
// BrokerOptions.MaxWritesPending): a client that receives much more than it
// sends, such as a leader subscribed to every worker, wants more of both
// than a worker. TCP clients all get the broker's defaults, since who they
// are is known only after their CONNECT. DialMem fails with
// ErrListenerClosed once the broker is closing.
func (b *Broker) DialMem(ctx context.Context, buffer, writeQueue int) (net.Conn, error) {
	if b == nil {
		// A nil *Broker passed to transport.Connect as its MemDialer.
		return nil, errors.New("broker: DialMem on a nil *Broker; mem:// needs the embedded broker")
	}
	if writeQueue > math.MaxInt32 {
		return nil, fmt.Errorf("broker: DialMem write queue %d: must be at most %d", writeQueue, math.MaxInt32)
	}
	return b.mem.dial(ctx, buffer, writeQueue)
}

// Addr returns the TCP listener's host:port (the real port if TCPAddr asked
// for port 0), or "" without a TCP listener.
func (b *Broker) Addr() string {
	if b.tcp == nil {
		return ""
	}
	return b.tcp.Address()
}

// Stats returns the broker's counters. It does not block.
func (b *Broker) Stats() Stats {
	s := b.hook.stats(b.srv)
	if b.tcp != nil {
		s.TCPConnections = b.tcp.set.open.Load()
	}
	if b.partial != nil {
		s.PartialBytes = b.partial.used.Load()
	}
	return s
}

// Close stops the broker: it closes the listeners and every client
// connection (clients see the connection drop), then returns once mochi has
// stopped and the goroutines serving connections, the listeners' loops and
// mochi's event loop have returned. (mochi starts one more goroutine per
// client, its writer, which ends as soon as its client stops and offers
// nothing to wait on.) If ctx ends first, Close returns its error and the
// shutdown goes on; a later Close waits for it again.
func (b *Broker) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.logs.closing.Store(true)
		go func() { // owned by b: every Close waits for b.done
			b.srv.Close()
			<-b.logs.halted
			close(b.done)
		}()
	})
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("broker: broker close: %w", ctx.Err())
	}
}
