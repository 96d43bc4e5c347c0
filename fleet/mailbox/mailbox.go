package mailbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// Options configures a Mailbox. Zero fields take the defaults noted.
type Options struct {
	// Capacity is the most messages queued at once (ignored by Unbounded,
	// where it is only the initial allocation). A bounded mailbox allocates
	// for what it holds, not for its capacity: its ring is made, small, at
	// the first offer and doubles as it fills, up to the capacity, so a
	// million idle workers' mailboxes hold no slots, and a coalescing
	// mailbox with a slot per worker of a million costs nothing until they
	// report.
	// Default 64.
	Capacity int
	// Policy for a full mailbox. Default Reject.
	Policy Policy
	// BlockTimeout is the longest a Block offer waits for room. Default 1 s.
	// There is no "forever": a sender that must not give up retries.
	BlockTimeout time.Duration
	// ServiceTimeHint seeds the service-time estimate behind RetryAfter until
	// the consumer has been measured. Default 1 ms.
	ServiceTimeHint time.Duration
	// Retry is how a refusal's RetryAfter is reckoned. Default RetryDrain.
	Retry RetryHint
	// Clock stamps offers and takes. Default: wall clock.
	Clock clock.Clock
	// Wait receives each message's wait from offer to take. Many mailboxes
	// may share one (a group of workers); nil: the mailbox keeps its own.
	Wait *stats.Histogram
}

// Defaults for Options.
const (
	DefaultCapacity        = 64
	DefaultBlockTimeout    = time.Second
	DefaultServiceTimeHint = time.Millisecond
)

