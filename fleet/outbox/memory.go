package outbox

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is the in-memory Store: a worker's local store-and-forward while it
// is offline, and the store of unit tests. It keeps the same contract as the
// bbolt store except durability: everything is gone when the process is.
// Bound it with Options.MaxDepth. Safe for concurrent use (one mutex; every
// operation is O(log n) or better, except DeadLetters, Replay and Purge,
// which are O(dead letters)).
type Memory struct {
	opts Options

	mu     sync.Mutex
	closed bool
	nextID uint64
	msgs   map[uint64]*memEntry // queued, leased included
	queues map[string][]uint64  // per receiver, enqueue order; [0] is the head
	keys   map[recvKey]uint64   // (receiver, key) -> id of the newest version queued
	ready  []memHeap            // per partition: heads that are not leased
	leased map[uint64]*memEntry
	// expiry is no later than the earliest deadline of a lease in
	// leased: a dequeue looks through leased for leases run out only
	// from then on, not at every call.
	expiry   time.Time
	dead     map[uint64]*Message
	oldestID uint64 // no queued id is below this (ids only grow)
	lastSeq  uint64 // the last number NextSeq handed out (seq.go)
	c        Stats
	records  map[string][]byte // Records; made on first use
}

type recvKey struct{ receiver, key string }

type memEntry struct {
	m     Message
	part  int
	until time.Time // lease deadline; zero when not leased
	hidx  int       // index in its partition heap, -1 when not there
	// superseded: an Overwrite found this message leased and appended a
	// newer version; handed back undelivered, it is dropped.
	superseded bool
	// parked: it waits for its receiver (Wake), not for its SendAt, which
	// is only the recheck.
	parked bool
}

// NewMemory returns an empty in-memory store. Durability and OpenTimeout are
// ignored.
func NewMemory(o Options) (*Memory, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Memory{
		opts:   o,
		msgs:   make(map[uint64]*memEntry),
		queues: make(map[string][]uint64),
		keys:   make(map[recvKey]uint64),
		ready:  make([]memHeap, o.Partitions),
		leased: make(map[uint64]*memEntry),
		dead:   make(map[uint64]*Message),
	}, nil
}

// Partitions returns Options.Partitions.
func (s *Memory) Partitions() int { return s.opts.Partitions }

