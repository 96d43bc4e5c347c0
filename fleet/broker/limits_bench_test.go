package broker

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// BenchmarkInboundLimits: a worker logged in over TCP publishes QoS 0
// heartbeats as fast as its socket takes them, with no subscriber (the
// broker's inbound path alone, where the limits' share is largest): with
// every TCP limit off, and with the defaults (packet deadline, partial
// budget) and a rate limit set so high that nothing is dropped, so the
// bucket is consulted for every message. ns/op is per message.
func BenchmarkInboundLimits(b *testing.B) {
	never := RateLimit{Messages: 1e12, Burst: 1 << 40, Bytes: 1e15, ByteBurst: 1 << 50}
	for _, v := range []struct {
		name string
		o    BrokerOptions
	}{
		{"off", BrokerOptions{PacketReadTimeout: -1, MaxPartialBytes: -1, MaxConnections: -1, RateLimit: RateLimit{Messages: -1, Bytes: -1}}},
		{"on", BrokerOptions{RateLimit: never}},
	} {
		b.Run(v.name, func(b *testing.B) {
			o := v.o
			o.TCPAddr, o.Auth = "127.0.0.1:0", testAuth()
			br := startBroker(b, o)
			c := dialRaw(b, br, "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"))
			const chunk = 512
			var buf bytes.Buffer
			for range chunk {
				buf.Write(publishPacket(testTopics.Up("w-1"), []byte(`{"v":1,"id":"h1","kind":"heartbeat","sent_ms":1767225600000,"body":{"version":"1.4.2","mailbox_depth":3}}`), 0))
			}
			one := buf.Bytes()
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += chunk {
				c.send(one[:len(one)*min(chunk, b.N-n)/chunk])
			}
			c.fence(testTopics.Up("w-1"))
			b.StopTimer()
			if s := br.Stats(); s.RateLimited != 0 {
				b.Fatalf("%d dropped", s.RateLimited)
			}
		})
	}
}

// BenchmarkRateLimitAllow: the limiter's check of one publish on the wall
// clock, against a client without a bucket (in-memory, or not limited).
func BenchmarkRateLimitAllow(b *testing.B) {
	r := newRateLimiter(clock.Real{}, RateLimit{Messages: 1e12, Burst: 1 << 40, Bytes: -1}, 0, nil, nil, nil)
	limited := newLimitConn(nil, &connLimits{})
	limited.bucket = r.attach("w-1", 1)
	pk := packets.Packet{TopicName: "fleet/w-1/up", Payload: make([]byte, 120)}
	for _, v := range []struct {
		name string
		cl   *mqtt.Client
	}{
		{"no-bucket", &mqtt.Client{Net: mqtt.ClientConnection{Conn: newFirstRead(&fromReader{})}}},
		{"bucket", &mqtt.Client{Net: mqtt.ClientConnection{Conn: newFirstRead(limited)}}},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !r.allow(v.cl, &pk) {
					b.Fatal("dropped")
				}
			}
		})
	}
}

// BenchmarkTCPSessionCost: what an idle logged-in TCP session costs the
// broker (the clients are bare sockets): heap and goroutine stacks per
// session after a GC, what BrokerOptions.MaxConnections bounds. Run it
// with -benchtime=1x.
func BenchmarkTCPSessionCost(b *testing.B) {
	const n = 2000
	for b.Loop() {
		br := startBroker(b, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth()})
		mem := func() (heap, stack uint64) {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc, m.StackInuse
		}
		h0, s0 := mem()
		for i := range n {
			id := fmt.Sprintf("w-%d", i)
			c := dialRaw(b, br, id, id, wire.WorkerPassword(testSecret, id))
			c.fence(testTopics.Up(id)) // its session established
		}
		h1, s1 := mem()
		b.ReportMetric(float64(h1-h0)/n/1000, "heap-KB/session")
		b.ReportMetric(float64(s1-s0)/n/1000, "stack-KB/session")
	}
}
