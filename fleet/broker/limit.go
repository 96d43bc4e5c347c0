package broker

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	"github.com/mochi-mqtt/server/v2/packets"
)

// ErrPacketTooLarge: a client announced an MQTT packet longer than the
// broker accepts (BrokerOptions.MaxPacketSize, or MaxConnectSize for its
// CONNECT). The broker closes the connection without reading the packet.
var ErrPacketTooLarge = errors.New("broker: packet too large")

// PacketTooLargeError is the error a limitConn's Read returns; it matches
// ErrPacketTooLarge.
type PacketTooLargeError struct {
	Size, Limit int    // announced by the fixed header; the limit it broke
	Packet      string // its type: CONNECT, PUBLISH, ...
	First       bool   // the connection's first packet, read before any login
}

func (e *PacketTooLargeError) Error() string {
	return fmt.Sprintf("broker: %s of %d bytes announced, limit %d", e.Packet, e.Size, e.Limit)
}

func (e *PacketTooLargeError) Is(target error) bool { return target == ErrPacketTooLarge }

// limitConn is a net.Conn that refuses an MQTT packet longer than its
// limit from the packet's fixed header alone, before its body is read.
//
// mochi (v2.7.9) reads a packet by allocating the length its fixed header
// announces and then reading that much: a client could make it allocate
// 256 MiB per connection, before its login was checked. limitConn follows
// the packet framing of everything the broker reads through it (a type
// byte, a variable-length remaining length, then the body, which it only
// counts past), so it knows each fixed header as soon as the broker does;
// one announcing too many bytes ends the stream there with a
// *PacketTooLargeError instead of the header's last byte. The bytes of
// earlier packets in the same read are passed on first. The first packet,
// the CONNECT, has its own, smaller limit: it is read from anyone, before
// any login.
type limitConn struct {
	net.Conn
	connectMax, max int
	onRefuse        func(*limitConn, *PacketTooLargeError)

	// Framing state; only Read touches it (mochi reads from one goroutine).
	packets   int // packets whose fixed header is complete
	body      int // bytes of the current packet's body still to come
	inHeader  bool
	kind      byte // the current packet's type
	headerLen int  // bytes of the current fixed header so far
	length    int  // its remaining length so far
	shift     uint
	untracked bool  // a malformed length: mochi will end the connection itself
	err       error // sticky refusal

	client atomic.Pointer[string] // the client id once its session is established
}

func newLimitConn(c net.Conn, connectMax, max int, onRefuse func(*limitConn, *PacketTooLargeError)) *limitConn {
	return &limitConn{Conn: c, connectMax: connectMax, max: max, onRefuse: onRefuse}
}

// Read reads from the connection, and refuses a fixed header that
// announces a packet over the limit.
func (c *limitConn) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(b)
	if c.untracked {
		return n, err
	}
	for i := 0; i < n; {
		if c.body > 0 {
			skip := min(c.body, n-i)
			c.body -= skip
			i += skip
			continue
		}
		at := i
		if !c.inHeader {
			c.inHeader, c.kind, c.headerLen, c.length, c.shift = true, b[i]>>4, 1, 0, 0
			i++
			continue
		}
		v := b[i]
		i++
		c.headerLen++
		c.length |= int(v&0x7f) << c.shift
		c.shift += 7
		if v&0x80 != 0 {
			if c.shift >= 28 { // more than 4 length bytes
				c.untracked = true
				return n, err
			}
			continue
		}
		c.inHeader = false
		limit := c.max
		if c.packets == 0 {
			limit = c.connectMax
		}
		c.packets++
		if size := c.headerLen + c.length; size > limit {
			name := packetName(c.kind)
			c.err = &PacketTooLargeError{Size: size, Limit: limit, Packet: name, First: c.packets == 1}
			if c.onRefuse != nil {
				c.onRefuse(c, c.err.(*PacketTooLargeError))
			}
			// Pass on what came before this packet's header, if it
			// began in this read; the broker gets the error next.
			if keep := at - (c.headerLen - 1); keep > 0 {
				return keep, nil
			}
			return 0, c.err
		}
		c.body = c.length
	}
	return n, err
}

// limitConnOf returns the limitConn under c, a connection the broker got
// from one of its listeners, or nil if it has none (in-memory ones).
func limitConnOf(c net.Conn) *limitConn {
	if fr, ok := c.(*firstRead); ok {
		c = fr.Conn
	}
	lc, _ := c.(*limitConn)
	return lc
}

// packetName is the MQTT name of packet type t: CONNECT, PUBLISH, ...
func packetName(t byte) string {
	if n, ok := packets.PacketNames[t]; ok {
		return strings.ToUpper(n)
	}
	return fmt.Sprintf("packet type %d", t)
}
