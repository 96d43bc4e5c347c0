package broker

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// stalledPublish is a PUBLISH of a body announced as size bytes, all of it
// but the last byte: what a client sends to make the broker hold a buffer
// of the whole body for as long as the connection lasts.
func stalledPublish(topic string, size int) []byte {
	p := publishPacket(topic, make([]byte, size-2-len(topic)), 0)
	return p[:len(p)-1]
}

// Logged-in clients with keepalive 0 (no deadline of mochi's own) each
// send all but the last byte of a publish: every one is disconnected once
// PacketReadTimeout has passed, each counted and logged, and the bytes
// held for them go back to none.
func TestStalledPacketsTimeOut(t *testing.T) {
	const n, size = 20, 64 << 10
	var logs syncBuffer
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), PacketReadTimeout: 100 * time.Millisecond,
		Logger: slogTo(&logs)})
	clients := make([]*rawClient, n)
	for i := range clients {
		id := fmt.Sprintf("w-%d", i)
		clients[i] = dialRaw(t, b, id, id, wire.WorkerPassword(testSecret, id))
		clients[i].send(stalledPublish(testTopics.Up(id), size))
	}
	for _, c := range clients {
		c.closedByBroker()
	}
	s := b.Stats()
	if s.PacketTimeouts != n || s.PartialBytes != 0 || s.PartialBudget != 0 {
		t.Errorf("PacketTimeouts %d, PartialBytes %d, PartialBudget %d; want %d, 0, 0", s.PacketTimeouts, s.PartialBytes, s.PartialBudget, n)
	}
	l := logs.String()
	if !strings.Contains(l, "packet not received in time; connection closed") || !strings.Contains(l, "client=w-3") ||
		!strings.Contains(l, fmt.Sprintf("size=%d missing=1 timeout=100ms", size+4)) {
		t.Errorf("log does not say which client stalled which packet:\n%s", l)
	}
}

// A publish that arrives in two pieces, the broker holding its body in
// between, is delivered whole, and the bytes held for it are given back.
func TestPacketInPieces(t *testing.T) {
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), PacketReadTimeout: patience})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, 1)
	subscribe(t, leader, testTopics.AllUp(), 0, ups.handler)
	c := dialRaw(t, b, "w-1", "w-1", wire.WorkerPassword(testSecret, "w-1"))
	p := publishPacket(testTopics.Up("w-1"), []byte("in two pieces"), 0)
	c.send(p[:len(p)-5])
	waitFor(t, "the first piece read", func() bool { return b.Stats().PartialBytes == int64(len(p)-2) })
	c.send(p[len(p)-5:])
	if m := ups.next(t); string(m.Payload()) != "in two pieces" {
		t.Fatalf("leader got %q", m.Payload())
	}
	c.fence(testTopics.Up("w-1"))
	if s := b.Stats(); s.PacketTimeouts != 0 || s.PartialBytes != 0 {
		t.Fatalf("PacketTimeouts %d, PartialBytes %d; want 0, 0", s.PacketTimeouts, s.PartialBytes)
	}
}

// Clients announcing large publishes and sending all but their last byte
// are held to MaxPartialBytes between them: once the broker holds that
// much, the next one is disconnected as its header arrives, before mochi
// allocates its body, and counted. The heap grows by the bytes held, not
// by what every client announced; closing the held ones gives the bytes
// back. (The packet timeout is out of the way here: the patience.)
func TestPartialPacketsBudget(t *testing.T) {
	const n, held, size = 20, 5, 1000_000
	var logs syncBuffer
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), PacketReadTimeout: patience,
		MaxPartialBytes: held * size, Logger: slogTo(&logs)})
	clients := make([]*rawClient, n)
	stalled := make([][]byte, n)
	for i := range clients {
		id := fmt.Sprintf("w-%d", i)
		clients[i] = dialRaw(t, b, id, id, wire.WorkerPassword(testSecret, id))
		stalled[i] = stalledPublish(testTopics.Up(id), size)
	}
	before := liveHeap()
	for i, c := range clients {
		if i < held {
			c.send(stalled[i])
		} else {
			c.Write(stalled[i]) // fails once the broker has closed the connection
			c.closedByBroker()
			if got := b.Stats().PartialBudget; got != uint64(i-held+1) {
				t.Fatalf("client %d refused; PartialBudget = %d, want %d", i, got, i-held+1)
			}
			continue
		}
		// The broker holds it once it has read the header: wait for
		// that (a read on a real socket, so bounded polling).
		want := int64(i+1) * size // each body, as its header announced it
		waitFor(t, fmt.Sprintf("client %d's packet held", i), func() bool { return b.Stats().PartialBytes == want })
	}
	grown := liveHeap() - before
	runtime.KeepAlive(stalled) // not garbage before the second look
	t.Logf("heap grew %d KiB with %d clients holding %d KiB each", grown>>10, held, size>>10)
	// The lower bound shows the bodies are held (less what the refused
	// connections gave back), the upper one that no more are.
	if grown < held*size-1<<20 || grown > held*size+4<<20 {
		t.Errorf("heap grew by %d bytes; want about the %d held (within -1 MiB and +4 MiB), not the %d all %d clients announced",
			grown, held*size, n*size, n)
	}
	for _, c := range clients[:held] {
		c.Close()
	}
	waitFor(t, "the held bytes given back", func() bool { return b.Stats().PartialBytes == 0 })
	if s := b.Stats(); s.PartialBudget != n-held || s.PacketTimeouts != 0 {
		t.Errorf("PartialBudget %d, PacketTimeouts %d; want %d, 0", s.PartialBudget, s.PacketTimeouts, n-held)
	}
	if l := logs.String(); !strings.Contains(l, "too many bytes held for partial packets; connection closed") ||
		!strings.Contains(l, fmt.Sprintf("size=%d held=%d limit=%d", size, held*size, held*size)) {
		t.Errorf("log does not say the refusal with its sizes:\n%s", l)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// waitFor polls cond until it holds, within the patience. Only for what
// waits on a real socket: a broker reading what a test wrote to it.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, patience)
		}
		time.Sleep(time.Millisecond)
	}
}

