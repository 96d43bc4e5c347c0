package worker_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

const gatewayID = "gw-00000"

// gwRig is a pool of devices behind one gateway on a fake clock, against
// the embedded broker, and a bare session standing in for the leader: it
// publishes commands and records every device's envelopes and every
// status (devices' and gateways').
type gwRig struct {
	b    *broker.Broker
	pool *worker.Pool
	clk  *clock.Fake
	tp   wire.Topics
	ids  []string
	lead *transport.Session
	up   chan wire.Envelope
	stop func() // stops the pool and waits for it; once

	mu       sync.Mutex
	statuses []status
}

type status struct{ topic, payload string }

// startGatewayRig starts n devices w-0000… behind gateway gw-00000; clk,
// if not nil, gives device i a clock of its own over the rig's fake.
func startGatewayRig(t *testing.T, n int, cfg worker.Config, clk func(i int, f *clock.Fake) clock.Clock) *gwRig {
	t.Helper()
	return startGatewayRigVia(t, n, cfg, clk, nil)
}

// startGatewayRigVia is startGatewayRig with the gateway's sessions
// opened through via, given the broker's own dialer (nil: that dialer).
func startGatewayRigVia(t *testing.T, n int, cfg worker.Config, clk func(i int, f *clock.Fake) clock.Clock, via func(worker.GatewayDialer) worker.GatewayDialer) *gwRig {
	t.Helper()
	b, err := broker.StartBroker(broker.BrokerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &gwRig{b: b, clk: clock.NewFake(time.Unix(1_700_000_000, 0)), up: make(chan wire.Envelope, 256)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.lead, err = transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true}, b); err != nil {
		t.Fatal(err)
	}
	record := func(topic string, payload []byte) {
		r.mu.Lock()
		r.statuses = append(r.statuses, status{topic, string(payload)})
		r.mu.Unlock()
	}
	for _, s := range []struct {
		filter string
		h      func(string, []byte)
	}{
		{r.tp.AllUp(), func(topic string, payload []byte) {
			if env, err := wire.Decode(topic, payload, wire.Up, 0); err == nil {
				r.up <- env
			}
		}},
		{r.tp.AllStatus(), record},
		{r.tp.AllGatewayStatus(), record},
	} {
		if err := r.lead.Subscribe(ctx, s.filter, 1, s.h); err != nil {
			t.Fatal(err)
		}
	}
	cfgs := make([]worker.Config, n)
	for i := range cfgs {
		c := cfg
		c.ID, c.Index, c.Gateway, c.NoSync, c.Clock = fmt.Sprintf("w-%04d", i), uint64(i), gatewayID, true, r.clk
		if clk != nil {
			c.Clock = clk(i, r.clk)
		}
		cfgs[i] = c
		r.ids = append(r.ids, c.ID)
	}
	dial := worker.MQTTDialer{Broker: "mem://", Mem: b}
	po := worker.PoolOptions{Clock: r.clk}
	if via != nil {
		po.Gateways = via(dial)
	}
	if r.pool, err = worker.NewPool(cfgs, dial, po); err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.pool.Run(runCtx)
	}()
	r.stop = sync.OnceFunc(func() {
		cancelRun()
		<-done
	})
	t.Cleanup(func() {
		r.stop()
		r.lead.Close(true)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(cctx); err != nil {
			t.Errorf("broker close: %v", err)
		}
	})
	r.waitOnline(t, "every device online")
	return r
}

// waitOnline waits until every device is online, advancing the fake clock
// by a step of the devices' backoff while it waits: reconnects are due on
// it.
func (r *gwRig) waitOnline(t *testing.T, what string) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		r.clk.Advance(10 * time.Millisecond)
		ps := r.pool.Stats()
		if err := fleettest.Unless(ps.Online == len(r.ids) && ps.GatewaysOnline == 1, "%d of %d devices online, %d gateways online; gateway %+v",
			ps.Online, len(r.ids), ps.GatewaysOnline, r.pool.Gateway(gatewayID).Stats()); err != nil {
			return err
		}
		// The leader hears a device online after the broker took its
		// subscription: a command sent after that reaches it.
		heard := r.heardOnline()
		return fleettest.Unless(heard == len(r.ids), "the leader heard %d of %d devices online", heard, len(r.ids))
	})
}

