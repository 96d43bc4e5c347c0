package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// ErrListenerClosed is returned by Dial after the listener (or its broker)
// has closed. It matches net.ErrClosed.
var ErrListenerClosed = fmt.Errorf("broker: listener closed: %w", net.ErrClosed)

// connSet owns the connections a listener handed to the broker and the
// goroutine serving each one (mochi's establish runs for the connection's
// whole life). Closing the set closes every connection and waits for those
// goroutines, which mochi 2.7.9's own listeners do not do.
type connSet struct {
	queues *writeQueues // nil: mochi's one size for all

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	open   atomic.Int64 // len(conns), read without the lock
}

// serve runs establish on c in a goroutine owned by the set, with a broker
// write queue of queue packets (<= 0: the broker's default). It returns
// false, and closes c, if the set is closed.
func (s *connSet) serve(id string, c net.Conn, queue int, establish listeners.EstablishFn, log *slog.Logger) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return false
	}
	if s.conns == nil {
		s.conns = make(map[net.Conn]struct{})
	}
	s.conns[c] = struct{}{}
	s.open.Add(1)
	s.wg.Add(1)
	s.mu.Unlock()

	fr := newFirstRead(c)
	done := fr.ended
	run := func() {
		go func() {
			defer s.wg.Done()
			defer close(done)
			err := establish(id, fr) // returns when the client is gone
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.open.Add(-1)
			s.mu.Unlock()
			if err != nil {
				// Refused logins, dropped connections and clean ends
				// alike: the hook has counted and logged what matters.
				log.Debug("connection ended", "listener", id, "remote", c.RemoteAddr().String(), "error", err)
			}
		}()
	}
	if s.queues == nil {
		run()
	} else {
		s.queues.start(fr, queue, done, run)
	}
	return true
}

// close closes every connection, then waits for their goroutines. Closing
// first matters: mochi writes a DISCONNECT to each client on shutdown, and a
// client that does not read would block that write until its deadline.
func (s *connSet) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// wait waits for every connection's goroutine. A listener's Close calls
// mochi's closeClients only after it: in mochi 2.7.9 that takes the
// client list's read lock twice (GetByListener, then Len inside it), and a
// connection ending meanwhile asks for the write lock in between (Delete)
// — the second read lock then waits for the writer, which waits for the
// first: the broker's Close never returned. Once the goroutines are done,
// nothing deletes concurrently.
func (s *connSet) wait() { s.wg.Wait() }

// MemListener is a mochi listener for in-process clients: each Dial makes a
// MemPipe and hands the server end to the broker. It starts no goroutine of
// its own; each connection is served by one goroutine that Close waits for.
// All methods are safe for concurrent use.
type MemListener struct {
	id     string
	buffer int
	set    connSet

	mu         sync.Mutex
	establish  listeners.EstablishFn
	log        *slog.Logger
	served     chan struct{} // closed by Serve (or Close, if it came first)
	servedOnce sync.Once
}

// NewMemListener returns a listener named id whose connections buffer
// buffer bytes per direction (<= 0: DefaultMemBuffer).
func NewMemListener(id string, buffer int) *MemListener {
	return &MemListener{id: id, buffer: buffer, served: make(chan struct{}), log: slog.New(slog.DiscardHandler)}
}

// ID returns the listener's name.
func (l *MemListener) ID() string { return l.id }

// Address returns "mem://".
func (l *MemListener) Address() string { return "mem://" }

// Protocol returns "mem".
func (l *MemListener) Protocol() string { return "mem" }

// Init records the broker's logger.
func (l *MemListener) Init(log *slog.Logger) error {
	l.mu.Lock()
	l.log = log
	l.mu.Unlock()
	return nil
}

// Serve records the broker's establish function and returns at once; Dial
// does the rest. Dials made before Serve wait for it.
func (l *MemListener) Serve(establish listeners.EstablishFn) {
	l.mu.Lock()
	if l.establish == nil {
		l.establish = establish
	}
	l.mu.Unlock()
	l.servedOnce.Do(func() { close(l.served) })
}

// Dial connects a new client and returns its end of the connection. It
// blocks only until Serve has been called (or ctx ends). The broker reads
// the client's CONNECT in its own time: a successful Dial does not mean the
// broker accepted the client.
func (l *MemListener) Dial(ctx context.Context) (net.Conn, error) {
	return l.dial(ctx, 0, 0)
}