// scriptConn is a net.Conn whose reads follow a script on a fake wall
// clock: each read waits its step's wait and returns its bytes, unless
// the read deadline comes first (then the deadline error, at the
// deadline). The test lets a step's busy time pass after its read (the
// broker at work, not reading).
type scriptConn struct {
	fromReader
	now      time.Time
	steps    []readStep
	deadline time.Time
}

type readStep struct {
	wait, busy time.Duration
	data       []byte
}

func (c *scriptConn) Read(b []byte) (int, error) {
	if len(c.steps) == 0 {
		return 0, io.EOF
	}
	s := &c.steps[0]
	if !c.deadline.IsZero() && c.now.Add(s.wait).After(c.deadline) {
		s.wait -= c.deadline.Sub(c.now)
		c.now = c.deadline
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	}
	c.now = c.now.Add(s.wait)
	n := copy(b, s.data)
	c.steps = c.steps[1:]
	return n, nil
}

func (c *scriptConn) SetDeadline(t time.Time) error     { c.deadline = t; return nil }
func (c *scriptConn) SetReadDeadline(t time.Time) error { c.deadline = t; return nil }

// A packet's time counts only while the broker waits in Read for it,
// added up over its reads; the next packet has time of its own; the
// broker's own deadline (its keepalive) still ends a wait that comes
// before the packet's, as itself; once no packet is partial, the broker's
// deadline is back on the connection.
func TestPacketDeadline(t *testing.T) {
	const timeout = 100 * time.Millisecond
	ms := time.Millisecond
	pk := publishPacket("fleet/w-1/up", []byte("0123456789"), 0) // 26 bytes
	cases := []struct {
		name      string
		keepalive time.Duration // the broker's deadline, from the start; 0: none
		steps     []readStep
		want      error // of the last read
		missing   int
	}{
		{name: "waits adding up to less than the timeout, the broker busy in between",
			steps: []readStep{{0, time.Second, pk[:1]}, {30 * ms, time.Second, pk[1:10]}, {30 * ms, time.Second, pk[10:20]}, {30 * ms, 0, pk[20:]}},
			want:  io.EOF},
		{name: "waits adding up to more",
			steps: []readStep{{0, 0, pk[:10]}, {60 * ms, time.Second, pk[10:20]}, {60 * ms, 0, pk[20:]}},
			want:  ErrPacketTimeout, missing: 6},
		{name: "a header cut short",
			steps: []readStep{{0, 0, pk[:1]}, {150 * ms, 0, pk[1:]}},
			want:  ErrPacketTimeout},
		{name: "each packet its own time",
			steps: []readStep{{0, 0, pk[:20]}, {90 * ms, 0, append(pk[20:], pk[:20]...)}, {90 * ms, 0, pk[20:]}},
			want:  io.EOF},
		{name: "the keepalive first", keepalive: 50 * ms,
			steps: []readStep{{0, 0, pk[:20]}, {80 * ms, 0, pk[20:]}},
			want:  os.ErrDeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scriptConn{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), steps: tc.steps}
			var refused error
			c := newLimitConn(sc, &connLimits{connectMax: 1 << 10, max: 1 << 10, timeout: timeout,
				onRefuse: func(_ *limitConn, err error) { refused = err }, wall: func() time.Time { return sc.now }})
			c.packets = 1 // past the CONNECT
			if tc.keepalive > 0 {
				c.SetDeadline(sc.now.Add(tc.keepalive))
			}
			var err error
			for err == nil {
				var busy time.Duration
				if len(sc.steps) > 0 {
					busy = sc.steps[0].busy
				}
				_, err = c.Read(make([]byte, 64))
				sc.now = sc.now.Add(busy)
			}
			if tc.want == io.EOF {
				if err != io.EOF || refused != nil {
					t.Fatalf("read: %v (refused %v); want everything read", err, refused)
				}
				if !sc.deadline.IsZero() {
					t.Fatalf("read deadline %v left on the connection; want the broker's own, none", sc.deadline)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("read: %v; want %v", err, tc.want)
			}
			var pe *PacketTimeoutError
			if errors.As(err, &pe) != (tc.want == ErrPacketTimeout) || refused != nil && refused != error(pe) || pe == nil && refused != nil {
				t.Fatalf("read: %v, refused %v; want a *PacketTimeoutError only for the packet's own deadline", err, refused)
			}
			if pe != nil && (pe.Missing != tc.missing || pe.Packet != "PUBLISH") {
				t.Fatalf("refusal %+v; want a PUBLISH with %d bytes missing", pe, tc.missing)
			}
		})
	}
}
