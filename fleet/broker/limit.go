package broker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// ErrPacketTooLarge: a client announced an MQTT packet longer than the
// broker accepts (BrokerOptions.MaxPacketSize, or MaxConnectSize for its
// CONNECT). The broker closes the connection without reading the packet.
var ErrPacketTooLarge = errors.New("broker: packet too large")

// ErrPacketTimeout: a client began a packet and did not send the rest of
// it within BrokerOptions.PacketReadTimeout. The broker closes the
// connection, and the buffer it held for the packet goes with it.
var ErrPacketTimeout = errors.New("broker: packet not received in time")

// ErrPartialBudget: a client announced a packet whose body the broker
// would have to hold while it arrives, with the bytes already held for
// the partial packets of all TCP clients at BrokerOptions.MaxPartialBytes.
// The broker closes the connection without reading the packet.
var ErrPartialBudget = errors.New("broker: too many bytes held for partial packets")

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

// PacketTimeoutError is the error a limitConn's Read returns for a packet
// not received in time; it matches ErrPacketTimeout.
type PacketTimeoutError struct {
	Packet  string        // its type: CONNECT, PUBLISH, ...
	Size    int           // announced, fixed header included; 0 if the header itself was cut short
	Missing int           // bytes of its body not received
	Timeout time.Duration // BrokerOptions.PacketReadTimeout
}

func (e *PacketTimeoutError) Error() string {
	if e.Size == 0 {
		return fmt.Sprintf("broker: %s header not received within %v", e.Packet, e.Timeout)
	}
	return fmt.Sprintf("broker: %s of %d bytes not received within %v (%d missing)", e.Packet, e.Size, e.Timeout, e.Missing)
}

func (e *PacketTimeoutError) Is(target error) bool { return target == ErrPacketTimeout }

// PartialBudgetError is the error a limitConn's Read returns for a packet
// refused for MaxPartialBytes; it matches ErrPartialBudget.
type PartialBudgetError struct {
	Packet string // its type
	Size   int    // its body, announced by its fixed header
	Held   int64  // bytes held for other partial packets at the time
	Limit  int64  // MaxPartialBytes
}

func (e *PartialBudgetError) Error() string {
	return fmt.Sprintf("broker: %s with a body of %d bytes refused: %d of %d bytes already held for partial packets",
		e.Packet, e.Size, e.Held, e.Limit)
}

func (e *PartialBudgetError) Is(target error) bool { return target == ErrPartialBudget }

// connLimits is what the connections of a TCP listener may send; all of
// them share it.
type connLimits struct {
	connectMax, max int           // MaxConnectSize, MaxPacketSize
	timeout         time.Duration // PacketReadTimeout; 0: none
	budget          *partialBudget
	onRefuse        func(*limitConn, error) // counts and logs a refusal; may be nil
	wall            func() time.Time        // tests only; nil: time.Now (deadlines are wall time)
}

func (l *connLimits) now() time.Time {
	if l.wall != nil {
		return l.wall()
	}
	return time.Now()
}

// partialBudget counts the bytes the broker holds for packets it has
// begun to read and not finished, across connections: mochi allocates a
// packet's whole body as soon as it has read its fixed header.
type partialBudget struct {
	max  int64
	used atomic.Int64
}

// take counts n bytes more, unless that would pass the budget; it
// returns what was in use before.
func (p *partialBudget) take(n int64) (ok bool, used int64) {
	for {
		u := p.used.Load()
		if u+n > p.max {
			return false, u
		}
		if p.used.CompareAndSwap(u, u+n) {
			return true, u
		}
	}
}

func (p *partialBudget) give(n int64) { p.used.Add(-n) }

// limitConn is a net.Conn that bounds what a client can make the broker
// hold while it reads a packet: the packet's size, the time it may take
// to arrive, and the bytes held for partial packets across connections.
//
// mochi (v2.7.9) reads a packet by allocating the length its fixed header
// announces and then reading that much, with no deadline other than the
// client's keepalive (none at keepalive 0): a client that sends all but
// the last byte of a packet holds that buffer for as long as it likes.
// limitConn follows the packet framing of everything the broker reads
// through it (a type byte, a variable-length remaining length, then the
// body, which it only counts past), so it knows each fixed header as soon
// as the broker does. Then:
//
//   - a header announcing too many bytes ends the stream there with a
//     *PacketTooLargeError instead of the header's last byte (the first
//     packet, the CONNECT, read from anyone before any login, has its own
//     smaller limit);
//   - a header whose body does not come with it, when the bytes held for
//     the partial packets of every connection would pass the budget, ends
//     the stream the same way with a *PartialBudgetError;
//   - a packet begun must arrive whole within the timeout, counting only
//     the time the broker spends waiting in Read for it: each Read while
//     a packet is partial gets a read deadline of the time left (or the
//     broker's own deadline, its keepalive, if earlier), and a Read that
//     runs out of it returns a *PacketTimeoutError.
//
// The bytes of earlier packets in the same read are passed on before a
// refusal; the broker gets the error next, and every Read after it.
type limitConn struct {
	net.Conn
	lim *connLimits

	// Framing state; only Read touches it (mochi reads from one goroutine).
	packets   int // packets whose fixed header is complete
	begun     int // packets whose first byte has been read
	body      int // bytes of the current packet's body still to come
	inHeader  bool
	kind      byte // the current packet's type
	headerLen int  // bytes of the current fixed header so far
	length    int  // its remaining length so far
	shift     uint
	untracked bool  // a malformed length: mochi will end the connection itself
	err       error // sticky refusal

	// The packet deadline. Read's goroutine only: the broker sets its
	// deadlines (the listener's handshake, mochi's keepalive) from it too.
	keep     time.Time     // the read deadline the broker set; zero: none
	timed    int           // the packet (by begun) whose time is running
	left     time.Duration // its time left
	override bool          // the connection's read deadline is the packet's, not keep

	held    atomic.Int64 // bytes of the current packet in lim.budget; -1 once closed
	heldFor int          // packets when they were taken; Read only

	exempt atomic.Bool            // the leader's login: not in the budget
	client atomic.Pointer[string] // the client id once its session is established
	bucket *bucket                // its rate limit, or nil; the session's goroutine only
}

