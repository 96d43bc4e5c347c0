package broker

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

var (
	benchSessions = flag.Int("sessions", 10_000, "sessions per BenchmarkSessions and BenchmarkFanIn run")
	benchIdle     = flag.Duration("idle", 0, "BenchmarkSessions: also measure the CPU the idle sessions use over this long")
)

// BenchmarkSessions connects -sessions workers (each then subscribes to its
// down topic, as a fleetsim worker does) and reports the connect rate and,
// after a GC, the heap, stack and goroutines per session, counting both the
// broker's and the client's side. Run it with -benchtime=1x.
//
//	tuned:        StartBroker defaults with Auth, in-memory listener, NewClient
//	mochi-netpipe: mochi's defaults, net.Pipe, paho's defaults (keepalive 30 s)
//	mochi-mem:    mochi's defaults over the in-memory listener, NewClient
func BenchmarkSessions(b *testing.B) {
	n := *benchSessions
	b.Run("tuned", func(b *testing.B) {
		for b.Loop() {
			br, err := StartBroker(BrokerOptions{Auth: testAuth()})
			if err != nil {
				b.Fatal(err)
			}
			measureSessions(b, n, func(id string) (paho.Client, error) {
				return transport.NewClient(withMem(workerOpts(id)), br)
			})
			closeBroker(b, br.Close)
		}
	})
	b.Run("mochi-netpipe", func(b *testing.B) {
		for b.Loop() {
			srv, ln := startMochiDefaults(b, func(id string) listenerDialer { return newPipeListener(id) })
			measureSessions(b, n, func(id string) (paho.Client, error) {
				o := paho.NewClientOptions().AddBroker("tcp://pipe:1883").SetClientID(id)
				o.SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) {
					return ln.Dial(context.Background())
				})
				return paho.NewClient(o), nil
			})
			closeBroker(b, func(context.Context) error { return srv.Close() })
		}
	})
	b.Run("mochi-mem", func(b *testing.B) {
		for b.Loop() {
			srv, ln := startMochiDefaults(b, func(id string) listenerDialer { return NewMemListener(id, 0) })
			measureSessions(b, n, func(id string) (paho.Client, error) {
				o := withMem(transport.ClientOptions{ID: id, CleanSession: true})
				fake := &Broker{mem: ln.(*MemListener)}
				return transport.NewClient(o, fake)
			})
			closeBroker(b, func(context.Context) error { return srv.Close() })
		}
	})
}

func measureSessions(b *testing.B, n int, newClient func(id string) (paho.Client, error)) {
	ctx := context.Background()
	clients := make([]paho.Client, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 64 { // connectors
		wg.Go(func() {
			for i := range next {
				id := fmt.Sprintf("w%06d", i)
				c, err := newClient(id)
				if err == nil {
					err = transport.Wait(ctx, c.Connect())
				}
				if err == nil {
					err = transport.Wait(ctx, c.Subscribe(testTopics.Down(id), 1, func(paho.Client, paho.Message) {}))
				}
				if err != nil {
					b.Errorf("client %s: %v", id, err)
				}
				clients[i] = c
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)

	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) / 1024 }
	b.ReportMetric(float64(n)/elapsed.Seconds(), "conn/s")
	b.ReportMetric(per(after.HeapAlloc, before.HeapAlloc), "heapKB/session")
	b.ReportMetric(per(after.StackInuse, before.StackInuse), "stackKB/session")
	b.ReportMetric(per(after.HeapAlloc+after.StackInuse, before.HeapAlloc+before.StackInuse), "KB/session")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/session")
	if *benchIdle > 0 {
		// Idle sessions do nothing (no keepalive in memory); what runs is
		// mochi's event loop, which copies the client map every second.
		c0, t0 := cpuTime(), time.Now()
		time.Sleep(*benchIdle)
		b.ReportMetric(100*(cpuTime()-c0).Seconds()/time.Since(t0).Seconds(), "idleCPU%")
	}

	for _, c := range clients {
		if c != nil {
			wg.Go(func() { c.Disconnect(1000) })
		}
	}
	wg.Wait()
}

func closeBroker(b *testing.B, close func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := close(ctx); err != nil {
		b.Fatal(err)
	}
}

type listenerDialer interface {
	listeners.Listener
	Dial(context.Context) (net.Conn, error)
}

// startMochiDefaults is the naive baseline: mochi with its default options
// (8,192 write slots per client, 2 KiB read buffer, $SYS every second) and
// an allow-all hook.
func startMochiDefaults(b *testing.B, listener func(id string) listenerDialer) (*mqtt.Server, listenerDialer) {
	srv := mqtt.New(&mqtt.Options{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		b.Fatal(err)
	}
	ln := listener("baseline")
	if err := srv.AddListener(ln); err != nil {
		b.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		b.Fatal(err)
	}
	return srv, ln
}

// pipeListener hands net.Pipe connections to mochi: the synchronous,
// unbuffered in-process transport one would reach for first.
type pipeListener struct {
	*MemListener
}

func newPipeListener(id string) *pipeListener { return &pipeListener{NewMemListener(id, 0)} }

func (l *pipeListener) Dial(ctx context.Context) (net.Conn, error) {
	<-l.served
	l.mu.Lock()
	establish, log := l.establish, l.log
	l.mu.Unlock()
	client, server := net.Pipe()
	if !l.set.serve(l.id, server, 0, establish, log) {
		return nil, ErrListenerClosed
	}
	return client, nil
}