// status waits for a status on topic, recorded after the first skip ones,
// that want accepts, and returns its index and parsed form.
func (r *gwRig) status(t *testing.T, skip int, topic, what string, want func(wire.Status) bool) (int, wire.Status) {
	t.Helper()
	var (
		at  int
		got wire.Status
	)
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		var seen []string
		for i := skip; i < len(r.statuses); i++ {
			s := r.statuses[i]
			if s.topic != topic {
				continue
			}
			seen = append(seen, s.payload)
			p, err := wire.ParseStatus(s.topic, []byte(s.payload))
			if err != nil {
				return err
			}
			if want(p) {
				at, got = i, p
				return nil
			}
		}
		return fmt.Errorf("statuses on %s: %q", topic, seen)
	})
	return at, got
}

// heardOnline is how many devices' latest status at the leader is online.
func (r *gwRig) heardOnline() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := map[string]bool{}
	for _, s := range r.statuses {
		if st, err := wire.ParseStatus(s.topic, []byte(s.payload)); err == nil && s.topic != r.tp.GatewayStatus(gatewayID) {
			last[s.topic] = st.Online
		}
	}
	n := 0
	for _, id := range r.ids {
		if last[r.tp.Status(id)] {
			n++
		}
	}
	return n
}

// recorded is how many statuses have been recorded so far.
func (r *gwRig) recorded() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.statuses)
}

// job sends a job to every device and waits for every ack.
func (r *gwRig) jobs(t *testing.T, tag string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := map[string]bool{}
	for _, id := range r.ids {
		ref := tag + "-" + id
		b, err := wire.Encode(wire.Envelope{ID: ref, Kind: wire.KindJob})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(ctx, r.tp.Down(id), 1, false, b); err != nil {
			t.Fatal(err)
		}
		want[ref] = true
	}
	for len(want) > 0 {
		env := fleettest.Receive(t, 10*time.Second, fmt.Sprintf("%d more acks of %s", len(want), tag), r.up, nil)
		if env.Kind == wire.KindAck && want[env.Ref] {
			if env.Result != wire.ResultOK {
				t.Fatalf("%s answered %s", env.Ref, env.Result)
			}
			delete(want, env.Ref)
		}
	}
}

// TestGatewayCarriesDevices: devices behind a gateway share its one MQTT
// session, are announced online via it, take commands and ack them; when
// they stop, each says offline via it, and the gateway says offline.
func TestGatewayCarriesDevices(t *testing.T) {
	r := startGatewayRig(t, 3, worker.Config{Service: dist.Const(time.Microsecond)}, nil)
	if c := r.b.Stats().ClientsConnected; c != 2 {
		t.Errorf("%d sessions at the broker, want 2: the leader's and the gateway's", c)
	}
	_, gw := r.status(t, 0, r.tp.GatewayStatus(gatewayID), "the gateway's online", func(s wire.Status) bool { return s.Online })
	if gw.Epoch == "" || gw.Via != "" {
		t.Errorf("gateway status %v, want online with an epoch", gw)
	}
	for _, id := range r.ids {
		r.status(t, 0, r.tp.Status(id), id+" online via the gateway", func(s wire.Status) bool {
			return s.Online && s.Via == gatewayID && s.Epoch != ""
		})
	}
	r.jobs(t, "j1")

	mark := r.recorded()
	gs := r.pool.Stats()
	if gs.Gateways != 1 || gs.GatewaysOnline != 1 {
		t.Errorf("pool stats: %d gateways, %d online; want 1, 1", gs.Gateways, gs.GatewaysOnline)
	}
	r.stop() // as the cleanup would; the leader's session stays to read the goodbyes
	for _, id := range r.ids {
		r.status(t, mark, r.tp.Status(id), id+" offline via the gateway", func(s wire.Status) bool {
			return !s.Online && s.Via == gatewayID
		})
	}
	r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway's goodbye", func(s wire.Status) bool {
		return s == wire.Status{Epoch: gw.Epoch}
	})
}

