package broker

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// header returns an MQTT fixed header: type byte t and remaining length n.
func header(t byte, n int) []byte {
	h := []byte{t}
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		h = append(h, b)
		if n == 0 {
			return h
		}
	}
}

// packet returns a packet of type t with a body of n bytes.
func packet(t byte, n int) []byte { return append(header(t, n), bytes.Repeat([]byte{'x'}, n)...) }

// fromReader is a net.Conn reading from r, counting what it hands out.
type fromReader struct {
	net.Conn // nil: only Read, Close and the addresses are used
	r        io.Reader
	served   int
}

func (c *fromReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.served += n
	return n, err
}
func (c *fromReader) Close() error                { return nil }
func (c *fromReader) Write(b []byte) (int, error) { return len(b), nil }
func (c *fromReader) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242}
}
func (c *fromReader) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1883}
}
func (c *fromReader) SetDeadline(time.Time) error      { return nil }
func (c *fromReader) SetReadDeadline(time.Time) error  { return nil }
func (c *fromReader) SetWriteDeadline(time.Time) error { return nil }

// oneByte reads one byte at a time, so that every header is split across
// reads.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(b []byte) (int, error) { return o.r.Read(b[:min(len(b), 1)]) }

// A limitConn passes packets within the limits through unchanged,
// whatever the reads' boundaries, and refuses the first packet over its
// limit (the CONNECT's, or the later packets') after passing on what came
// before it (and, when the header was split across reads, the header
// bytes before its last).
func TestLimitConn(t *testing.T) {
	const connectMax, max = 64, 1024
	cat := func(ps ...[]byte) []byte { return bytes.Join(ps, nil) }
	cases := []struct {
		name   string
		stream []byte
		pass   int // bytes passed on before the refusal (all: no refusal)
		size   int // the refused packet's size; 0: none refused
	}{
		{"within the limits", cat(packet(0x10, 62), packet(0x30, 1021), packet(0xC0, 0)), -1, 0},
		{"a CONNECT one byte over", packet(0x10, 63), 0, 65},
		{"a later packet one byte over", cat(packet(0x10, 10), packet(0x30, 100), packet(0x30, 1022)), 12 + 102, 1025},
		{"64 MiB announced", cat(packet(0x10, 10), header(0x30, 64<<20)), 12, 64<<20 + 5},
		{"a CONNECT of 256 MiB announced", header(0x10, 268_435_455), 0, 268_435_455 + 5},
		{"a malformed length is left to the broker", cat(packet(0x10, 10), []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x7f}), -1, 0},
	}
	for _, tc := range cases {
		for _, split := range []bool{false, true} {
			name := tc.name
			if split {
				name += ", a byte per read"
			}
			t.Run(name, func(t *testing.T) {
				var r io.Reader = bytes.NewReader(tc.stream)
				if split {
					r = oneByte{r}
				}
				var refused error
				c := newLimitConn(&fromReader{r: r}, &connLimits{connectMax: connectMax, max: max,
					onRefuse: func(_ *limitConn, e error) { refused = e }})
				got, err := io.ReadAll(c)
				if tc.size == 0 {
					if err != nil || !bytes.Equal(got, tc.stream) || refused != nil {
						t.Fatalf("read %d of %d bytes, %v (refused %v); want all, unchanged", len(got), len(tc.stream), err, refused)
					}
					return
				}
				var e *PacketTooLargeError
				if !errors.As(err, &e) || !errors.Is(err, ErrPacketTooLarge) || e.Size != tc.size || refused != error(e) || e.First != (tc.pass == 0) {
					t.Fatalf("error %v (callback %v); want a refusal of %d bytes", err, refused, tc.size)
				}
				want := tc.pass
				if split { // the header's bytes but its last were passed on already
					for want++; tc.stream[want]&0x80 != 0; want++ {
					}
				}
				if !bytes.Equal(got, tc.stream[:want]) {
					t.Fatalf("passed on %d bytes before the refusal, want %d", len(got), want)
				}
				if _, err2 := c.Read(make([]byte, 10)); err2 != err {
					t.Fatalf("read after the refusal: %v, want the same refusal", err2)
				}
			})
		}
	}
}

