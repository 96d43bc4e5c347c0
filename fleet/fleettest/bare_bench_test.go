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
	"github.com/fleetsim/fleetsim/fleet/wire"
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
//
// The third variant, inline-harness, is not a floor of the stack but of
// the protocol: the least a hand-rolled harness speaking fleetsim's
// protocol (docs/PROTOCOL.md) does on top of inline-leader. Its leader
// encodes each command as an envelope, keeps it pending under a timer
// (the ask timeout the protocol asks for; it never fires here) and
// decodes each ack to find the command it answers; each worker decodes
// the command and hands it to a goroutine of its own through a bounded
// channel (a device's mailbox), which encodes and publishes the ack. It
// uses fleet/wire for the envelope, as such a harness in Go could; it
// has no outbox, no relay, no flow control, no statistics.
func BenchmarkBareStack(b *testing.B) {
	b.Run("paho-leader", func(b *testing.B) { benchBare(b, false, false) })
	b.Run("inline-leader", func(b *testing.B) { benchBare(b, true, false) })
	b.Run("inline-harness", func(b *testing.B) { benchBare(b, true, true) })
}

func benchBare(b *testing.B, inline, harness bool) {
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
	var asks *harnessAsks
	if harness {
		asks = &harnessAsks{pending: map[string]*time.Timer{}}
	}
	if inline {
		onUp := func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) { onAck() }
		if harness {
			onUp = func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) {
				env, err := wire.Decode(pk.TopicName, pk.Payload, wire.Up, 0)
				if err == nil && asks.answered(env.Ref) {
					onAck()
				}
			}
		}
		if err := srv.Subscribe("bare/+/up", 1, onUp); err != nil {
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
		if harness {
			mailbox := make(chan wire.Envelope, harnessMailbox)
			var served sync.WaitGroup
			defer served.Wait()
			defer close(mailbox)
			served.Go(func() {
				for env := range mailbox {
					payload, err := wire.Encode(wire.Ack(&env, wire.ResultOK))
					if err != nil {
						panic(err)
					}
					w.Publish(up, 1, false, payload)
				}
			})
			ack = func(_ paho.Client, m paho.Message) {
				if env, err := wire.Decode(m.Topic(), m.Payload(), wire.Down, 0); err == nil {
					mailbox <- env
				}
			}
		}
		if t := w.Subscribe(downs[i], 1, ack); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			b.Fatalf("worker subscribe: %v", t.Error())
		}
	}

	payload := make([]byte, 0, 16)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		window <- struct{}{}
		if harness {
			publish(downs[i%benchWorkers], asks.command(i))
			continue
		}
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

// harnessAsks is inline-harness's leader: the commands it waits on.
type harnessAsks struct {
	mu      sync.Mutex
	pending map[string]*time.Timer
}

// harnessMailbox is the capacity of a harness worker's mailbox: room
// for every command the leader's window can have at one worker. Not
// fleetsim's 1024, which its mailbox does not allocate until it fills:
// 200 channels of 1024 envelopes would be 40 MB of live heap the GC
// scans, which spaces its cycles out and makes the harness look cheaper.
const harnessMailbox = 64

// askTimeout is the harness's ask timeout: far longer than any run.
const askTimeout = time.Hour

// command encodes command i as an envelope and keeps it pending.
func (a *harnessAsks) command(i int) []byte {
	id := "c" + strconv.Itoa(i)
	payload, err := wire.Encode(wire.Envelope{V: wire.Version, ID: id, Kind: wire.KindPing, Attempt: 1, SentMs: time.Now().UnixMilli()})
	if err != nil {
		panic(err)
	}
	t := time.AfterFunc(askTimeout, func() { a.answered(id) })
	a.mu.Lock()
	a.pending[id] = t
	a.mu.Unlock()
	return payload
}

// answered ends the ask id, reporting whether it was pending.
func (a *harnessAsks) answered(id string) bool {
	a.mu.Lock()
	t, ok := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if ok {
		t.Stop()
	}
	return ok
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
