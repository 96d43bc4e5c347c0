package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestPoolFirstDials: a pool lets at most FirstDials workers make their
// first connection attempt at once, and starts the rest as those connect.
func TestPoolFirstDials(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name     string
		limit    int
		wantPeak int
	}{
		{"limit 3", 3, 3},
		{"default", 0, n}, // fewer workers than the default limit
		{"no limit", -1, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var d slowDialer
				cfgs := make([]worker.Config, n)
				for i := range cfgs {
					cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%02d", i), NoSync: true}
				}
				p, err := worker.NewPool(cfgs, worker.DialerFunc(d.dial), worker.PoolOptions{FirstDials: tc.limit})
				if err != nil {
					t.Fatal(err)
				}
				stop := runPool(p)
				synctest.Wait()
				if got := d.now(); got != tc.wantPeak {
					t.Errorf("%d workers dialing at the start; want %d", got, tc.wantPeak)
				}
				time.Sleep(time.Minute) // every dial takes a second
				synctest.Wait()
				if d.peak != tc.wantPeak || d.total != n {
					t.Errorf("peak %d dialing at once, %d dials; want peak %d, %d dials", d.peak, d.total, tc.wantPeak, n)
				}
				stop()
			})
		})
	}
}

// slowDialer's dials take a second each and succeed.
type slowDialer struct {
	mu                   sync.Mutex
	dialing, peak, total int
}

func (d *slowDialer) now() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialing
}

func (d *slowDialer) dial(ctx context.Context, _ worker.DialOptions) (worker.Session, error) {
	d.mu.Lock()
	d.dialing++
	d.total++
	d.peak = max(d.peak, d.dialing)
	d.mu.Unlock()
	time.Sleep(time.Second)
	d.mu.Lock()
	d.dialing--
	d.mu.Unlock()
	return idleSession{lost: make(chan struct{})}, nil
}

// idleSession is a connected session on which nothing happens.
type idleSession struct{ lost chan struct{} }

func (idleSession) Publish(context.Context, string, byte, bool, []byte) error { return nil }
func (idleSession) Send(string, byte, []byte) error                           { return nil }
func (idleSession) SendRetained(string, byte, []byte) error                   { return nil }
func (idleSession) Subscribe(context.Context, string, byte, func(string, []byte)) error {
	return nil
}
func (idleSession) Close(bool)              {}
func (idleSession) Silence()                {}
func (s idleSession) Lost() <-chan struct{} { return s.lost }