// mochi itself, reading a CONNECT announcing 64 MiB through a limitConn,
// reads no more than its read buffer before it gives up: the body is
// neither read nor allocated. Without the limitConn it reads all 64 MiB.
func TestOversizeConnectNotRead(t *testing.T) {
	srv := mqtt.New(&mqtt.Options{ClientNetReadBufferSize: 1024, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		t.Fatal(err)
	}
	body := io.LimitReader(zeros{}, 64<<20)
	src := &fromReader{r: io.MultiReader(bytes.NewReader(header(0x10, 64<<20)), body)}
	err := srv.EstablishConnection("t", newLimitConn(src, &connLimits{connectMax: DefaultMaxConnectSize, max: DefaultMaxPacketSize}))
	if src.served > 2048 {
		t.Fatalf("mochi read %d bytes of a CONNECT announcing 64 MiB; want at most its 1 KiB read buffer", src.served)
	}
	if !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("EstablishConnection: %v, want ErrPacketTooLarge", err)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// Over TCP, end to end: a CONNECT announcing 64 MiB gets the connection
// closed without a CONNACK; a worker's publish over MaxPacketSize gets the
// worker disconnected and never reaches the leader, while one within it
// does; each refusal is counted and logged with its size. In-memory
// clients are not limited.
func TestPacketLimitsOverTCP(t *testing.T) {
	var logs syncBuffer
	const max = 64 << 10
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth(), MaxPacketSize: max, Logger: slogTo(&logs)})
	leader := connect(t, b, leaderOpts())
	ups := make(inbox, 10)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)

	raw, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(header(0x10, 64<<20))
	raw.Write(make([]byte, 4096)) // may fail: the broker may have closed already
	raw.SetReadDeadline(time.Now().Add(patience))
	if n, err := raw.Read(make([]byte, 16)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("after a 64 MiB CONNECT header: read %d bytes, %v; want the connection closed, no CONNACK", n, err)
	}
	if got := b.Stats().PacketTooLarge; got != 1 {
		t.Fatalf("PacketTooLarge = %d after the CONNECT, want 1", got)
	}

	lost := make(chan error, 1)
	o := workerOpts("w-1")
	o.Broker = "tcp://" + b.Addr()
	o.OnConnectionLost = func(_ paho.Client, err error) { lost <- err }
	w := connect(t, b, o)
	publish(t, w, testTopics.Up("w-1"), 1, strings.Repeat("a", max-100))
	if m := ups.next(t); len(m.Payload()) != max-100 {
		t.Fatalf("leader got %d bytes, want %d", len(m.Payload()), max-100)
	}
	w.Publish(testTopics.Up("w-1"), 1, false, strings.Repeat("secret", max/6+1)) // its token fails with the connection
	select {
	case <-lost:
	case <-ctxT(t).Done():
		t.Fatal("the worker was not disconnected for a packet over the limit")
	}
	if got := b.Stats().PacketTooLarge; got != 2 {
		t.Fatalf("PacketTooLarge = %d after the publish, want 2", got)
	}
	select {
	case m := <-ups:
		t.Fatalf("the oversize publish reached the leader (%d bytes)", len(m.Payload()))
	default:
	}

	// In memory, the leader publishes more than MaxPacketSize and is
	// delivered to.
	downs := make(inbox, 1)
	other := connect(t, b, leaderOpts2())
	subscribe(t, other, testTopics.Down("w-2"), 1, downs.handler)
	publish(t, leader, testTopics.Down("w-2"), 1, strings.Repeat("b", 2*max))
	if m := downs.next(t); len(m.Payload()) != 2*max {
		t.Fatalf("in memory: got %d bytes, want %d", len(m.Payload()), 2*max)
	}

	l := logs.String()
	if strings.Count(l, "packet too large") != 2 || !strings.Contains(l, "packet=CONNECT size=67108869") ||
		!strings.Contains(l, "packet=PUBLISH size=65558 limit=65536 remote=127.0.0.1") ||
		!strings.Contains(l, "client=w-1") || strings.Contains(l, "secret") {
		t.Errorf("log does not say each refusal briefly (with the client once known, without payload):\n%s", l)
	}
}

func leaderOpts2() transport.ClientOptions {
	o := leaderOpts()
	o.ID = "another-leader-session"
	return o
}
