package broker

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// floodPackets is n QoS 0 telemetry publishes of worker id, in one buffer.
func floodPackets(id string, n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		buf.Write(publishPacket(testTopics.Up(id), fmt.Appendf(nil, `{"v":1,"id":"t%d","kind":"telemetry","body":{"x":1}}`, i), 0))
	}
	return buf.Bytes()
}

// One worker floods the leader with QoS 0 telemetry as fast as its socket
// takes it, while the leader is busy. Without a limit, the flood fills
// the leader's write queue and the broker drops what comes after it: the
// message another worker sends next (a deploy's ack) is lost. With it,
// the broker lets the flooder's burst through and drops the rest of the
// flood, counted and logged, and the other worker's message reaches the
// leader behind no more than that burst. On the fake clock no token
// comes back, so the counts are exact; a second later the flooder may
// send its rate's worth again.
func TestFloodDoesNotStarveTheLeader(t *testing.T) {
	const flood, burst = 5000, 50
	var logs syncBuffer
	clk := clock.NewFake(t0)
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), Clock: clk, Logger: slogTo(&logs),
		RateLimit: RateLimit{Messages: 10, Burst: burst, Bytes: -1}})

	// The leader's queue holds a little more than one burst.
	lo := leaderOpts()
	lo.WriteQueue, lo.MemBuffer = 2*burst, 4<<10
	leader := connect(t, b, lo)
	release := make(chan struct{})
	got := make(chan paho.Message, 2*flood)
	subscribe(t, leader, testTopics.AllUp(), 0, func(_ paho.Client, m paho.Message) {
		<-release // busy: paho stops reading, the broker queues
		got <- m
	})

	flooder := dialRaw(t, b, "w-flood", "w-flood", wire.WorkerPassword(testSecret, "w-flood"))
	flooder.send(floodPackets("w-flood", flood))
	flooder.fence(testTopics.Up("w-flood")) // over the limit too, and acknowledged all the same
	other := dialRaw(t, b, "w-2", "w-2", wire.WorkerPassword(testSecret, "w-2"))
	other.send(publishPacket(testTopics.Up("w-2"), []byte("ack of deploy 7"), 0))
	other.fence(testTopics.Up("w-2"))

	s := b.Stats()
	if s.RateLimited != flood+1-burst || s.PublishDropped != 0 {
		t.Errorf("RateLimited %d, PublishDropped %d; want %d (the flood and its fence past the burst), 0", s.RateLimited, s.PublishDropped, flood+1-burst)
	}
	close(release)
	ahead := 0
	for m := (paho.Message)(nil); m == nil || m.Topic() != testTopics.Up("w-2"); ahead++ {
		select {
		case m = <-got:
		case <-ctxT(t).Done():
			t.Fatalf("the other worker's message never reached the leader (%d of the flood did)", ahead)
		}
	}
	ahead-- // the loop counted w-2's message too
	if ahead != burst {
		t.Errorf("the other worker's message came behind %d of the flood; want the burst, %d", ahead, burst)
	}

	clk.Advance(time.Second) // 10 tokens back
	flooder.send(floodPackets("w-flood", 20))
	flooder.fence(testTopics.Up("w-flood"))
	if got, want := b.Stats().RateLimited, uint64(flood+1-burst+11); got != want {
		t.Errorf("a second later: RateLimited %d, want %d (10 of 21 through)", got, want)
	}
	l := logs.String()
	if n := strings.Count(l, "message dropped: over the client's inbound rate limit"); n != 1 ||
		!strings.Contains(l, "client=w-flood") || !strings.Contains(l, "10 messages/s (burst 50)") {
		t.Errorf("want one line naming the flooder and its limit within the log interval, got %d:\n%s", n, l)
	}
}

