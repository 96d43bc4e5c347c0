package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// GatewayConfig configures a Gateway. ID and Range are required; zero
// fields take the defaults noted.
type GatewayConfig struct {
	// ID is the gateway's id and MQTT client id (see wire.ValidGatewayID).
	ID string
	// Range is the devices it may carry; its login claims them.
	Range wire.DeviceRange
	// Topics names the topics. Default prefix "fleet".
	Topics wire.Topics
	// Clock times the reconnect backoff. Default: wall.
	Clock clock.Clock
	// Seed and Index seed the backoff's jitter (PCG(Seed, Index)).
	Seed, Index uint64
	// Backoff spaces reconnect attempts (full jitter). Default
	// DefaultReconnectBackoff.
	Backoff flow.Backoff
	// KeepAlive is the session's MQTT keepalive. Default 5 s.
	KeepAlive time.Duration
	// Logger for the gateway's logs. Default: discard.
	Logger *slog.Logger
	// Downlink is the radio towards its devices. Default: none, every
	// message forwarded at once.
	Downlink Downlink
}

// ErrGatewayOffline: a device dialed its gateway while the gateway's own
// session was down. The device retries by its reconnect policy.
var ErrGatewayOffline = errors.New("gateway offline")

// errDeviceLost: a device used its virtual session after it was lost.
var errDeviceLost = errors.New("device session lost")

// Gateway is one MQTT session that carries many devices (workers), as an
// edge gateway carries the sensors behind it. It is the Dialer of its
// devices: each gets a virtual Session on the gateway's one session (see
// Dial). Its own status topic (wire.Topics.GatewayStatus) says "online
// <epoch>" once it is connected, and its last will there says "offline
// <epoch>": when the broker loses the gateway, the leader takes every
// device it announced offline, and the gateway drops every device's
// virtual session (each device reconnects by its own policy, through the
// gateway once it is back). The gateway reconnects with a jittered
// backoff on its clock.
//
// Create it with NewGateway and start it with Run, before its devices;
// stop it after them. Partition, Heal, Dial and Stats are safe from any
// goroutine.
type Gateway struct {
	cfg     GatewayConfig
	dial    GatewayDialer
	control chan bool // true: partition, false: heal
	ready   chan struct{}
	done    chan struct{}
	once    sync.Once // closes ready

	// Owned by Run.
	rnd       *rand.Rand
	reconnect clock.Timer
	lost      <-chan struct{}
	partition bool
	attempt   int

	waiters sync.WaitGroup // whenTaken's goroutines

	mu      sync.Mutex // guards what follows: devices dial and route under it
	link    GatewayLink
	epoch   string
	devices map[string]*deviceSession // attached, by device id
	routes  map[string]route          // by topic
	dl      downlinkState
	st      GatewayStats
}

// route is where a message for one topic goes.
type route struct {
	d *deviceSession
	h func(topic string, payload []byte)
}

// GatewayStats is what a gateway counts.
type GatewayStats struct {
	Online  bool
	Devices int // virtual sessions attached now

	ConnectAttempts, Connects, ConnectionsLost uint64
	// DevicesLost counts virtual sessions dropped because the gateway's own
	// session was lost.
	DevicesLost uint64
	// Wills counts device wills the gateway published: devices that
	// dropped off it without a goodbye (a crash, a partition).
	Wills uint64
	// Unrouted counts messages that arrived for no attached device (one
	// that left while a message for it was on its way): dropped, as the
	// broker would drop them for a session that is gone.
	Unrouted uint64
	// LoginsRefused counts connection attempts the broker refused at the
	// login (credentials of another fleet or another range, a range the
	// broker does not grant this gateway). The gateway keeps trying by its backoff, logging each
	// refusal; its devices stay offline meanwhile and lose nothing: what
	// the leader has for them waits in its outbox.
	LoginsRefused uint64
	// SubscribesRefused counts device subscriptions the broker refused
	// (its ACL, or a packet id it kept finding in use). Each ends that
	// device's session as a crash would: the gateway publishes its will
	// and the device reconnects.
	SubscribesRefused uint64
	// The downlink (GatewayConfig.Downlink): commands forwarded after
	// their airtime, refused with "full" for their device, and dropped from
	// the queue when the gateway's session went (the leader's asks time
	// out); the longest the queue was.
	DownlinkForwarded, DownlinkRefused, DownlinkDropped uint64
	DownlinkMaxQueue                                    int
}

