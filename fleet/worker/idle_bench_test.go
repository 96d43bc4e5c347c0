package worker

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// quietSession is a connected session that carries nothing: the cost of a
// worker actor measured apart from its transport.
type quietSession struct{ lost chan struct{} }

func (s *quietSession) Publish(context.Context, string, byte, bool, []byte) error { return nil }
func (s *quietSession) Send(string, byte, []byte) error                           { return nil }
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
	n := 10_000
	if s := os.Getenv("FLEETSIM_IDLE_WORKERS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("FLEETSIM_IDLE_WORKERS=%q: want a positive integer", s)
		}
	}
	dial := DialerFunc(func(context.Context, DialOptions) (Session, error) {
		return &quietSession{lost: make(chan struct{})}, nil
	})
	var service, delivery, wait stats.Histogram
	cfgs := make([]Config, n)
	for i := range cfgs {
		cfgs[i] = Config{
			ID: "w-" + strconv.Itoa(i), Index: uint64(i), Clock: clock.Real{},
			Heartbeat: 30 * time.Second, NoSync: true,
			ServiceLag: &service, DeliveryLag: &delivery, Mailbox: mailbox.Options{Wait: &wait},
		}
	}
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		p, err := NewPool(cfgs, dial, PoolOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = p.Run(ctx); close(done) }()
		tick := time.NewTicker(10 * time.Millisecond)
		for p.Stats().Online < n {
			<-tick.C
		}
		tick.Stop()
		runtime.GC()
		runtime.ReadMemStats(&after)
		g1 := runtime.NumGoroutine()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/worker")
		b.ReportMetric(float64(after.StackInuse-before.StackInuse)/float64(n), "stack-B/worker")
		b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/worker")
		cancel()
		<-done
	}
}
