package broker

import (
	"net"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// writeQueues gives each connection its own mochi write queue.
//
// mochi 2.7.9 has one write-queue size for every client
// (Capabilities.MaximumClientWritesPending), read once per connection when
// it creates the client — a channel allocated up front. One size cannot fit
// a fleet: 100k workers need a small queue (each slot is 8 bytes of every
// session), while the leader, subscribed to every worker, receives their
// bursts through its one queue and drops what does not fit (measured: a
// burst of 10k heartbeats to a 256-slot queue lost 2%). So a connection's
// establishment sets the field to the size it wants, under mu, and keeps mu
// until mochi has read it: mochi creates the client before its first Read
// on the connection, and nothing else in mochi reads the field. All
// establishments go through here, so the field is never read or written
// concurrently.
type writeQueues struct {
	mu   sync.Mutex
	caps *mqtt.Capabilities
	def  int32
}

// start runs serve (which must start mochi's establish on c, in a new
// goroutine) with a write queue of size (<= 0: the default), and returns
// once mochi has created the client or the goroutine has ended. done must
// be closed when that goroutine ends.
func (q *writeQueues) start(c *firstRead, size int, done <-chan struct{}, serve func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if size <= 0 {
		size = int(q.def)
	}
	q.caps.MaximumClientWritesPending = int32(size)
	serve()
	select {
	case <-c.read:
	case <-done:
	}
	q.caps.MaximumClientWritesPending = q.def
}

// firstRead is a net.Conn that reports its first Read, and when the
// broker is done with it (Ended).
type firstRead struct {
	net.Conn
	read  chan struct{}
	once  sync.Once
	ended chan struct{} // closed once the broker's goroutine for it returned
}

func newFirstRead(c net.Conn) *firstRead {
	return &firstRead{Conn: c, read: make(chan struct{}), ended: make(chan struct{})}
}

// Ended is closed when the broker has finished with the connection: its
// session is cleaned up (unsubscribed, deleted from the client list)
// unless another connection took it over.
func (c *firstRead) Ended() <-chan struct{} { return c.ended }

func (c *firstRead) Read(b []byte) (int, error) {
	c.once.Do(func() { close(c.read) })
	return c.Conn.Read(b)
}