// dial is Dial with this connection's own buffer in bytes (0: the
// listener's) and broker write queue in packets (0: the broker's default).
func (l *MemListener) dial(ctx context.Context, buffer, writeQueue int) (net.Conn, error) {
	select {
	case <-l.served:
	case <-ctx.Done():
		return nil, fmt.Errorf("broker: dial %s: %w", l.id, ctx.Err())
	}
	l.mu.Lock()
	establish, log := l.establish, l.log
	l.mu.Unlock()
	if buffer <= 0 {
		buffer = l.buffer
	}
	client, server := MemPipe(buffer)
	if !l.set.serve(l.id, server, writeQueue, establish, log) {
		client.Close()
		return nil, ErrListenerClosed
	}
	return client, nil
}

// Close closes every connection, lets mochi stop its clients
// (closeClients), and returns once every connection's goroutine has
// returned. Later Dials fail with ErrListenerClosed.
func (l *MemListener) Close(closeClients listeners.CloseFn) {
	l.set.close()
	l.servedOnce.Do(func() { close(l.served) }) // release Dials waiting for Serve
	l.set.wait()
	closeClients(l.id) // after the wait: see connSet.wait
}

// tcpListener is a mochi listener on TCP (or TLS). Unlike mochi's own, it
// gives a new connection HandshakeTimeout to send its CONNECT (mochi waits
// forever), keeps accepting after a temporary Accept error, and its Close
// waits for the accept loop and every connection's goroutine.
type tcpListener struct {
	id, addr  string
	tls       *tls.Config
	handshake time.Duration
	limit     func(net.Conn) net.Conn // bounds what a connection may send, or nil
	maxConns  int                     // connections open at once; <= 0: no cap
	onFull    func(net.Conn)          // counts and logs a connection refused for maxConns
	set       connSet

	ln      net.Listener
	log     *slog.Logger
	mu      sync.Mutex
	closed  bool
	running bool
	done    chan struct{} // closed by Close
	started chan struct{} // closed when Serve starts running
	exited  chan struct{} // closed when a started Serve returns
}

func newTCPListener(id, addr string, tlsConf *tls.Config, handshake time.Duration) *tcpListener {
	return &tcpListener{id: id, addr: addr, tls: tlsConf, handshake: handshake,
		done: make(chan struct{}), started: make(chan struct{}), exited: make(chan struct{})}
}

func (l *tcpListener) ID() string       { return l.id }
func (l *tcpListener) Protocol() string { return "tcp" }

func (l *tcpListener) Address() string {
	if l.ln != nil {
		return l.ln.Addr().String()
	}
	return l.addr
}

func (l *tcpListener) Init(log *slog.Logger) error {
	l.log = log
	var err error
	if l.tls != nil {
		l.ln, err = tls.Listen("tcp", l.addr, l.tls)
	} else {
		l.ln, err = net.Listen("tcp", l.addr)
	}
	if err != nil {
		return fmt.Errorf("broker: listen on TCPAddr %q: %w", l.addr, err)
	}
	return nil
}

func (l *tcpListener) Serve(establish listeners.EstablishFn) {
	l.mu.Lock()
	if l.closed || l.running {
		l.mu.Unlock()
		return
	}
	l.running = true
	close(l.started)
	l.mu.Unlock()
	defer close(l.exited)

	backoff := 5 * time.Millisecond
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and friends: say so, wait, and keep serving.
			l.log.Warn("accept failed; retrying", "listener", l.id, "error", err, "retry_in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		// Only this loop adds to the set: the count cannot grow between
		// the check and the serve.
		if l.maxConns > 0 && l.set.open.Load() >= int64(l.maxConns) {
			if l.onFull != nil {
				l.onFull(c)
			}
			c.Close()
			continue
		}
		if l.limit != nil {
			c = l.limit(c)
		}
		// mochi resets the deadline from the client's keepalive once the
		// CONNECT is read (through the limit, which keeps track of it).
		c.SetReadDeadline(time.Now().Add(l.handshake))
		l.set.serve(l.id, c, 0, establish, l.log)
	}
}

func (l *tcpListener) Close(closeClients listeners.CloseFn) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	running := l.running
	close(l.done)
	l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
	}
	if running {
		<-l.exited
	}
	l.set.close()
	l.set.wait()
	closeClients(l.id) // after the wait: see connSet.wait
}