func (o Options) withDefaults() (Options, error) {
	if o.Capacity == 0 {
		o.Capacity = DefaultCapacity
	}
	if o.BlockTimeout == 0 {
		o.BlockTimeout = DefaultBlockTimeout
	}
	if o.ServiceTimeHint == 0 {
		o.ServiceTimeHint = DefaultServiceTimeHint
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Wait == nil {
		o.Wait = new(stats.Histogram)
	}
	switch {
	case o.Capacity < 1:
		return o, fmt.Errorf("mailbox: capacity %d: must be at least 1", o.Capacity)
	case o.Policy < Reject || o.Policy > Unbounded:
		return o, fmt.Errorf("mailbox: policy %d: must be one of reject, drop-oldest, drop-newest, block, coalesce, unbounded", o.Policy)
	case o.BlockTimeout < 0:
		return o, fmt.Errorf("mailbox: block timeout %v: must be positive", o.BlockTimeout)
	case o.ServiceTimeHint < 0:
		return o, fmt.Errorf("mailbox: service time hint %v: must be positive", o.ServiceTimeHint)
	case o.Retry < RetryDrain || o.Retry > RetrySpread:
		return o, fmt.Errorf("mailbox: retry hint %d: must be drain or spread", o.Retry)
	}
	return o, nil
}

// Mailbox is a bounded queue for one consumer and many producers. Offer and
// Close are safe from any goroutine; Take and TryTake are for the one
// consumer (calling them from several goroutines is safe but the service-time
// measurement then means little). Stats may be called from anywhere.
type Mailbox[T any] struct {
	opts Options

	mu     sync.Mutex
	buf    []slot[T] // ring, a power of two long so indexing is a mask
	mask   int
	limit  int    // capacity; the ring may be shorter (it grows) or longer
	head   int    // index of the oldest queued message
	n      int    // queued
	seq    uint64 // sequence number of the message at head
	keys   map[string]uint64
	closed bool

	consumerWaiting bool
	notEmpty        chan struct{} // cap 1: wakes the consumer
	space           chan struct{} // closed when room appears; nil if nobody waits
	done            chan struct{} // closed by Close

	lastTake time.Duration // clock.Mono when the consumer last got a message; -1: idle
	service  time.Duration // EWMA of the consumer's time per message
	measured bool
	promised time.Duration // RetrySpread: clock.Mono at the end of the last slot handed out
	counts   counters
	waitHist *stats.Histogram
}

type slot[T any] struct {
	msg T
	at  time.Duration // clock.Mono at offer
	key string
}

// New returns an empty mailbox, or an error naming the bad option.
func New[T any](o Options) (*Mailbox[T], error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Mailbox[T]{
		opts:     o,
		limit:    o.Capacity,
		lastTake: -1,
		service:  o.ServiceTimeHint,
		waitHist: o.Wait,
	}
	if o.Policy == Unbounded {
		m.resize(ringSize(o.Capacity)) // its capacity is the initial allocation
	}
	if o.Policy == Coalesce {
		m.keys = make(map[string]uint64, ringSize(min(o.Capacity, initialRing)))
	}
	return m, nil
}

// chans makes the channels a waiting consumer or producer needs; a
// mailbox that is only offered to and tried (a simulated worker's) never
// makes them. Called with m.mu held.
func (m *Mailbox[T]) chans() {
	if m.done == nil {
		m.notEmpty = make(chan struct{}, 1)
		m.done = make(chan struct{})
		if m.closed {
			close(m.done)
		}
	}
}

// Offer queues msg, applying the policy if the mailbox is full. It returns
// nil (queued), ErrDropped (DropNewest dropped it), a *FullError (Reject,
// Coalesce with a new key, Block after its timeout), the context's error
// (Block, if ctx ends first) or ErrClosed. Only Block waits.
func (m *Mailbox[T]) Offer(ctx context.Context, msg T) error { return m.offer(ctx, "", msg) }

// OfferKey is Offer with a coalescing key. Under Coalesce a queued message
// with the same key is replaced in place by msg; an empty key never
// coalesces. Under other policies the key is ignored.
func (m *Mailbox[T]) OfferKey(ctx context.Context, key string, msg T) error {
	return m.offer(ctx, key, msg)
}

func (m *Mailbox[T]) offer(ctx context.Context, key string, msg T) error {
	m.mu.Lock()
	m.counts.offered++
	now := m.opts.Clock.Mono()
	var deadline clock.Timer
	for {
		if m.closed {
			m.counts.rejectedClosed++
			m.mu.Unlock()
			stopTimer(deadline)
			return ErrClosed
		}
		if m.keys != nil && key != "" {
			if seq, ok := m.keys[key]; ok {
				s := &m.buf[m.index(seq)]
				s.msg, s.at = msg, now
				m.counts.droppedCoalesced++
				m.mu.Unlock()
				stopTimer(deadline)
				return nil
			}
		}
		if m.n < m.limit {
			break
		}
		switch m.opts.Policy {
		case Unbounded:
			m.grow()
		case DropOldest:
			m.popLocked()
			m.counts.droppedOldest++
		case DropNewest:
			m.counts.droppedNewest++
			m.mu.Unlock()
			return ErrDropped
		case Reject, Coalesce:
			err := &FullError{RetryAfter: m.refuseLocked(), Capacity: m.limit}
			m.counts.rejectedFull++
			m.mu.Unlock()
			return err
		case Block:
			var err error
			if deadline, err = m.waitRoom(ctx, deadline); err != nil {
				return err
			}
		}
	}
	m.pushLocked(key, msg, now)
	wake := m.consumerWaiting
	m.consumerWaiting = false
	m.mu.Unlock()
	stopTimer(deadline)
	if wake {
		select {
		case m.notEmpty <- struct{}{}:
		default:
		}
	}
	return nil
}

// waitRoom waits, under Block, until the full mailbox may have room or
// is closed (nil: offer looks again), or until the offer's BlockTimeout
// or ctx ends (the refusal, counted). It is called with m.mu held, holds
// it again when it returns nil and has released it when it returns an
// error. deadline is the offer's BlockTimeout timer, made at its first
// wait (nil before) and returned for the next.
func (m *Mailbox[T]) waitRoom(ctx context.Context, deadline clock.Timer) (clock.Timer, error) {
	if deadline == nil {
		deadline = m.opts.Clock.NewTimer(m.opts.BlockTimeout)
	}
	if m.space == nil {
		m.space = make(chan struct{})
	}
	m.chans()
	space, done := m.space, m.done
	m.mu.Unlock()
	select {
	case <-space:
	case <-done: // offer reports ErrClosed when it looks again
	case <-deadline.C():
		m.mu.Lock()
		m.counts.rejectedTimeout++
		err := &FullError{RetryAfter: m.refuseLocked(), Capacity: m.limit, Waited: m.opts.BlockTimeout}
		m.mu.Unlock()
		return deadline, err
	case <-ctx.Done():
		deadline.Stop()
		m.mu.Lock()
		m.counts.rejectedCanceled++
		m.mu.Unlock()
		return deadline, ctx.Err()
	}
	m.mu.Lock()
	return deadline, nil
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// initialRing is the most slots a bounded mailbox allocates when its first
// message comes (it allocates none before): every simulated worker holds
// a mailbox, and a million idle ones should not hold empty slots. The ring doubles from there as it fills (a copy of
// what is queued each time: amortised, one more copy per message at most),
// and never shrinks, so a mailbox that once held a flood keeps the room
// for the next one. A variable only so that the model test can start
// rings at one slot.
var initialRing = 4

func ringSize(capacity int) int {
	n := 1
	for n < capacity {
		n <<= 1
	}
	return n
}

func (m *Mailbox[T]) index(seq uint64) int {
	return (m.head + int(seq-m.seq)) & m.mask
}

func (m *Mailbox[T]) pushLocked(key string, msg T, now time.Duration) {
	if m.n == len(m.buf) { // under the capacity, but the ring is full: grow it
		size := 2 * len(m.buf)
		if size == 0 { // the first message: the ring is made now
			size = ringSize(min(m.limit, initialRing))
		}
		m.resize(size)
	}
	seq := m.seq + uint64(m.n)
	m.buf[m.index(seq)] = slot[T]{msg: msg, at: now, key: key}
	m.n++
	if m.keys != nil && key != "" {
		m.keys[key] = seq
	}
	if m.n > m.counts.maxDepth {
		m.counts.maxDepth = m.n
	}
	if m.n > m.counts.peak {
		m.counts.peak = m.n
	}
}

// popLocked removes and returns the head slot.
func (m *Mailbox[T]) popLocked() slot[T] {
	s := m.buf[m.head]
	m.buf[m.head] = slot[T]{} // let the message be collected
	if m.keys != nil && s.key != "" && m.keys[s.key] == m.seq {
		delete(m.keys, s.key)
	}
	m.head = (m.head + 1) & m.mask
	m.n--
	m.seq++
	if m.space != nil { // wake every blocked producer; they race for the slot
		close(m.space)
		m.space = nil
	}
	return s
}

// grow doubles the ring, keeping order (Unbounded only).
func (m *Mailbox[T]) grow() {
	m.resize(2 * len(m.buf))
	m.limit = len(m.buf)
}

// resize moves the queue to a new ring of size slots (a power of two, at
// least m.n), keeping order. Coalescing keys map to sequence numbers, which
// do not change, so they stay valid.
func (m *Mailbox[T]) resize(size int) {
	nb := make([]slot[T], size)
	for i := 0; i < m.n; i++ {
		nb[i] = m.buf[(m.head+i)&m.mask]
	}
	m.buf, m.head, m.mask = nb, 0, size-1
}

// SetCapacity changes the capacity while the mailbox is in use (a
// scenario's set_capacity event, an operator's knob). Raising it makes room
// at once (the ring grows when the room is used): blocked offers wake and
// retry. Lowering it below the messages queued drops nothing: they stay to
// be taken, and offers meet the full policy until the depth is under the
// new capacity. For Unbounded, which never refuses, it only reserves room.
// A capacity below 1 is an error and changes nothing.
func (m *Mailbox[T]) SetCapacity(n int) error {
	if n < 1 {
		return fmt.Errorf("mailbox: capacity %d: must be at least 1", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opts.Policy == Unbounded {
		if size := ringSize(n); size > len(m.buf) {
			m.resize(size)
		}
		m.limit = len(m.buf)
		return nil
	}
	m.limit = n
	if m.space != nil && m.n < m.limit {
		close(m.space) // blocked producers race for the new room
		m.space = nil
	}
	return nil
}

// Take returns the oldest message, waiting until there is one. It returns
// ctx.Err() if ctx ends first, and ErrClosed once the mailbox is closed and
// every queued message has been taken.
func (m *Mailbox[T]) Take(ctx context.Context) (T, error) {
	for {
		m.mu.Lock()
		if m.n > 0 {
			return m.takeLocked(), nil
		}
		if m.closed {
			m.mu.Unlock()
			var zero T
			return zero, ErrClosed
		}
		m.consumerWaiting = true
		m.lastTake = -1 // idle: the next gap is not service time
		m.chans()
		notEmpty, done := m.notEmpty, m.done
		m.mu.Unlock()
		select {
		case <-notEmpty:
		case <-done:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}

// TryTake returns the oldest message if there is one, without waiting.
func (m *Mailbox[T]) TryTake() (T, bool) {
	m.mu.Lock()
	if m.n == 0 {
		m.lastTake = -1
		m.mu.Unlock()
		var zero T
		return zero, false
	}
	return m.takeLocked(), true
}

// takeLocked pops the head, records its wait and the consumer's service
// time, and unlocks.
func (m *Mailbox[T]) takeLocked() T {
	s := m.popLocked()
	m.counts.taken++
	now := m.opts.Clock.Mono()
	// The consumer came back for more while messages were waiting: the gap
	// since its last take is the time it spent on the previous message.
	if m.lastTake >= 0 {
		m.observeServiceLocked(now - m.lastTake)
	}
	m.lastTake = now
	m.mu.Unlock()
	m.waitHist.Record(now - s.at)
	return s.msg
}

// observeServiceLocked folds one service time into an exponentially
// weighted moving average (weight 1/8, as TCP's smoothed RTT).
func (m *Mailbox[T]) observeServiceLocked(d time.Duration) {
	if !m.measured {
		m.service, m.measured = d, true
		return
	}
	m.service += (d - m.service) / 8
}

// RetryAfter estimates how long until a sender refused now may find room
// (Options.Retry): the time to drain the box — the consumer's measured
// service time × the messages queued, at least one service time — and,
// with RetrySpread, the slots already handed to the senders refused before
// it. Before any measurement it uses Options.ServiceTimeHint. It hands out
// no slot; a refusal does.
func (m *Mailbox[T]) RetryAfter() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, _ := m.nextSlotLocked()
	return d
}

// refuseLocked is the RetryAfter of a refusal: with RetrySpread, the slot
// it names is the refused sender's, and the next refusal is told a later one.
func (m *Mailbox[T]) refuseLocked() time.Duration {
	d, end := m.nextSlotLocked()
	m.promised = end
	return d
}

// nextSlotLocked is the RetryAfter for a sender refused now and, with
// RetrySpread, the end of the slot it would be given (clock.Mono).
func (m *Mailbox[T]) nextSlotLocked() (retryAfter, end time.Duration) {
	drain := m.service * time.Duration(max(m.n, 1))
	if m.opts.Retry != RetrySpread {
		return drain, m.promised
	}
	now := m.opts.Clock.Mono()
	start := max(now+drain, m.promised)
	return start - now, start + m.service
}

// Len returns the number of queued messages.
func (m *Mailbox[T]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// Cap returns the capacity (for Unbounded, the current allocation).
func (m *Mailbox[T]) Cap() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limit
}

// Policy returns the mailbox's policy.
func (m *Mailbox[T]) Policy() Policy { return m.opts.Policy }

// Close stops the mailbox: later offers get ErrClosed, blocked offers
// return ErrClosed, and Take drains what is queued before returning
// ErrClosed. Closing twice is a no-op.
func (m *Mailbox[T]) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	if m.done != nil {
		close(m.done)
	}
}