// Who is limited, over TCP: a worker its burst, a gateway its burst per
// device in its range, the leader's login not at all; in-memory clients
// are not limited. A worker that reconnects finds its bucket as it left
// it.
func TestRateLimitByLogin(t *testing.T) {
	const burst = 20
	clk := clock.NewFake(t0)
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), Clock: clk,
		RateLimit: RateLimit{Messages: 1, Burst: burst, Bytes: -1}})
	dropped := func() uint64 { return b.Stats().RateLimited }

	gwUser := wire.GatewayUsername("gw-1", wire.DeviceRange{Prefix: "d-", First: 0, Last: 3})
	cases := []struct {
		name, id, user, pass, topic string
		send                        int
		through                     int
	}{
		{"a worker", "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"), testTopics.Up("w-1"), 3 * burst, burst},
		{"a gateway of 4 devices", gwUser, gwUser, wire.WorkerPassword(testSecret, gwUser), testTopics.Up("d-2"), 5 * burst, 4 * burst},
		{"the leader", "_leader-x", wire.LeaderUsername, "leader-pw", testTopics.Down("w-1"), 3 * burst, 3 * burst},
	}
	for _, tc := range cases {
		before := dropped()
		c := dialRaw(t, b, tc.id, tc.user, tc.pass)
		var buf bytes.Buffer
		for range tc.send - 1 {
			buf.Write(publishPacket(tc.topic, []byte("x"), 0))
		}
		c.send(buf.Bytes())
		c.fence(tc.topic)
		if got := dropped() - before; got != uint64(tc.send-tc.through) {
			t.Errorf("%s: %d of %d dropped, want %d", tc.name, got, tc.send, tc.send-tc.through)
		}
		c.Close()
	}

	// w-1 comes back on a new connection: no fresh burst.
	waitFor(t, "w-1's first connection gone", func() bool { return b.Stats().TCPConnections == 0 })
	before := dropped()
	c := dialRaw(t, b, "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"))
	c.fence(testTopics.Up("w-1"))
	if got := dropped() - before; got != 1 {
		t.Errorf("reconnected worker: %d dropped, want its 1 message (its bucket still empty)", got)
	}

	before = dropped()
	mem := connect(t, b, workerOpts("w-mem"))
	for range 3 * burst {
		mem.Publish(testTopics.Up("w-mem"), 0, false, "x")
	}
	publish(t, mem, testTopics.Up("w-mem"), 1, "fence")
	if got := dropped() - before; got != 0 {
		t.Errorf("in-memory worker: %d dropped, want 0", got)
	}
}

// Without Auth the broker takes a login's username at its word; a client
// without one is not limited, as it could be a gateway of any size.
func TestRateLimitWithoutAuth(t *testing.T) {
	clk := clock.NewFake(t0)
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Clock: clk, RateLimit: RateLimit{Messages: 1, Burst: 5, Bytes: -1}})
	for _, tc := range []struct {
		user    string
		dropped uint64
	}{{"", 0}, {"w-1", 10}, {wire.LeaderUsername, 0}} {
		before := b.Stats().RateLimited
		c := dialRaw(t, b, "c-"+tc.user, tc.user, "pw")
		var buf bytes.Buffer
		for range 14 {
			buf.Write(publishPacket("fleet/w-1/up", []byte("x"), 0))
		}
		c.send(buf.Bytes())
		c.fence("fleet/w-1/up")
		if got := b.Stats().RateLimited - before; got != tc.dropped {
			t.Errorf("username %q: %d of 15 dropped, want %d", tc.user, got, tc.dropped)
		}
	}
}

// A publish larger than what is left of the byte bucket goes through
// when the bucket is not in debt, and leaves it in debt: the next is
// dropped until the bucket refills.
func TestRateLimitBytes(t *testing.T) {
	clk := clock.NewFake(t0)
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), Clock: clk,
		RateLimit: RateLimit{Messages: -1, Bytes: 1000, ByteBurst: 1000}})
	c := dialRaw(t, b, "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"))
	topic := testTopics.Up("w-1")
	c.send(publishPacket(topic, make([]byte, 2990), 0)) // through, with its topic 3002 bytes: 1000 - 3002 left
	c.fence(topic)                                      // dropped
	clk.Advance(2 * time.Second)                        // -2 left: still in debt
	c.fence(topic)                                      // dropped
	clk.Advance(time.Second)
	c.fence(topic) // through
	if got := b.Stats().RateLimited; got != 2 {
		t.Errorf("RateLimited %d, want 2", got)
	}
}