// NewGateway checks cfg and builds a gateway that connects through dial;
// nothing runs until Run.
func NewGateway(cfg GatewayConfig, dial GatewayDialer) (*Gateway, error) {
	if err := wire.ValidGatewayID(cfg.ID); err != nil {
		return nil, err
	}
	if _, err := wire.ParseDeviceRange(cfg.Range.String()); err != nil {
		return nil, fmt.Errorf("gateway %s: %w", cfg.ID, err)
	}
	if dial == nil {
		return nil, fmt.Errorf("gateway %s: no dialer for its session", cfg.ID)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Backoff == (flow.Backoff{}) {
		cfg.Backoff = DefaultReconnectBackoff
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.KeepAlive < time.Second {
		return nil, fmt.Errorf("gateway %s: keepalive %v: want at least 1s", cfg.ID, cfg.KeepAlive)
	}
	if d := cfg.Downlink; d.Capacity < 0 || d.Capacity > 0 && d.Airtime <= 0 {
		return nil, fmt.Errorf("gateway %s: downlink of %d commands at %v each: want a capacity of 0 (none) or more, and then an airtime above 0", cfg.ID, d.Capacity, d.Airtime)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{
		cfg: cfg, dial: dial,
		control: make(chan bool, 4),
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
		rnd:     rand.New(rand.NewPCG(cfg.Seed, cfg.Index)),
		devices: make(map[string]*deviceSession),
		routes:  make(map[string]route),
	}, nil
}

// ID returns the gateway's id.
func (g *Gateway) ID() string { return g.cfg.ID }

// Range returns the devices the gateway may carry.
func (g *Gateway) Range() wire.DeviceRange { return g.cfg.Range }

// Ready is closed once Run's first connection attempt is over, whether it
// succeeded or not (or Run has returned): a pool starts the gateway's
// devices then, so that their first dial does not race the gateway's.
func (g *Gateway) Ready() <-chan struct{} { return g.ready }

// Run connects at once, then keeps the gateway connected (reconnecting
// with backoff) until ctx ends. It then drops any device still attached,
// announces the gateway offline, disconnects cleanly and returns. A
// Gateway runs once.
func (g *Gateway) Run(ctx context.Context) error {
	defer close(g.done)
	defer g.waiters.Wait() // they end as the session closes
	defer g.once.Do(func() { close(g.ready) })
	g.reconnect = g.cfg.Clock.NewTimer(time.Hour)
	g.reconnect.Stop()
	defer g.reconnect.Stop()
	g.connect(ctx)
	g.once.Do(func() { close(g.ready) })
	for {
		select {
		case <-ctx.Done():
			g.leave()
			return nil
		case <-g.lost:
			g.onLost()
		case <-g.reconnect.C():
			g.connect(ctx)
		case partition := <-g.control:
			g.onControl(partition)
		}
	}
}

// Partition cuts the gateway's network: its session goes silent (the
// broker publishes its will once the keepalive runs out, and the gateway
// notices and drops its devices), and reconnects fail until Heal.
func (g *Gateway) Partition() { g.send(true) }

// Heal restores the gateway's network; it reconnects by its backoff.
func (g *Gateway) Heal() { g.send(false) }

func (g *Gateway) send(partition bool) {
	select {
	case g.control <- partition:
	case <-g.done:
	}
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() GatewayStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.st
	s.Devices = len(g.devices)
	return s
}

// connect opens the gateway's session with a new epoch (as a worker's
// connection has: a late will of an earlier connection is told apart by
// it) and announces the gateway online. A failure schedules the next
// attempt.
func (g *Gateway) connect(ctx context.Context) {
	g.update(func(s *GatewayStats) { s.ConnectAttempts++ })
	if g.partition {
		g.retry()
		return
	}
	tp, id := g.cfg.Topics, g.cfg.ID
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	epoch := newEpoch()
	link, err := g.dial.DialGateway(dctx, GatewayDialOptions{
		ID: id, Range: g.cfg.Range, KeepAlive: g.cfg.KeepAlive, Route: g.route,
		WillTopic: tp.GatewayStatus(id), WillPayload: wire.Status{Epoch: epoch}.Payload(),
	})
	if err == nil {
		if err = link.Publish(dctx, tp.GatewayStatus(id), 1, true, wire.Status{Online: true, Epoch: epoch}.Payload()); err != nil {
			link.Close(false)
		} else if err = link.SubscribeNoWait(tp.Announce(), 0, func(err error) {
			g.cfg.Logger.Warn("the broker refused the gateway the leader's announce requests: the leader hears of its devices by their traffic", "gateway", id, "err", err)
		}); err != nil {
			link.Close(false)
		}
	}
	if err != nil {
		// A refused login is an error every time: it will not mend by
		// itself (bad secret, a range the broker does not grant). Other
		// failures warn once in a row.
		log := g.cfg.Logger.Debug
		switch {
		case transport.RefusedLogin(err):
			g.update(func(s *GatewayStats) { s.LoginsRefused++ })
			g.cfg.Logger.Error("gateway login refused: check its credentials (their range must cover its devices) and that the broker grants this gateway these devices",
				"gateway", id, "username", wire.GatewayUsername(id, g.cfg.Range), "err", err)
			g.retry()
			return
		case g.attempt == 0:
			log = g.cfg.Logger.Warn
		}
		log("gateway connect failed", "gateway", id, "devices", g.cfg.Range.String(), "err", err)
		g.retry()
		return
	}
	g.attempt = 0
	g.lost = link.Lost()
	g.mu.Lock()
	g.link, g.epoch = link, epoch
	g.st.Online = true
	g.st.Connects++
	g.mu.Unlock()
}

// retry arms the next connection attempt by the backoff.
func (g *Gateway) retry() {
	g.attempt++
	g.reconnect.Reset(g.cfg.Backoff.Delay(g.attempt-1, g.rnd))
}

// onLost handles the gateway's session dropping under it: every device's
// virtual session is lost with it. The broker publishes the gateway's
// will, which speaks for all of them, so the gateway publishes no device
// wills.
func (g *Gateway) onLost() {
	link, devs := g.detachAll()
	var cause error
	if e, ok := link.(interface{ Err() error }); ok {
		cause = e.Err()
	}
	g.cfg.Logger.Warn("gateway lost its session: its devices reconnect through it once it is back",
		"gateway", g.cfg.ID, "devices", len(devs), "err", cause)
	link.Close(false)
	for _, d := range devs {
		d.drop()
	}
	g.update(func(s *GatewayStats) {
		s.ConnectionsLost++
		s.DevicesLost += uint64(len(devs))
	})
	g.lost = nil
	g.retry()
}

// detachAll takes the session and every device off the gateway.
func (g *Gateway) detachAll() (GatewayLink, []*deviceSession) {
	g.mu.Lock()
	defer g.mu.Unlock()
	link := g.link
	devs := make([]*deviceSession, 0, len(g.devices))
	for _, d := range g.devices {
		devs = append(devs, d)
	}
	clear(g.devices)
	clear(g.routes)
	g.dropDownlink()
	g.link, g.epoch = nil, ""
	g.st.Online = false
	return link, devs
}

// leave ends the gateway: its devices should have left already (a pool
// stops them first); any still attached lose their sessions. The gateway
// then says offline itself, as its will would have, and disconnects.
func (g *Gateway) leave() {
	epoch := g.currentEpoch()
	link, devs := g.detachAll()
	for _, d := range devs {
		d.drop()
	}
	if link == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = link.Publish(ctx, g.cfg.Topics.GatewayStatus(g.cfg.ID), 1, true, wire.Status{Epoch: epoch}.Payload())
	cancel()
	link.Close(true)
}

func (g *Gateway) currentEpoch() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.epoch
}

func (g *Gateway) onControl(partition bool) {
	g.partition = partition
	g.mu.Lock()
	link := g.link
	g.mu.Unlock()
	switch {
	case partition && link != nil:
		link.Silence() // lost fires once the client notices
	case !partition && link == nil:
		g.attempt = max(g.attempt, 1)
		g.reconnect.Reset(g.cfg.Backoff.Delay(g.attempt-1, g.rnd))
	}
}

// route hands a message to the device subscribed to its topic. It runs on
// the session's one delivery goroutine, which all the gateway's devices
// share: the handler must not block (a worker's does not: see
// Worker.offer), or one slow device would hold up every other.
func (g *Gateway) route(topic string, payload []byte) {
	if topic == g.cfg.Topics.Announce() {
		g.announce(topic, payload)
		return
	}
	if g.cfg.Downlink.Capacity > 0 && g.downlink(topic, payload) {
		return
	}
	g.mu.Lock()
	r, ok := g.routes[topic]
	if !ok {
		g.st.Unrouted++
	}
	g.mu.Unlock()
	if ok {
		r.h(topic, payload)
	}
}

// whenTaken calls f once the broker has taken a device's announcement
// (done closes) or link is lost, on a goroutine the gateway waits for
// when it stops: a device on a loop must not wait for the broker itself.
func (g *Gateway) whenTaken(link GatewayLink, done <-chan struct{}, f func()) {
	g.waiters.Go(func() {
		select {
		case <-done:
		case <-link.Lost():
		}
		f()
	})
}

func (g *Gateway) update(f func(*GatewayStats)) {
	g.mu.Lock()
	f(&g.st)
	g.mu.Unlock()
}

// announce answers the leader's request that the fleet announce itself
// again: the gateway republishes its own status at once (gateways are
// few), and hands the request to each device it carries, which
// republishes its own after a random wait (Worker.onAnnounce).
func (g *Gateway) announce(topic string, payload []byte) {
	g.mu.Lock()
	link, epoch := g.link, g.epoch
	hs := make([]func(string, []byte), 0, len(g.devices))
	told := make(map[*deviceSession]bool, len(g.devices))
	for _, r := range g.routes { // a device's handler, once (it takes every topic it subscribed)
		if r.d != nil && !told[r.d] {
			told[r.d] = true
			hs = append(hs, r.h)
		}
	}
	g.mu.Unlock()
	if link == nil {
		return
	}
	_ = link.SendRetained(g.cfg.Topics.GatewayStatus(g.cfg.ID), 1, wire.Status{Online: true, Epoch: epoch}.Payload())
	for _, h := range hs {
		h(topic, payload)
	}
}
