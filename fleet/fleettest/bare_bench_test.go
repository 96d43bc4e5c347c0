package fleettest_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// bareWindow is how many commands the bare leader keeps unacknowledged:
// about what the relay of BenchmarkAckedDeliveries keeps (its limiter's
// 100 to 200).
const bareWindow = 200

// BenchmarkBareStack is the floor under BenchmarkAckedDeliveries: the
// same round trip on mochi and paho alone, with nothing of fleetsim but
// its in-memory pipe (broker.MemPipe) under the connections. A leader
// publishes commands at QoS 1 to benchWorkers paho workers, at most
// bareWindow unacknowledged; each worker answers every command with an
// ack at QoS 1 from its message handler. No outbox, no relay, no JSON, no
// mailboxes, no fleetsim broker hook. One op is one acked delivery, and
// cpu-µs/op is what fleetsim's is compared with (docs/BENCHMARKS.md).
//
// The leader is either a paho session over an in-memory pipe, as
// fleetsim's leader was on its embedded broker, or mochi's inline client
// (Server.Publish, Server.Subscribe), as it is now.
func BenchmarkBareStack(b *testing.B) {
	b.Run("paho-leader", func(b *testing.B) { benchBare(b, false) })
	b.Run("inline-leader", func(b *testing.B) { benchBare(b, true) })
}

func benchBare(b *testing.B, inline bool) {
	srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		b.Fatal(err)
	}
	ln := &pipeListener{ready: make(chan struct{})}
	if err := srv.AddListener(ln); err != nil {
		b.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		b.Fatal(err)
	}
	<-ln.ready
	defer func() {
		srv.Close()
		ln.wg.Wait()
	}()

	// The leader's side: a window of unacknowledged commands, released by
	// each ack.
	window := make(chan struct{}, bareWindow)
	var acked atomic.Int64
	allAcked := make(chan struct{})
	target := int64(b.N)
	onAck := func() {
		<-window
		if acked.Add(1) == target {
			close(allAcked)
		}
	}
	var publish func(topic string, payload []byte)
	if inline {
		if err := srv.Subscribe("bare/+/up", 1, func(*mqtt.Client, packets.Subscription, packets.Packet) { onAck() }); err != nil {
			b.Fatal(err)
		}
		publish = func(topic string, payload []byte) {
			if err := srv.Publish(topic, payload, false, 1); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		l := bareClient(b, ln, "leader", 1<<20)
		defer l.Disconnect(100)
		if t := l.Subscribe("bare/+/up", 1, func(paho.Client, paho.Message) { onAck() }); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			b.Fatalf("leader subscribe: %v", t.Error())
		}
		publish = func(topic string, payload []byte) { l.Publish(topic, 1, false, payload) }
	}

	downs := make([]string, benchWorkers)
	for i := range benchWorkers {
		id := fmt.Sprintf("w-%04d", i)
		downs[i] = "bare/" + id + "/down"
		up := "bare/" + id + "/up"
		w := bareClient(b, ln, id, 0)
		defer w.Disconnect(100)
		ack := func(c paho.Client, m paho.Message) { c.Publish(up, 1, false, m.Payload()) }
		if t := w.Subscribe(downs[i], 1, ack); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			b.Fatalf("worker subscribe: %v", t.Error())
		}
	}

	payload := make([]byte, 0, 16)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		window <- struct{}{}
		publish(downs[i%benchWorkers], strconv.AppendInt(payload[:0], int64(i), 10))
	}
	select {
	case <-allAcked:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d acked", acked.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acked/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// bareClient connects a paho client over a pipe of ln, configured as
// fleetsim configures its own (MQTT 3.1.1, no keepalive in memory, no
// auto-reconnect, handlers in order on one goroutine), or the comparison
// would measure the options.
func bareClient(b *testing.B, ln *pipeListener, id string, buffer int) paho.Client {
	o := paho.NewClientOptions().AddBroker("mem://").SetClientID(id).SetCleanSession(true).
		SetProtocolVersion(4).SetKeepAlive(0).SetAutoReconnect(false).SetOrderMatters(true).
		SetStore(paho.NewMemoryStore())
	o.SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) { return ln.dial(buffer), nil })
	c := paho.NewClient(o)
	if t := c.Connect(); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
		b.Fatalf("connect %s: %v", id, t.Error())
	}
	return c
}

// pipeListener is a mochi listener of in-memory pipes: the least a
// connection can cost.
type pipeListener struct {
	establish listeners.EstablishFn
	ready     chan struct{}
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     []net.Conn
}

func (l *pipeListener) Init(*slog.Logger) error { return nil }
func (l *pipeListener) ID() string              { return "pipe" }
func (l *pipeListener) Address() string         { return "mem://" }
func (l *pipeListener) Protocol() string        { return "mem" }

func (l *pipeListener) Serve(e listeners.EstablishFn) {
	l.establish = e
	close(l.ready)
}

// dial opens a pipe (buffer bytes each way; 0: 64 KiB) and serves its
// broker end until it closes.
func (l *pipeListener) dial(buffer int) net.Conn {
	if buffer == 0 {
		buffer = 64 << 10
	}
	client, server := broker.MemPipe(buffer)
	l.mu.Lock()
	l.conns = append(l.conns, server)
	l.mu.Unlock()
	l.wg.Go(func() { _ = l.establish(l.ID(), server) })
	return client
}

func (l *pipeListener) Close(closeClients listeners.CloseFn) {
	closeClients(l.ID())
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}