// TestGatewayDeviceCrash: a device that drops off its gateway without a
// word gets its will, "offline <epoch> via <gateway>", published by the
// gateway; the other devices stay online, and the device comes back.
func TestGatewayDeviceCrash(t *testing.T) {
	r := startGatewayRig(t, 3, worker.Config{Service: dist.Const(time.Microsecond)}, nil)
	victim := r.ids[1]
	_, online := r.status(t, 0, r.tp.Status(victim), victim+" online", func(s wire.Status) bool { return s.Online })
	mark := r.recorded()
	r.pool.Get(victim).Crash()
	r.status(t, mark, r.tp.Status(victim), victim+"'s will, played by the gateway", func(s wire.Status) bool {
		return s == wire.Status{Epoch: online.Epoch, Via: gatewayID}
	})
	if s := r.pool.Gateway(gatewayID).Stats(); s.Wills != 1 || !s.Online || s.ConnectionsLost != 0 {
		t.Errorf("gateway after a device crash: %+v; want 1 will, online, no connection lost", s)
	}
	r.waitOnline(t, victim+" back")
	r.status(t, mark, r.tp.Status(victim), victim+" online again", func(s wire.Status) bool {
		return s.Online && s.Via == gatewayID && s.Epoch != online.Epoch
	})
	r.mu.Lock()
	for _, s := range r.statuses[mark:] {
		if s.topic != r.tp.Status(victim) && strings.HasPrefix(s.payload, wire.StatusOffline) {
			t.Errorf("%s: %s after another device's crash", s.topic, s.payload)
		}
	}
	r.mu.Unlock()
	r.jobs(t, "after")
}

// TestGatewayDeviceSubscriptionRefused: a device whose subscription the
// broker refuses, after the gateway handed it on without waiting, cannot
// hear its commands: its session ends as a crash would (the gateway
// publishes its will, counts the refusal) and it comes back through the
// gateway and takes commands.
func TestGatewayDeviceSubscriptionRefused(t *testing.T) {
	victim := "w-0001"
	var once sync.Once
	refuse := func(d worker.GatewayDialer) worker.GatewayDialer {
		return gatewayDialer(func(ctx context.Context, o worker.GatewayDialOptions) (worker.GatewayLink, error) {
			l, err := d.DialGateway(ctx, o)
			if err != nil {
				return nil, err
			}
			return &refusingLink{GatewayLink: l, refuse: func(filter string) bool {
				first := false
				if strings.Contains(filter, victim) {
					once.Do(func() { first = true })
				}
				return first
			}}, nil
		})
	}
	r := startGatewayRigVia(t, 3, worker.Config{Service: dist.Const(time.Microsecond)}, nil, refuse)
	r.status(t, 0, r.tp.Status(victim), victim+"'s will, played by the gateway", func(s wire.Status) bool {
		return !s.Online && s.Via == gatewayID
	})
	if s := r.pool.Gateway(gatewayID).Stats(); s.SubscribesRefused != 1 || s.Wills != 1 || s.ConnectionsLost != 0 {
		t.Errorf("gateway after a refused subscription: %+v; want 1 refused, 1 will, no connection lost", s)
	}
	if ps := r.pool.Stats(); ps.GatewaySubscribesRefused != 1 {
		t.Errorf("pool stats: %d subscriptions refused, want 1", ps.GatewaySubscribesRefused)
	}
	r.jobs(t, "after")
}

// refusingLink refuses the subscriptions refuse picks. The session reads
// a broker's refusal on a goroutine of its own after SubscribeNoWait
// returned; this one calls refused before it returns, which the device
// must take as well.
type refusingLink struct {
	worker.GatewayLink
	refuse func(filter string) bool
}

