package outbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is the durable Store: messages in one bbolt file, safe for
// concurrent use. Every call that changes the file (Dequeue and the
// settling methods included, since leases are stored) is one bbolt write
// transaction, and returns once it is as durable as Options.Durability
// says:
//
//   - Sync: one transaction and fsync per call. Survives kill -9 and power
//     loss; about a thousand calls a second on an SSD.
//   - Batch: group commit for every writing call, so concurrent callers
//     share a transaction and its fsync; each still returns only once its
//     own data is on disk. Same guarantees as Sync, far more throughput
//     under concurrency. Most calls use bbolt's DB.Batch, which costs a
//     lone caller up to batchDelay more latency; the relay's calls
//     (Dequeue, Settle, SettleAndDequeue) use a group commit that never
//     waits for company (see update).
//   - None: no fsync (bbolt NoSync). Survives kill -9 of the process, since
//     the kernel has the pages, but NOT power loss or a kernel crash, which
//     can lose recent calls or damage the file. For simulations only. The
//     relay's calls share commits as under Batch.
//
// Layout. Buckets, all keyed so that no call scans more than it returns:
//
//	msgs   id(8) -> record          every queued message; ids come from the
//	                                bucket's NextSequence, increasing in
//	                                enqueue order
//	recv   receiver -> head(8) tail(8)
//	                                each receiver's queue: its first message
//	                                (the head) and its last
//	next   id(8) -> id(8)           the receiver's message after id, so
//	                                Ack finds the next head in one lookup
//	ready  partition(2) sendAt(8) id(8)
//	                                heads that are not leased: Dequeue of a
//	                                partition is a seek to its first key
//	lease  deadline(8) id(8)        leased heads, oldest deadline first
//	keys   receiver 0 key -> id(8) seq(8)
//	                                newest message queued with each key
//	dead   id(8) -> record          dead letters
//	records key -> value            Records: small named values kept with
//	                                the queue (a leader's deploy progress,
//	                                under "leader/deploy/"); created by the
//	                                first PutRecords, ignored by builds
//	                                from before it
//	jobs   number(8) -> record      a leader's job queue for work pulling
//	                                (BoltJobs, jobs_bolt.go); created by
//	                                OpenJobs, ignored by builds from before it
//	fleetsim.outbox                 format version and partition count; its
//	                                bbolt sequence is NextSeq's counter
//
// Each receiver's queue is a chain (recv head, next links, recv tail)
// rather than an index keyed receiver+id: appends for many receivers then
// dirty a few pages per transaction instead of one per receiver, which
// made group commit several times faster (docs/BENCHMARKS.md).
//
// A head parked for its offline receiver (Park) sits in ready at its
// recheck time (the largest time a key holds when it has none), and its
// record carries flagParked: that bit, not the due time, is what Wake
// looks for, so a wave or a backoff is never brought forward. The bit was
// added without a format change: a file written before it holds no
// parked messages (what an older build handed back for an offline
// receiver waits for the recheck it was given), and an older build
// reading a newer file ignores the bit and takes the recheck for a due
// time.
//
// Records are a compact binary encoding (bolt_codec.go). Overwrite targets
// the newest queued message with the same (receiver, key), whichever
// Conflict that message was enqueued with; an equal Seq counts as newer
// and replaces. See Enqueue, Replay and DeadLetter for the details the
// Store contract leaves open.
type Bolt struct {
	path string
	o    Options
	db   *bolt.DB

	mu     sync.RWMutex // shared by every call, exclusive for Close
	closed bool

	w writerState // touched only inside write transactions
	q commitQueue // group commit for the relay's calls (see update)

	pmu sync.Mutex
	pub counters // as of the last commit, for Stats
}

var _ Store = (*Bolt)(nil)

// Group commit tuning for Durability Batch. bbolt starts a batch's
// transaction when MaxBatchSize calls have joined it or MaxBatchDelay after
// the first one, whichever is first; a batch stops taking calls when it
// starts, even while it waits for the previous commit. So the delay sets
// the batch size under load and is also the price a lone caller pays on
// every call: 2 ms is a compromise between the two (docs/BENCHMARKS.md,
// outbox store), and a single producer should use Sync.
const (
	batchDelay = 2 * time.Millisecond
	batchSize  = 1000
)

// OpenBolt opens (creating if needed) the outbox file at path. It waits at
// most o.OpenTimeout for the file lock and returns an error wrapping
// ErrLocked if another process holds it, ErrCorrupt if the file is not a
// bbolt database or is damaged, or ErrNotOutbox if it is another program's
// bbolt file; each error names the file and what to do, and a damaged file
// makes it return an error, not panic.
//
// Opening expires every lease (the process that held them is gone), so
// messages in flight at a crash are handed out again. If the file was last
// opened with a different o.Partitions, the ready index is rebuilt from the
// receivers' heads (one seek per receiver, not a scan of every message).
func OpenBolt(path string, o Options) (*Bolt, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	db, err := openDB(path, o)
	if err != nil {
		return nil, err
	}
	db.MaxBatchDelay = batchDelay
	db.MaxBatchSize = batchSize
	b := &Bolt{path: path, o: o, db: db}
	if err := b.load(); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// Path returns the file the store was opened on.
func (b *Bolt) Path() string { return b.path }

// Partitions returns o.Partitions as given to OpenBolt (default 1).
func (b *Bolt) Partitions() int { return b.o.Partitions }

// Close waits for calls in progress, then closes the file and releases its
// lock. Further calls return ErrClosed.
func (b *Bolt) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.closed = true
	return b.db.Close()
}