// TestPoolFirstDialsBehindGateways: devices on a gateway's loop do not
// wait for the broker, so a device holds its first-dial slot until the
// broker has taken its online; with a limit of 3 and a broker that takes
// an online a second after it was sent, never more than 3 announcements
// are waiting at once, and every device comes online.
func TestPoolFirstDialsBehindGateways(t *testing.T) {
	const n = 20
	synctest.Test(t, func(t *testing.T) {
		link := &slowLink{idleSession: idleSession{lost: make(chan struct{})}}
		cfgs := make([]worker.Config, n)
		for i := range cfgs {
			cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%02d", i), Gateway: "gw-0", NoSync: true}
		}
		gws := gatewayDialer(func(context.Context, worker.GatewayDialOptions) (worker.GatewayLink, error) { return link, nil })
		p, err := worker.NewPool(cfgs, worker.DialerFunc(func(context.Context, worker.DialOptions) (worker.Session, error) {
			return nil, fmt.Errorf("no sessions of their own")
		}), worker.PoolOptions{FirstDials: 3, Gateways: gws})
		if err != nil {
			t.Fatal(err)
		}
		stop := runPool(p)
		synctest.Wait()
		if got := link.now(); got != 3 {
			t.Errorf("%d onlines waiting for the broker at the start; want 3", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if link.peak != 3 || p.Stats().Online != n {
			t.Errorf("peak %d onlines waiting at once, %d online; want peak 3, %d online", link.peak, p.Stats().Online, n)
		}
		stop()
		close(link.lost)
	})
}

// slowLink is a gateway session whose broker takes a retained message a
// second after it was sent.
type slowLink struct {
	idleSession
	mu            sync.Mutex
	waiting, peak int
}

func (l *slowLink) now() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

func (l *slowLink) SendRetained(string, byte, []byte) error         { return nil }
func (l *slowLink) Unsubscribe(string) error                        { return nil }
func (l *slowLink) SubscribeNoWait(string, byte, func(error)) error { return nil }
func (l *slowLink) SendRetainedDone(string, byte, []byte) (<-chan struct{}, error) {
	l.mu.Lock()
	l.waiting++
	l.peak = max(l.peak, l.waiting)
	l.mu.Unlock()
	done := make(chan struct{})
	go func() {
		time.Sleep(time.Second)
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		close(done)
	}()
	return done, nil
}

type gatewayDialer func(context.Context, worker.GatewayDialOptions) (worker.GatewayLink, error)

func (f gatewayDialer) DialGateway(ctx context.Context, o worker.GatewayDialOptions) (worker.GatewayLink, error) {
	return f(ctx, o)
}

// TestPoolRampKeepsItsPace: the ramp starts worker i i ramps after the
// first, whenever the pool gets to it: a clock that moves four ramps at
// once starts four workers, not one (a sleep per worker would fall
// behind a ramp shorter than a sleep can be).
func TestPoolRampKeepsItsPace(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	cfgs := make([]worker.Config, 5)
	for i := range cfgs {
		cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%02d", i), NoSync: true, Clock: clk}
	}
	dial := worker.DialerFunc(func(context.Context, worker.DialOptions) (worker.Session, error) {
		return idleSession{lost: make(chan struct{})}, nil
	})
	p, err := worker.NewPool(cfgs, dial, worker.PoolOptions{Clock: clk, Ramp: 10 * time.Millisecond, FirstDials: -1})
	if err != nil {
		t.Fatal(err)
	}
	stop := runPool(p)
	defer stop()
	online := func(n int) func() error {
		return func() error {
			clk.Advance(0) // a worker's first connect is due at once
			s := p.Stats()
			return fleettest.Unless(s.Online == n, "%d workers online, want %d", s.Online, n)
		}
	}
	fleettest.Eventually(t, 10*time.Second, "the first worker online", online(1))
	fleettest.Advance(t, clk, 40*time.Millisecond, "the ramp")
	fleettest.Eventually(t, 10*time.Second, "four ramps later, every worker online", online(5))
}

// TestGatewayDevicesDoNotWaitForTheBroker: a device behind a gateway
// subscribes and announces itself without waiting for the broker's
// answers, so that its loop is never held up by one device: on a gateway
// session whose waiting calls never return, every device comes online.
func TestGatewayDevicesDoNotWaitForTheBroker(t *testing.T) {
	const n = 5
	synctest.Test(t, func(t *testing.T) {
		link := &stuckLink{slowLink: slowLink{idleSession: idleSession{lost: make(chan struct{})}}}
		cfgs := make([]worker.Config, n)
		for i := range cfgs {
			cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%02d", i), Gateway: "gw-0", NoSync: true}
		}
		gws := gatewayDialer(func(context.Context, worker.GatewayDialOptions) (worker.GatewayLink, error) { return link, nil })
		p, err := worker.NewPool(cfgs, worker.DialerFunc(func(context.Context, worker.DialOptions) (worker.Session, error) {
			return nil, fmt.Errorf("no sessions of their own")
		}), worker.PoolOptions{Gateways: gws})
		if err != nil {
			t.Fatal(err)
		}
		stop := runPool(p)
		synctest.Wait()
		if s := p.Stats(); s.Online != n {
			t.Errorf("%d of %d devices online while the broker answers nothing", s.Online, n)
		}
		stop()
		close(link.lost)
	})
}

// stuckLink is a gateway session whose broker never answers a device:
// Subscribe, and Publish of anything but the gateway's own status, wait
// until their context ends; the sends that do not wait return at once.
type stuckLink struct{ slowLink }

func (*stuckLink) Subscribe(ctx context.Context, _ string, _ byte, _ func(string, []byte)) error {
	<-ctx.Done()
	return ctx.Err()
}

func (*stuckLink) Publish(ctx context.Context, topic string, _ byte, _ bool, _ []byte) error {
	if topic == (wire.Topics{}).GatewayStatus("gw-0") {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// runPool runs p on a goroutine until the returned stop, which waits for
// it to return.
func runPool(p *worker.Pool) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Run(ctx)
	}()
	return func() { cancel(); <-done }
}