func (l *refusingLink) SubscribeNoWait(filter string, qos byte, refused func(error)) error {
	if l.refuse(filter) {
		refused(fmt.Errorf("%w: %s (SUBACK 0x80)", transport.ErrSubscribeRefused, filter))
		return nil
	}
	return l.GatewayLink.SubscribeNoWait(filter, qos, refused)
}

// TestGatewayPartition: a gateway cut off from the broker goes silent; the
// broker publishes its will, and every device behind it loses its session
// and cannot dial until the gateway is back. Healed, the gateway
// reconnects with a new epoch, announces itself before its devices, and
// they come back and take commands.
func TestGatewayPartition(t *testing.T) {
	cfg := worker.Config{
		Service: dist.Const(time.Microsecond), KeepAlive: time.Second,
		Reconnect: worker.Reconnect{Backoff: flow.Backoff{Base: 10 * time.Millisecond, Cap: 10 * time.Millisecond}},
	}
	r := startGatewayRig(t, 4, cfg, nil)
	_, first := r.status(t, 0, r.tp.GatewayStatus(gatewayID), "the gateway's online", func(s wire.Status) bool { return s.Online })
	g := r.pool.Gateway(gatewayID)
	mark := r.recorded()
	g.Partition()
	r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway's will, from the broker", func(s wire.Status) bool {
		return s == wire.Status{Epoch: first.Epoch}
	})
	fleettest.Eventually(t, 10*time.Second, "every device lost its session", func() error {
		ps := r.pool.Stats()
		return fleettest.Unless(ps.Online == 0 && ps.GatewaysOnline == 0 && ps.Total.ConnectionsLost == uint64(len(r.ids)),
			"%d online, %d gateways online, %d sessions lost", ps.Online, ps.GatewaysOnline, ps.Total.ConnectionsLost)
	})
	attempts := r.pool.Stats().Total.ConnectAttempts
	for range 5 { // devices retry, and fail: their gateway is gone
		r.clk.Advance(10 * time.Millisecond)
	}
	fleettest.Eventually(t, 10*time.Second, "devices retried", func() error {
		ps := r.pool.Stats()
		return fleettest.Unless(ps.Total.ConnectAttempts > attempts && ps.Online == 0, "%d attempts (%d before), %d online", ps.Total.ConnectAttempts, attempts, ps.Online)
	})
	if s := g.Stats(); s.DevicesLost != uint64(len(r.ids)) || s.Wills != 0 {
		t.Errorf("gateway stats %+v: want %d devices lost with it and no device wills (its own will speaks for them)", s, len(r.ids))
	}

	g.Heal()
	r.waitOnline(t, "devices back after the heal")
	at, second := r.status(t, mark, r.tp.GatewayStatus(gatewayID), "the gateway online again", func(s wire.Status) bool { return s.Online })
	if second.Epoch == first.Epoch {
		t.Errorf("the gateway came back with its old epoch %s", first.Epoch)
	}
	for _, id := range r.ids {
		i, _ := r.status(t, mark, r.tp.Status(id), id+" online again", func(s wire.Status) bool { return s.Online && s.Via == gatewayID })
		if i < at {
			t.Errorf("%s announced before its gateway", id)
		}
	}
	r.jobs(t, "healed")
}

// gatedClock is a fake clock whose Now blocks while its gate is shut: a
// worker loop on it stops dead at its next reading, as one starved of CPU.
type gatedClock struct {
	*clock.Fake
	mu   sync.Mutex
	gate chan struct{} // nil: open
}

func (c *gatedClock) shut() { c.mu.Lock(); c.gate = make(chan struct{}); c.mu.Unlock() }

func (c *gatedClock) open() {
	c.mu.Lock()
	if c.gate != nil {
		close(c.gate)
		c.gate = nil
	}
	c.mu.Unlock()
}

func (c *gatedClock) Now() time.Time {
	c.mu.Lock()
	g := c.gate
	c.mu.Unlock()
	if g != nil {
		<-g
	}
	return c.Fake.Now()
}