// Enqueue adds msgs atomically: all are validated (and room checked) before
// any is stored. Payloads are copied.
func (s *Memory) Enqueue(ctx context.Context, msgs ...Message) ([]Receipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range msgs {
		if err := msgs[i].validate(); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.opts.MaxDepth > 0 {
		// A replay may have taken the store past MaxDepth; that only stops
		// new slots, not overwrites.
		if n := s.appendsLocked(msgs); n > 0 && len(s.msgs)+n > s.opts.MaxDepth {
			return nil, fmt.Errorf("%w: %d queued, %d more would pass max depth %d", ErrFull, len(s.msgs), n, s.opts.MaxDepth)
		}
	}
	now := s.opts.Clock.Now()
	out := make([]Receipt, len(msgs))
	for i := range msgs {
		out[i] = s.enqueueLocked(msgs[i], now)
	}
	s.c.Enqueued += uint64(len(msgs)) // appended, replaced or stale: see Stats
	return out, nil
}

// appendsLocked counts how many of msgs would take a new slot, taking them
// in order as enqueueLocked will: an Overwrite that replaces a queued
// version (one queued before or earlier in this call) or is stale takes
// none.
func (s *Memory) appendsLocked(msgs []Message) int {
	n := 0
	batch := map[recvKey]uint64{} // keys appended earlier in this call -> their seq
	for i := range msgs {
		m := &msgs[i]
		rk := recvKey{m.Receiver, m.Key}
		if m.Conflict == Overwrite {
			if seq, ok := batch[rk]; ok {
				batch[rk] = max(seq, m.Seq)
				continue
			}
			if id, ok := s.keys[rk]; ok {
				if e := s.msgs[id]; e.until.IsZero() || m.Seq < e.m.Seq {
					continue
				}
			}
		}
		n++
		if m.Key != "" {
			batch[rk] = m.Seq
		}
	}
	return n
}

// enqueueLocked stores m (enqueued, or replayed).
func (s *Memory) enqueueLocked(m Message, now time.Time) Receipt {
	m.Payload = bytes.Clone(m.Payload)
	m.Attempts, m.LastError, m.CreatedAt = 0, "", now
	if m.SendAt.IsZero() {
		m.SendAt = now
	}
	rk := recvKey{m.Receiver, m.Key}
	if m.Conflict == Overwrite {
		if id, ok := s.keys[rk]; ok {
			e := s.msgs[id]
			if m.Seq < e.m.Seq {
				s.c.Stale++
				return Receipt{ID: id, Outcome: Stale}
			}
			if e.until.IsZero() { // queued, not in flight: replace in place
				m.ID = id
				// The receiver's failures so far still count: a backoff in
				// progress holds, and a receiver that keeps failing still
				// reaches the dead letters however often it is overwritten.
				// A parked message's SendAt is no due time but a recheck:
				// a version due by now stays parked, a later one waits for
				// its own time.
				switch {
				case !e.parked:
					m.SendAt = maxTime(m.SendAt, e.m.SendAt)
				case m.SendAt.After(now):
					e.parked = false
				default:
					m.SendAt = e.m.SendAt
				}
				m.Attempts, m.LastError = e.m.Attempts, e.m.LastError
				e.m = m
				if e.hidx >= 0 {
					heap.Fix(&s.ready[e.part], e.hidx)
				}
				s.c.Overwritten++
				return Receipt{ID: id, Outcome: Replaced}
			}
			// The queued version is in flight: the receiver may already
			// have it, so the new one goes behind it, and the one in flight
			// is dropped if it comes back undelivered.
			e.superseded = true
		}
	}
	s.nextID++
	m.ID = s.nextID
	e := &memEntry{m: m, part: PartitionOf(m.Receiver, s.opts.Partitions), hidx: -1}
	s.msgs[m.ID] = e
	s.c.PeakDepth = max(s.c.PeakDepth, len(s.msgs))
	q := append(s.queues[m.Receiver], m.ID)
	s.queues[m.Receiver] = q
	if len(q) == 1 {
		heap.Push(&s.ready[e.part], e)
	}
	if m.Key != "" {
		s.keys[rk] = m.ID
	}
	return Receipt{ID: m.ID, Outcome: Appended}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Dequeue leases up to max due heads of partition, oldest SendAt first.
func (s *Memory) Dequeue(ctx context.Context, partition, max int) ([]Message, error) {
	_, out, err := s.SettleAndDequeue(ctx, partition, max)
	return out, err
}

// SettleAndDequeue settles ss, then dequeues, under one lock.
func (s *Memory) SettleAndDequeue(ctx context.Context, partition, max int, ss ...Settlement) ([]SettleResult, []Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if partition < 0 || partition >= s.opts.Partitions {
		return nil, nil, fmt.Errorf("%w: partition %d: must be 0..%d", ErrInvalid, partition, s.opts.Partitions-1)
	}
	if err := validateSettlements(ss); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	now := s.opts.Clock.Now()
	res := s.settleAllLocked(ss, now)
	return res, s.dequeueLocked(partition, max, now), nil
}

func (s *Memory) dequeueLocked(partition, max int, now time.Time) []Message {
	if !now.Before(s.expiry) && len(s.leased) > 0 {
		s.expiry = time.Time{}
		for _, e := range s.leased {
			if !now.Before(e.until) { // the holder never settled it
				s.handBackLocked(e, now)
			} else if s.expiry.IsZero() || e.until.Before(s.expiry) {
				s.expiry = e.until
			}
		}
	}
	h := &s.ready[partition]
	if max <= 0 || h.Len() == 0 {
		return nil
	}
	out := make([]Message, 0, min(max, h.Len())) // Messages are big: grow once
	for len(out) < max && h.Len() > 0 && !(*h)[0].m.SendAt.After(now) {
		e := heap.Pop(h).(*memEntry)
		if e.m.Expired(now) {
			s.c.Expired++
			s.removeLocked(e)
			continue
		}
		e.until, e.parked = now.Add(s.opts.LeaseTimeout), false
		if len(s.leased) == 0 || e.until.Before(s.expiry) {
			s.expiry = e.until
		}
		s.leased[e.m.ID] = e
		out = append(out, e.m)
	}
	return out
}

// Settle applies ss in order under one lock.
func (s *Memory) Settle(ctx context.Context, ss ...Settlement) ([]SettleResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateSettlements(ss); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.settleAllLocked(ss, s.opts.Clock.Now()), nil
}

func (s *Memory) settleAllLocked(ss []Settlement, now time.Time) []SettleResult {
	if len(ss) == 0 {
		return nil
	}
	out := make([]SettleResult, len(ss))
	for i := range ss {
		out[i] = s.settleLocked(&ss[i], now)
	}
	return out
}

func (s *Memory) settleLocked(st *Settlement, now time.Time) SettleResult {
	res := SettleResult{ID: st.ID}
	e, ok := s.leased[st.ID]
	if !ok {
		res.Err = fmt.Errorf("%w: id %d", ErrNotLeased, st.ID)
		return res
	}
	switch st.Op {
	case SettleAck:
		s.c.Acked++
		s.removeLocked(e)
	case SettleNack:
		e.m.Attempts++
		e.m.LastError = st.Cause
		if e.m.Attempts >= s.opts.MaxAttempts {
			res.Nack = DeadLettered
			s.deadLetterLocked(e)
			break
		}
		e.m.SendAt = now.Add(max(st.Delay, 0))
		if s.handBackLocked(e, now) {
			res.Nack = Superseded
			break
		}
		s.c.Nacked++
	case SettleRelease:
		e.m.SendAt = st.SendAt
		if e.m.SendAt.IsZero() {
			e.m.SendAt = now
		}
		if !s.handBackLocked(e, now) {
			s.c.Released++
		}
	case SettlePark:
		e.m.SendAt, e.parked = st.SendAt, true
		if e.m.SendAt.IsZero() {
			e.m.SendAt = never
		}
		if !s.handBackLocked(e, now) {
			s.c.Parked++
		}
	case SettleDeadLetter:
		e.m.LastError = st.Cause
		s.deadLetterLocked(e)
	}
	return res
}

// Ack removes a leased message.
func (s *Memory) Ack(ctx context.Context, id uint64) error {
	_, err := settleOne(ctx, s, Settlement{ID: id, Op: SettleAck})
	return err
}

// Nack counts a failed attempt; at MaxAttempts the message is
// dead-lettered, and if an Overwrite superseded it while it was leased it
// is dropped (see Store).
func (s *Memory) Nack(ctx context.Context, id uint64, delay time.Duration, cause string) (NackResult, error) {
	r, err := settleOne(ctx, s, Settlement{ID: id, Op: SettleNack, Delay: delay, Cause: cause})
	return r.Nack, err
}

// Release returns a leased message without charging an attempt, or drops
// it if an Overwrite superseded it while it was leased (see Store).
func (s *Memory) Release(ctx context.Context, id uint64, sendAt time.Time) error {
	_, err := settleOne(ctx, s, Settlement{ID: id, Op: SettleRelease, SendAt: sendAt})
	return err
}

// Park returns a leased message without charging an attempt, parked for
// its receiver until Wake or recheck (zero: Wake only), or drops it if an
// Overwrite superseded it while it was leased (see Store).
func (s *Memory) Park(ctx context.Context, id uint64, recheck time.Time) error {
	_, err := settleOne(ctx, s, Settlement{ID: id, Op: SettlePark, SendAt: recheck})
	return err
}

// DeadLetter moves a leased message to the dead letters at once.
func (s *Memory) DeadLetter(ctx context.Context, id uint64, cause string) error {
	_, err := settleOne(ctx, s, Settlement{ID: id, Op: SettleDeadLetter, Cause: cause})
	return err
}

// Wake makes receiver's head due now if it is parked.
func (s *Memory) Wake(ctx context.Context, receiver string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	q := s.queues[receiver]
	if len(q) == 0 {
		return nil
	}
	if e := s.msgs[q[0]]; e.parked { // parked heads are never leased
		e.parked = false
		if now := s.opts.Clock.Now(); e.m.SendAt.After(now) {
			e.m.SendAt = now
			heap.Fix(&s.ready[e.part], e.hidx)
		}
	}
	return nil
}

// handBackLocked returns the leased head e, undelivered, to the queue at
// now, or drops it if it was superseded (and reports that).
func (s *Memory) handBackLocked(e *memEntry, now time.Time) bool {
	if !e.superseded {
		s.unleaseLocked(e)
		return false
	}
	s.dropSupersededLocked(e, now)
	return true
}

// dropSupersededLocked drops the leased head e, which an Overwrite
// superseded, as if that Overwrite had replaced it in place: the newest
// version of its key takes over its Attempts and LastError, and the
// receiver's next head is due no sooner than e would have been (its
// backoff holds). If e was being parked, the next head, if due by now,
// is parked in its place; one waiting for a later wave keeps waiting for
// it, so that a Wake cannot bring it forward.
func (s *Memory) dropSupersededLocked(e *memEntry, now time.Time) {
	s.c.Overwritten++
	if id, ok := s.keys[recvKey{e.m.Receiver, e.m.Key}]; ok && id != e.m.ID {
		n := s.msgs[id] // behind e, so not a head: no heap to fix
		n.m.Attempts, n.m.LastError = e.m.Attempts, e.m.LastError
	}
	s.removeLocked(e)
	q := s.queues[e.m.Receiver]
	if len(q) == 0 {
		return
	}
	h := s.msgs[q[0]]
	if e.parked {
		if h.m.SendAt.After(now) {
			return
		}
		h.parked = true
	}
	if e.m.SendAt.After(h.m.SendAt) {
		h.m.SendAt = e.m.SendAt
		heap.Fix(&s.ready[h.part], h.hidx)
	}
}

// unleaseLocked puts a leased head back among the ready ones.
func (s *Memory) unleaseLocked(e *memEntry) {
	delete(s.leased, e.m.ID)
	e.until = time.Time{}
	heap.Push(&s.ready[e.part], e)
}

// removeLocked drops the head e from the queue and promotes the next one.
func (s *Memory) removeLocked(e *memEntry) {
	id := e.m.ID
	delete(s.leased, id)
	delete(s.msgs, id)
	if e.hidx >= 0 {
		heap.Remove(&s.ready[e.part], e.hidx)
	}
	if rk := (recvKey{e.m.Receiver, e.m.Key}); e.m.Key != "" && s.keys[rk] == id {
		delete(s.keys, rk)
	}
	q := s.queues[e.m.Receiver][1:] // e is always the head
	if len(q) == 0 {
		delete(s.queues, e.m.Receiver)
		return
	}
	s.queues[e.m.Receiver] = q
	heap.Push(&s.ready[e.part], s.msgs[q[0]])
}

func (s *Memory) deadLetterLocked(e *memEntry) {
	s.c.DeadLettered++
	m := e.m
	s.removeLocked(e)
	s.dead[m.ID] = &m
}

// DeadLetters lists dead letters, oldest first.
func (s *Memory) DeadLetters(ctx context.Context, max int) ([]Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	ids := s.deadIDsLocked(nil)
	if max > 0 && len(ids) > max {
		ids = ids[:max]
	}
	out := make([]Message, len(ids))
	for i, id := range ids {
		out[i] = *s.dead[id]
	}
	return out, nil
}

// deadIDsLocked returns the given ids that are dead letters, or all of them
// when none are given, in ascending order.
func (s *Memory) deadIDsLocked(want []uint64) []uint64 {
	var ids []uint64
	if len(want) == 0 {
		for id := range s.dead {
			ids = append(ids, id)
		}
	} else {
		for _, id := range want {
			if _, ok := s.dead[id]; ok {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Replay re-enqueues dead letters with a fresh attempt count, due now. Each
// gets a new ID at the tail of its receiver's queue, so per-receiver order
// stays the order of (re)enqueue.
func (s *Memory) Replay(ctx context.Context, ids ...uint64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	now := s.opts.Clock.Now()
	n := 0
	for _, id := range s.deadIDsLocked(ids) {
		m := *s.dead[id]
		delete(s.dead, id)
		m.SendAt = time.Time{}
		s.enqueueLocked(m, now) // an Overwrite may find a newer version queued
		n++
	}
	s.c.Replayed += uint64(n)
	return n, nil
}

// Purge deletes dead letters.
func (s *Memory) Purge(ctx context.Context, ids ...uint64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	del := s.deadIDsLocked(ids)
	for _, id := range del {
		delete(s.dead, id)
	}
	s.c.Purged += uint64(len(del))
	return len(del), nil
}

// Len returns the number of queued messages, leased ones included: Stats'
// Depth without the rest of Stats, for callers that check it often.
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// Stats returns depth and counters.
func (s *Memory) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.c
	st.Depth, st.Leased, st.DeadLetters = len(s.msgs), len(s.leased), len(s.dead)
	if len(s.msgs) > 0 {
		for s.msgs[s.oldestID] == nil {
			s.oldestID++
		}
		st.OldestAge = s.opts.Clock.Now().Sub(s.msgs[s.oldestID].m.CreatedAt)
	}
	return st
}

// Close marks the store closed; later calls return ErrClosed. The messages
// are dropped with the store (it is memory).
func (s *Memory) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	return nil
}

// memHeap orders a partition's ready heads by SendAt, then id.
type memHeap []*memEntry

func (h memHeap) Len() int { return len(h) }
func (h memHeap) Less(i, j int) bool {
	a, b := h[i].m, h[j].m
	if !a.SendAt.Equal(b.SendAt) {
		return a.SendAt.Before(b.SendAt)
	}
	return a.ID < b.ID
}
func (h memHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
func (h *memHeap) Push(x any) {
	e := x.(*memEntry)
	e.hidx = len(*h)
	*h = append(*h, e)
}
func (h *memHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.hidx = -1
	return e
}