// enter admits a call: it fails if ctx is done or the store is closed, and
// otherwise holds off Close until the matching b.mu.RUnlock.
func (b *Bolt) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Stats returns the counters as of the last commit. Depth, Leased and
// DeadLetters are kept incrementally (counted from the file at open).
// OldestAge is the age of the queued message with the lowest id, read from
// the file: exact unless an Overwrite refreshed that message's CreatedAt or
// a Replay put an older message behind it, when it understates. After Close
// it returns the last counters with OldestAge 0.
func (b *Bolt) Stats() Stats {
	b.pmu.Lock()
	c := b.pub
	b.pmu.Unlock()
	s := c.stats()
	if c.depth == 0 {
		return s
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return s
	}
	now := unixNano(b.o.Clock.Now())
	_ = b.db.View(func(tx *bolt.Tx) error {
		if _, v := tx.Bucket(bucketMsgs).Cursor().First(); v != nil {
			if r, err := decodeRec(v); err == nil && now > r.createdAt {
				s.OldestAge = time.Duration(now - r.createdAt)
			}
		}
		return nil
	})
	return s
}

// counters are the numbers behind Stats.
type counters struct {
	depth, leased, dead int64
	peak                int64 // the most depth reached, absolute even in a transaction's delta: add keeps the larger
	enqueued, overwritten, stale, acked, nacked, released, parked, expired,
	deadLettered, replayed, purged int64
}

func (c *counters) add(d *counters) {
	c.depth += d.depth
	c.peak = max(c.peak, d.peak)
	c.leased += d.leased
	c.dead += d.dead
	c.enqueued += d.enqueued
	c.overwritten += d.overwritten
	c.stale += d.stale
	c.acked += d.acked
	c.nacked += d.nacked
	c.released += d.released
	c.parked += d.parked
	c.expired += d.expired
	c.deadLettered += d.deadLettered
	c.replayed += d.replayed
	c.purged += d.purged
}

func (c *counters) stats() Stats {
	return Stats{
		Depth: int(c.depth), PeakDepth: int(c.peak), Leased: int(c.leased), DeadLetters: int(c.dead),
		Enqueued: uint64(c.enqueued), Overwritten: uint64(c.overwritten), Stale: uint64(c.stale),
		Acked: uint64(c.acked), Nacked: uint64(c.nacked), Released: uint64(c.released), Parked: uint64(c.parked),
		Expired: uint64(c.expired), DeadLettered: uint64(c.deadLettered),
		Replayed: uint64(c.replayed), Purged: uint64(c.purged),
	}
}

// writerState keeps the counters as the current write transaction sees
// them, so MaxDepth is enforced exactly even while earlier commits have not
// yet published their counts. bbolt runs one write transaction at a time,
// and its writer lock orders every access to this struct.
//
// A transaction can roll back (an error, or bbolt retrying a batch), and
// bbolt gives no rollback hook. But a write transaction's ID is the last
// committed ID + 1, so a new transaction with the same ID as the previous
// one means the previous one rolled back: cur is reset to base.
type writerState struct {
	tx        *bolt.Tx
	txid      int
	base, cur counters
	delta     *counters // this transaction's changes, published on commit
}

// state returns the writer state for tx, starting a new transaction's
// bookkeeping on its first use.
func (b *Bolt) state(tx *bolt.Tx) *writerState {
	w := &b.w
	if w.tx != tx {
		if tx.ID() == w.txid {
			w.cur = w.base
		} else {
			w.base = w.cur
		}
		w.tx, w.txid = tx, tx.ID()
		d := new(counters)
		w.delta = d
		tx.OnCommit(func() {
			b.pmu.Lock()
			b.pub.add(d)
			b.pmu.Unlock()
		})
	}
	return w
}

// add records a call's changes in the transaction's view and in what it
// will publish on commit.
func (w *writerState) add(d *counters) {
	w.cur.add(d)
	w.delta.add(d)
	// The peak is taken here, under the writer lock, from the depth the
	// transaction has reached: bbolt runs commit hooks after it lets the
	// next writer in, so two transactions' deltas may be published out of
	// order, and a peak worked out from the published depth could be one
	// the file never had. A max does not mind the order.
	w.delta.peak = max(w.delta.peak, w.cur.depth)
}

// buckets are one transaction's handles on the store's buckets.
type buckets struct {
	tx                                         *bolt.Tx
	msgs, recv, next, ready, lease, keys, dead *bolt.Bucket
}

func bucketsOf(tx *bolt.Tx) (buckets, error) {
	bk := buckets{
		tx:    tx,
		msgs:  tx.Bucket(bucketMsgs),
		recv:  tx.Bucket(bucketRecv),
		next:  tx.Bucket(bucketNext),
		ready: tx.Bucket(bucketReady),
		lease: tx.Bucket(bucketLease),
		keys:  tx.Bucket(bucketKeys),
		dead:  tx.Bucket(bucketDead),
	}
	if bk.msgs == nil || bk.recv == nil || bk.next == nil || bk.ready == nil || bk.lease == nil || bk.keys == nil || bk.dead == nil {
		return bk, fmt.Errorf("%w: a bucket is missing", ErrCorrupt)
	}
	// Ids only grow, so msgs and dead fill pages left to right: pack them
	// full instead of bbolt's default half, for half the file size.
	bk.msgs.FillPercent = 0.9
	bk.dead.FillPercent = 0.9
	return bk, nil
}
