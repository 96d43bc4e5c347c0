package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// quietSession is a connected session that carries nothing: the cost of a
// worker actor measured apart from its transport.
type quietSession struct{ lost chan struct{} }

func (s *quietSession) Publish(context.Context, string, byte, bool, []byte) error { return nil }
func (s *quietSession) Send(string, byte, []byte) error                           { return nil }
func (s *quietSession) SendRetained(string, byte, []byte) error                   { return nil }
func (s *quietSession) Subscribe(context.Context, string, byte, func(string, []byte)) error {
	return nil
}
func (s *quietSession) Close(bool)            {}
func (s *quietSession) Silence()              {}
func (s *quietSession) Lost() <-chan struct{} { return s.lost }

// BenchmarkIdleWorkers measures what one idle worker actor costs apart
// from its session: heap bytes, stack bytes and goroutines per worker,
// with N workers (FLEETSIM_IDLE_WORKERS, default 10,000) connected,
// heartbeating every 30 s, sharing their histograms as a Pool in sim does.
//
//	go test -run '^$' -bench BenchmarkIdleWorkers -benchtime 1x ./fleet/worker/
func BenchmarkIdleWorkers(b *testing.B) {
	n := idleCount(b)
	dial := DialerFunc(func(context.Context, DialOptions) (Session, error) {
		return &quietSession{lost: make(chan struct{})}, nil
	})
	cfgs := idleConfigs(n, 0)
	for range b.N {
		measureIdle(b, n, "worker", func() (*Pool, error) { return NewPool(cfgs, dial, PoolOptions{}) }, nil)
	}
}

// BenchmarkIdleDevices measures what one idle device behind a gateway
// costs: N devices (FLEETSIM_IDLE_WORKERS, default 10,000) behind
// gateways of 1,000, connected and heartbeating every 30 s, on the pool's
// loops. On "quiet" the gateways' sessions carry nothing (quietLink): the
// worker package's own structures (worker, loop, gateway routes). On
// "broker" they are real sessions on the embedded broker: everything the
// process holds for a device, the paho client's and the broker's share
// included (and the gateways' own sessions, spread over their devices).
//
//	go test -run '^$' -bench BenchmarkIdleDevices -benchtime 1x ./fleet/worker/
func BenchmarkIdleDevices(b *testing.B) {
	n := idleCount(b)
	const perGateway = 1000
	cfgs := idleConfigs(n, perGateway)
	allOnline := func(p *Pool) bool {
		for _, g := range p.Gateways() {
			if !g.Stats().Online {
				return false
			}
		}
		return true
	}
	b.Run("quiet", func(b *testing.B) {
		dial := DialerFunc(func(context.Context, DialOptions) (Session, error) {
			return nil, errors.New("no sessions of their own")
		})
		gws := gatewayDialerFunc(func(context.Context, GatewayDialOptions) (GatewayLink, error) {
			return &quietLink{quietSession{lost: make(chan struct{})}}, nil
		})
		for range b.N {
			measureIdle(b, n, "device", func() (*Pool, error) { return NewPool(cfgs, dial, PoolOptions{Gateways: gws}) }, allOnline)
		}
	})
	b.Run("broker", func(b *testing.B) {
		for range b.N {
			mb, err := broker.StartBroker(broker.BrokerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			dial := MQTTDialer{Broker: "mem://", Mem: mb}
			measureIdle(b, n, "device", func() (*Pool, error) { return NewPool(cfgs, dial, PoolOptions{}) }, allOnline)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := mb.Close(ctx); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}

// quietLink is a gateway's session that carries nothing.
type quietLink struct{ quietSession }

func (*quietLink) SendRetained(string, byte, []byte) error         { return nil }
func (*quietLink) Unsubscribe(string) error                        { return nil }
func (*quietLink) SubscribeNoWait(string, byte, func(error)) error { return nil }
func (*quietLink) SendRetainedDone(string, byte, []byte) (<-chan struct{}, error) {
	return closed, nil
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

type gatewayDialerFunc func(context.Context, GatewayDialOptions) (GatewayLink, error)

func (f gatewayDialerFunc) DialGateway(ctx context.Context, o GatewayDialOptions) (GatewayLink, error) {
	return f(ctx, o)
}

func idleCount(b *testing.B) int {
	n := 10_000
	if s := os.Getenv("FLEETSIM_IDLE_WORKERS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("FLEETSIM_IDLE_WORKERS=%q: want a positive integer", s)
		}
	}
	return n
}

// idleConfigs are n workers heartbeating every 30 s, sharing their
// histograms as a Pool in sim does; perGateway > 0 puts them behind
// gateways of that many.
func idleConfigs(n, perGateway int) []Config {
	var service, delivery, wait stats.Histogram
	cfgs := make([]Config, n)
	for i := range cfgs {
		cfgs[i] = Config{
			ID: fmt.Sprintf("w-%07d", i), Index: uint64(i), Clock: clock.Real{},
			Heartbeat: 30 * time.Second, NoSync: true,
			ServiceLag: &service, DeliveryLag: &delivery, Mailbox: mailbox.Options{Wait: &wait},
		}
		if perGateway > 0 {
			cfgs[i].Gateway = fmt.Sprintf("gw-%04d", i/perGateway)
		}
	}
	return cfgs
}

// measureIdle builds a pool, runs it until every worker is online (and
// ready(p), if given), and reports heap, stack and goroutines per worker
// against the process before the pool was built.
func measureIdle(b *testing.B, n int, unit string, build func() (*Pool, error), ready func(*Pool) bool) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	p, err := build()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	tick := time.NewTicker(10 * time.Millisecond)
	for p.Stats().Online < n || ready != nil && !ready(p) {
		<-tick.C
	}
	tick.Stop()
	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	if path := os.Getenv("FLEETSIM_IDLE_PROFILE"); path != "" {
		// A heap profile of the idle fleet: where a worker's bytes go.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heap-B/"+unit)
	b.ReportMetric(float64(int64(after.StackInuse)-int64(before.StackInuse))/float64(n), "stack-B/"+unit)
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/"+unit)
	cancel()
	<-done
}