func newLimitConn(c net.Conn, lim *connLimits) *limitConn {
	return &limitConn{Conn: c, lim: lim}
}

// Read reads from the connection, and refuses a packet over the limits.
func (c *limitConn) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	timed := c.lim.timeout > 0 && (c.inHeader || c.body > 0) && !c.untracked
	var start time.Time
	if timed {
		start = c.lim.now()
		d := start.Add(c.left)
		if !c.keep.IsZero() && c.keep.Before(d) {
			d = c.keep
		}
		c.Conn.SetReadDeadline(d)
		c.override = true
	}
	n, err := c.Conn.Read(b)
	if timed {
		c.left -= c.lim.now().Sub(start)
		if err != nil && c.left <= 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			e := &PacketTimeoutError{Packet: packetName(c.kind), Timeout: c.lim.timeout}
			if !c.inHeader {
				e.Size, e.Missing = c.headerLen+c.length, c.body
			}
			return 0, c.refuse(e)
		}
	}
	if c.untracked {
		return n, err
	}
	if keep, refused := c.frame(b[:n]); refused {
		if keep > 0 {
			return keep, nil
		}
		return 0, c.err
	}
	c.afterRead()
	return n, err
}

// frame follows the framing through b, the bytes just read. When it
// refuses a packet it reports how many of them to pass on first: those
// before the refused packet's header, if it began in b.
func (c *limitConn) frame(b []byte) (keep int, refused bool) {
	n := len(b)
	hdrStart := 0 // in b, of the last header completed in it (< 0: began earlier)
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
			c.begun++
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
				c.release()
				return n, false
			}
			continue
		}
		c.inHeader = false
		limit := c.lim.max
		if c.packets == 0 {
			limit = c.lim.connectMax
		}
		c.packets++
		hdrStart = at - (c.headerLen - 1)
		if size := c.headerLen + c.length; size > limit {
			c.refuse(&PacketTooLargeError{Size: size, Limit: limit, Packet: packetName(c.kind), First: c.packets == 1})
			return hdrStart, true
		}
		c.body = c.length
	}
	if c.lim.budget == nil {
		return n, false
	}
	if h := c.held.Load(); h > 0 && (c.body == 0 || c.heldFor != c.packets) {
		c.release()
	}
	if c.body > 0 && c.held.Load() == 0 && !c.exempt.Load() {
		// The header of this packet ended in b (at the end of any
		// earlier read its body was not due yet, or it was held then).
		need := int64(c.length)
		ok, used := c.lim.budget.take(need)
		if !ok {
			c.refuse(&PartialBudgetError{Packet: packetName(c.kind), Size: c.length, Held: used, Limit: c.lim.budget.max})
			return hdrStart, true
		}
		if !c.held.CompareAndSwap(0, need) { // closed meanwhile
			c.lim.budget.give(need)
		}
		c.heldFor = c.packets
	}
	return n, false
}

// afterRead starts the time of a packet left partial by a read, or gives
// the broker its own deadline back once no packet is.
func (c *limitConn) afterRead() {
	if c.lim.timeout <= 0 {
		return
	}
	if c.inHeader || c.body > 0 {
		if c.timed != c.begun {
			c.timed, c.left = c.begun, c.lim.timeout
		}
	} else if c.override {
		c.Conn.SetReadDeadline(c.keep)
		c.override = false
	}
}

// refuse makes err the connection's sticky error, counts and logs it.
func (c *limitConn) refuse(err error) error {
	c.err = err
	c.release()
	if c.lim.onRefuse != nil {
		c.lim.onRefuse(c, err)
	}
	return err
}

// release gives back the bytes held for the current packet.
func (c *limitConn) release() {
	if h := c.held.Load(); h > 0 && c.held.CompareAndSwap(h, 0) {
		c.lim.budget.give(h)
	}
}

// SetDeadline records the read deadline the broker wants (mochi's
// keepalive), which a partial packet's own deadline may come before.
func (c *limitConn) SetDeadline(t time.Time) error {
	c.keep, c.override = t, false
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline: see SetDeadline.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	c.keep, c.override = t, false
	return c.Conn.SetReadDeadline(t)
}

// Close closes the connection and gives back what it held of the budget.
// It may run alongside Read (the broker closing).
func (c *limitConn) Close() error {
	if h := c.held.Swap(-1); h > 0 {
		c.lim.budget.give(h)
	}
	return c.Conn.Close()
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
