package broker

import (
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// DefaultMemBuffer is how many bytes one direction of an in-memory
// connection holds before its writer blocks (64 KiB, the same order as a
// loopback TCP socket's default send buffer).
const DefaultMemBuffer = 64 << 10

// Buffered bytes live in fixed chunks borrowed from one shared pool while
// they are in transit, and go back as soon as they are read: an idle
// direction holds no buffer at all. (Keeping even 512 B per direction would
// cost 100 MB at 100k sessions; keeping a drained 64 KiB buffer, 12.8 GB.)
// A pool rather than a per-pipe buffer also keeps a streaming pipe free of
// garbage.
const chunkSize = 4 << 10

type chunk [chunkSize]byte

var chunkPool = sync.Pool{New: func() any { return new(chunk) }}

var memConnSeq atomic.Uint64

// MemPipe returns the two ends of an in-memory, full-duplex connection.
// Each direction buffers up to size bytes (size <= 0: DefaultMemBuffer);
// a Write that finds the buffer full blocks until the reader makes room,
// the write deadline passes, or either end is closed. Unlike net.Pipe, a
// Write returns as soon as its bytes are buffered, without waiting for a
// Read.
//
// Both ends are safe for concurrent use: concurrent Writes are not
// interleaved (each Write's bytes stay contiguous), concurrent Reads each
// get a disjoint part of the stream. Deadlines fail blocked and future
// calls with an error that matches os.ErrDeadlineExceeded and whose
// Timeout() is true. Close makes the peer's Reads return io.EOF once the
// buffered bytes are read and its Writes fail; the closed end's own calls
// return an error matching net.ErrClosed. No goroutine runs per connection:
// a deadline arms a timer only while a call is blocked on it.
func MemPipe(size int) (net.Conn, net.Conn) {
	if size <= 0 {
		size = DefaultMemBuffer
	}
	n := memConnSeq.Add(1)
	a := memAddr("mem#" + strconv.FormatUint(n, 10) + "a")
	b := memAddr("mem#" + strconv.FormatUint(n, 10) + "b")
	ab := &pipe{limit: size} // a writes, b reads
	ba := &pipe{limit: size} // b writes, a reads
	ab.init()
	ba.init()
	return &memConn{in: ba, out: ab, local: a, remote: b},
		&memConn{in: ab, out: ba, local: b, remote: a}
}

type memAddr string

func (memAddr) Network() string  { return "mem" }
func (a memAddr) String() string { return string(a) }

// memConn is one end: it reads from in and writes to out.
type memConn struct {
	in, out       *pipe
	local, remote memAddr
	closeOnce     sync.Once
}

func (c *memConn) Read(b []byte) (int, error) {
	n, err := c.in.read(b)
	// Every read and write is progress to a virtual clock's settle
	// check: bytes on their way between goroutines.
	clock.Touch()
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

func (c *memConn) Write(b []byte) (int, error) {
	clock.Touch()
	n, err := c.out.write(b)
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// Close closes this end: the peer reads what was already written, then
// io.EOF; bytes written to this end and not yet read are discarded.
func (c *memConn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.out.closeWriter()
		c.in.closeReader()
	})
	if !first {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	c.in.setDeadline(&c.in.rdeadline, t)
	c.out.setDeadline(&c.out.wdeadline, t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.in.setDeadline(&c.in.rdeadline, t)
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.out.setDeadline(&c.out.wdeadline, t)
	return nil
}

// opError wraps err as the net package does for a TCP connection, so that
// callers which test for "use of closed network connection" (paho does)
// behave the same over both.
func (c *memConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "mem", Source: c.local, Addr: c.remote, Err: err}
}

// errPeerClosed is a Write's error when the reading end has closed.
var errPeerClosed = io.ErrClosedPipe

// pipe is one direction: a bounded byte queue with one lock and two
// condition variables.
type pipe struct {
	mu      sync.Mutex
	data    sync.Cond // readers wait here for bytes (or close, deadline)
	space   sync.Cond // writers wait here for room (or close, deadline)
	writeMu sync.Mutex

	chunks []*chunk // queued bytes: chunks[0][r:] ... chunks[last][:w]
	r, w   int
	n      int // bytes queued
	limit  int

	wclosed bool // the writing end closed: EOF after the data
	rclosed bool // the reading end closed: writes fail, data discarded
	waiting int  // goroutines blocked in read or write
	timer   *time.Timer
	timerAt time.Time

	rdeadline, wdeadline time.Time
}

func (p *pipe) init() {
	p.data.L = &p.mu
	p.space.L = &p.mu
}

func (p *pipe) read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.rclosed:
			return 0, net.ErrClosed
		case expired(p.rdeadline): // as TCP: a passed deadline fails even if bytes wait
			return 0, os.ErrDeadlineExceeded
		case len(b) == 0:
			return 0, nil
		case p.n > 0:
			n := p.take(b)
			if p.n > 0 {
				p.data.Signal() // another reader may take the rest
			}
			p.space.Signal()
			return n, nil
		case p.wclosed:
			return 0, io.EOF
		}
		p.wait(&p.data, p.rdeadline)
	}
}