// TestGatewaySlowDeviceDoesNotBlockOthers: a device whose loop has
// stopped taking messages fills its queue; what the gateway has for it
// after that is dropped and counted, and the other devices on the same
// session still get their commands at once. (The stalled device reads a
// clock of its own, so it has a loop of its own: the gateway's session
// must not wait on one loop for another's devices.)
func TestGatewaySlowDeviceDoesNotBlockOthers(t *testing.T) {
	slow := &gatedClock{}
	r := startGatewayRig(t, 2, worker.Config{Service: dist.Const(time.Microsecond)}, func(i int, f *clock.Fake) clock.Clock {
		if i == 1 {
			slow.Fake = f
			return slow
		}
		return f
	})
	defer slow.open()
	slowID := r.ids[1]
	slow.shut()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const flood = 200 // far more than a worker's queue holds
	for i := range flood {
		b, err := wire.Encode(wire.Envelope{ID: fmt.Sprintf("f%d", i), Kind: wire.KindPing})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(ctx, r.tp.Down(slowID), 1, false, b); err != nil {
			t.Fatal(err)
		}
	}
	// The other device's command travels the same session behind the flood.
	b, err := wire.Encode(wire.Envelope{ID: "quick", Kind: wire.KindJob})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.lead.Publish(ctx, r.tp.Down(r.ids[0]), 1, false, b); err != nil {
		t.Fatal(err)
	}
	for {
		env := fleettest.Receive(t, 10*time.Second, "the other device's ack while one device is stalled", r.up, nil)
		if env.Kind == wire.KindAck && env.Ref == "quick" {
			break
		}
	}
	s := r.pool.Get(slowID).Stats()
	slow.open()
	if s.DeliveriesDropped == 0 || s.DeliveriesDropped >= flood {
		t.Errorf("%d of %d deliveries to the stalled device dropped; want some, not all (its queue keeps the first)", s.DeliveriesDropped, flood)
	}
}

