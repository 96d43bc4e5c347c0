package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

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
// password derived from another secret, or a credential for another
// host's range) counts each refusal and keeps trying; its devices stay
// offline. With the fleet's secret, or a credential for its devices' range,
// the same pool gets in, with no refusal counted.
func TestGatewayLoginRefused(t *testing.T) {
	secret := []byte("fleet-secret-0123456789abcdef")
	cred := func(first, last uint64) *wire.Credentials {
		c, err := wire.IssueCredentials(secret, wire.DeviceRange{Prefix: "w-", First: first, Last: last})
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	for _, tc := range []struct {
		name    string
		gateway string
		dial    worker.MQTTDialer
		refuse  bool
	}{
		{"wrong secret", gatewayID, worker.MQTTDialer{Secret: []byte("another-secret-0123456789abcd")}, true},
		{"fleet secret", gatewayID, worker.MQTTDialer{Secret: secret}, false},
		{"another host's credential", "gw-w-0000", worker.MQTTDialer{Credentials: cred(10, 19)}, true},
		{"a credential one device short", "gw-w-0000", worker.MQTTDialer{Credentials: cred(0, 1)}, true},
		{"a credential not naming the gateway", gatewayID, worker.MQTTDialer{Credentials: cred(0, 9)}, true},
		{"its credential", "gw-w-0000", worker.MQTTDialer{Credentials: cred(0, 9)}, false},
	} {
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
				cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%04d", i), Index: uint64(i), Gateway: tc.gateway, NoSync: true, Clock: clk}
			}
			dial := tc.dial
			dial.Broker, dial.Mem = "mem://", b
			pool, err := worker.NewPool(cfgs, dial, worker.PoolOptions{Clock: clk})
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