func (p *pipe) write(b []byte) (int, error) {
	p.writeMu.Lock() // keep each Write's bytes contiguous
	defer p.writeMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	written := 0
	for {
		switch {
		case p.wclosed:
			return written, net.ErrClosed
		case p.rclosed:
			return written, errPeerClosed
		case written == len(b):
			return written, nil
		case expired(p.wdeadline):
			return written, os.ErrDeadlineExceeded
		}
		if room := p.limit - p.n; room > 0 {
			n := min(room, len(b)-written)
			p.put(b[written : written+n])
			written += n
			p.data.Signal()
			continue
		}
		p.wait(&p.space, p.wdeadline)
	}
}

// put queues b; the caller checked that it fits under the limit.
func (p *pipe) put(b []byte) {
	for len(b) > 0 {
		if len(p.chunks) == 0 || p.w == chunkSize {
			p.chunks = append(p.chunks, chunkPool.Get().(*chunk))
			p.w = 0
		}
		m := copy(p.chunks[len(p.chunks)-1][p.w:], b)
		p.w += m
		p.n += m
		b = b[m:]
	}
}

// take moves queued bytes into b and returns drained chunks to the pool.
func (p *pipe) take(b []byte) int {
	total := 0
	for len(b) > 0 && p.n > 0 {
		end := chunkSize
		if len(p.chunks) == 1 {
			end = p.w
		}
		m := copy(b, p.chunks[0][p.r:end])
		p.r += m
		p.n -= m
		total += m
		b = b[m:]
		if p.r == end {
			p.dropHead()
		}
	}
	return total
}

func (p *pipe) dropHead() {
	chunkPool.Put(p.chunks[0])
	last := len(p.chunks) - 1
	copy(p.chunks, p.chunks[1:]) // at most limit/chunkSize+1 pointers
	p.chunks[last] = nil
	p.chunks = p.chunks[:last]
	p.r = 0
	if last == 0 {
		p.w = 0
	}
}

// wait blocks on c until signalled, arming the shared timer if deadline is
// set so that the wait ends when it passes. Called with p.mu held.
func (p *pipe) wait(c *sync.Cond, deadline time.Time) {
	if !deadline.IsZero() && (p.timer == nil || !p.timerAt.Equal(deadline)) {
		d := time.Until(deadline)
		if p.timer == nil {
			p.timer = time.AfterFunc(d, p.wakeAll)
		} else {
			p.timer.Reset(d)
		}
		p.timerAt = deadline
	}
	p.waiting++
	c.Wait()
	p.waiting--
}

// wakeAll makes every blocked call re-check its state: on close, on a
// deadline change, and when the deadline timer fires.
func (p *pipe) wakeAll() {
	p.mu.Lock()
	p.data.Broadcast()
	p.space.Broadcast()
	p.mu.Unlock()
}

func (p *pipe) setDeadline(field *time.Time, t time.Time) {
	p.mu.Lock()
	*field = t
	if p.waiting > 0 {
		p.data.Broadcast()
		p.space.Broadcast()
	}
	p.mu.Unlock()
}

func (p *pipe) closeWriter() {
	p.mu.Lock()
	p.wclosed = true
	p.stopTimer()
	p.data.Broadcast()
	p.space.Broadcast()
	p.mu.Unlock()
}

func (p *pipe) closeReader() {
	p.mu.Lock()
	p.rclosed = true
	for len(p.chunks) > 0 { // nobody will read them
		p.dropHead()
	}
	p.n = 0
	p.stopTimer()
	p.data.Broadcast()
	p.space.Broadcast()
	p.mu.Unlock()
}

func (p *pipe) stopTimer() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

func expired(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}