// TestGatewayDial: a gateway refuses a device outside its range, and a
// device dialing while it is offline, naming both.
func TestGatewayDial(t *testing.T) {
	g, err := worker.NewGateway(worker.GatewayConfig{ID: "gw-7", Range: wire.DeviceRange{Prefix: "w-", First: 10, Last: 19}},
		worker.MQTTDialer{Broker: "mem://"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Dial(context.Background(), worker.DialOptions{ID: "w-20"})
	if err == nil || !strings.Contains(err.Error(), `gateway gw-7: device "w-20" is outside its range w-{10..19}`) {
		t.Errorf("dial of w-20: %v", err)
	}
	_, err = g.Dial(context.Background(), worker.DialOptions{ID: "w-0012"})
	if !errors.Is(err, worker.ErrGatewayOffline) || !strings.Contains(err.Error(), "gateway gw-7: device w-0012") {
		t.Errorf("dial while offline: %v, want ErrGatewayOffline naming the gateway and the device", err)
	}
}

// TestPoolGatewayErrors: the pool refuses gateways it cannot build, naming
// the worker.
func TestPoolGatewayErrors(t *testing.T) {
	dial := worker.MQTTDialer{Broker: "mem://"}
	cases := []struct {
		name string
		cfgs []worker.Config
		dial worker.Dialer
		want string
	}{
		{"prefixes differ", []worker.Config{{ID: "w-1", Gateway: "gw-0"}, {ID: "x-2", Gateway: "gw-0"}}, dial,
			`worker "x-2" behind gateway "gw-0": id prefix "x-", but the gateway's device "w-1" has "w-"`},
		{"no number", []worker.Config{{ID: "w-1", Gateway: "gw-0"}, {ID: "w-x", Gateway: "gw-0"}}, dial,
			`worker "w-x" behind gateway "gw-0": a device id must end in a number`},
		{"bad gateway id", []worker.Config{{ID: "w-1", Gateway: "gw/0"}}, dial, `worker "w-1": gateway id "gw/0"`},
		{"gateway is a worker", []worker.Config{{ID: "w-1", Gateway: "w-2"}, {ID: "w-2"}}, dial, `gateway "w-2" has the id of a worker`},
		{"topics differ", []worker.Config{{ID: "w-1", Gateway: "gw-0"}, {ID: "w-2", Gateway: "gw-0", Topics: wire.Topics{Prefix: "other"}}}, dial,
			`worker "w-2" behind gateway "gw-0": topic prefix "other"`},
		{"dialer without gateways", []worker.Config{{ID: "w-1", Gateway: "gw-0"}}, worker.DialerFunc(nil),
			`worker "w-1" is behind gateway "gw-0", but the pool's dialer worker.DialerFunc cannot open gateway sessions`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := worker.NewPool(tc.cfgs, tc.dial, worker.PoolOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	p, err := worker.NewPool([]worker.Config{{ID: "w-0007", Gateway: "gw-0"}, {ID: "w-3", Gateway: "gw-0"}, {ID: "w-12", Gateway: "gw-0"}, {ID: "w-13"}}, dial, worker.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Gateway("gw-0").Range(); got != (wire.DeviceRange{Prefix: "w-", First: 3, Last: 12}) {
		t.Errorf("range %v, want w-{3..12}", got)
	}
	if n := len(p.Gateways()); n != 1 || p.Stats().Gateways != 1 {
		t.Errorf("%d gateways, want 1", n)
	}
}

// TestGatewayLoginRefused: a gateway whose login the broker refuses (its
// password derived from another secret) counts each refusal and keeps
// trying; its devices stay offline. With the fleet's secret the same pool
// gets in, with no refusal counted.
func TestGatewayLoginRefused(t *testing.T) {
	secret := []byte("fleet-secret-0123456789abcdef")
	for _, tc := range []struct {
		name   string
		secret []byte
		refuse bool
	}{{"wrong secret", []byte("another-secret-0123456789abcd"), true}, {"fleet secret", secret, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := broker.StartBroker(broker.BrokerOptions{Auth: &broker.Auth{LeaderPassword: "leader-pw", Secret: secret}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := b.Close(ctx); err != nil {
					t.Errorf("broker close: %v", err)
				}
			}()
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			cfgs := make([]worker.Config, 3)
			for i := range cfgs {
				cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%04d", i), Index: uint64(i), Gateway: gatewayID, NoSync: true, Clock: clk}
			}
			pool, err := worker.NewPool(cfgs, worker.MQTTDialer{Broker: "mem://", Mem: b, Secret: tc.secret}, worker.PoolOptions{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = pool.Run(ctx) }()
			defer func() { cancel(); <-done }()
			fleettest.Eventually(t, 10*time.Second, "the gateway's logins decided", func() error {
				clk.Advance(time.Second) // the gateway's and the devices' retries
				s := pool.Stats()
				if tc.refuse {
					return fleettest.Unless(s.GatewayLoginsRefused >= 2 && s.Online == 0,
						"%d logins refused, %d devices online; want 2 or more refused, none online", s.GatewayLoginsRefused, s.Online)
				}
				return fleettest.Unless(s.Online == 3 && s.GatewayLoginsRefused == 0,
					"%d devices online, %d logins refused; want 3 online, none refused", s.Online, s.GatewayLoginsRefused)
			})
		})
	}
}

// TestGatewayDevicesHaveNoGoroutines: devices behind a gateway run on
// their pool's loops, a few goroutines for all of them, not one each; a
// hundred devices online and taking commands cost the process far fewer
// goroutines than a hundred.
func TestGatewayDevicesHaveNoGoroutines(t *testing.T) {
	const n = 100
	g0 := runtime.NumGoroutine()
	r := startGatewayRig(t, n, worker.Config{Service: dist.Const(time.Microsecond), Heartbeat: time.Second}, nil)
	r.jobs(t, "j")
	// The broker, the leader's session and the gateway's, and the loops.
	g := runtime.NumGoroutine() - g0
	t.Logf("%d devices online: %d more goroutines", n, g)
	if g >= n/2 {
		t.Errorf("%d devices online: %d more goroutines, want far fewer than one each", n, g)
	}
}
