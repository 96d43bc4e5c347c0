package outbox

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/fleetsim/fleetsim/fleet/clock"
	berrors "go.etcd.io/bbolt/errors"
)

// commitMode says how a write joins others in one transaction.
type commitMode int

const (
	// batched: bbolt's DB.Batch under Durability Batch. It waits up to
	// batchDelay for company, which pays when many goroutines call at once
	// (producers, concurrent single settles).
	batched commitMode = iota
	// queued: the store's own group commit (commitQueue) unless Durability
	// is Sync. It never waits for company, which suits the relay's calls:
	// one loop per partition, each calling one turn after another.
	queued
)

// writing counts the write transactions under way, for a virtual clock's
// settle check.
var writing = clock.NewHold("writes to an outbox file")

// update runs fn in a write transaction, grouped with others as mode
// says; under Sync, and under None for batched calls, it is one Update of
// its own (NoSync was set at open for None). Grouped, fn may run more than
// once (a batch is retried without a failing call), so fn must set its
// results afresh on every run and touch the counters only through b.state.
//
// Which calls use which mode: Enqueue, Wake, Replay, Purge and the
// single-message settles (Ack, Nack, Release, DeadLetter) are batched,
// since they arrive from many goroutines at once. Dequeue, Settle and
// SettleAndDequeue are queued: a relay partition's loop calls them one
// after another, so with one partition there is nobody to wait for, and
// with several the loops' calls share commits whenever they overlap;
// through DB.Batch every turn of a relay's loop would wait out batchDelay
// (docs/BENCHMARKS.md, relay). The job queue's changes (BoltJobs) are
// queued too: the leader's service loop makes them one after another.
func (b *Bolt) update(mode commitMode, fn func(*bolt.Tx) error) error {
	// A virtual clock must not move while a write waits for company on
	// the wall clock (DB.Batch) or for the disk.
	writing.Add(1)
	defer writing.Add(-1)
	tracked := func(tx *bolt.Tx) error {
		// Every write transaction must pass through state, even one that
		// changes no counter: state tells a rollback from a commit by the
		// transaction ID, which only works if it sees every transaction.
		b.state(tx)
		return fn(tx)
	}
	var err error
	switch {
	case mode == batched && b.o.Durability == Batch:
		err = b.db.Batch(tracked)
	case mode == queued && b.o.Durability != Sync:
		err = b.q.update(b.db, tracked)
	default:
		err = b.db.Update(tracked)
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// write is update for the calls that change messages: fn gets the
// transaction's buckets, its writer state and a fresh set of counters for
// its changes, which are added to the transaction's once fn succeeds.
func (b *Bolt) write(mode commitMode, fn func(bk buckets, w *writerState, d *counters) error) error {
	return b.update(mode, func(tx *bolt.Tx) error {
		bk, err := bucketsOf(tx)
		if err != nil {
			return err
		}
		w := b.state(tx)
		var d counters
		if err := fn(bk, w, &d); err != nil {
			return err
		}
		w.add(&d)
		return nil
	})
}

// commitQueue is a group commit that seals a batch only when its
// transaction starts: a call that finds no commit running starts one at
// once, and every call that arrives while it runs joins the next one. So
// the batch is whoever came during the last commit, with no timer, and a
// lone caller pays nothing. (bbolt's DB.Batch seals a batch after its
// delay even while the previous commit still runs, so with few callers
// each of them waits out the delay on every call.)
//
// The caller that starts a commit leads it: it runs every queued
// function in one transaction, then hands the lead to the first caller
// queued meanwhile and returns. No goroutine of its own.
type commitQueue struct {
	mu   sync.Mutex
	busy bool // a leader is committing
	next []*queuedCall
}

type queuedCall struct {
	fn   func(*bolt.Tx) error
	err  error
	turn chan bool // true: lead the next commit; false: done, err set
}

func (q *commitQueue) update(db *bolt.DB, fn func(*bolt.Tx) error) error {
	c := &queuedCall{fn: fn, turn: make(chan bool, 1)}
	q.mu.Lock()
	q.next = append(q.next, c)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !lead && !<-c.turn {
		return c.err
	}
	q.mu.Lock()
	batch := q.next // c among them
	q.next = nil
	q.mu.Unlock()
	commitAll(db, batch)
	q.mu.Lock()
	if len(q.next) > 0 {
		q.next[0].turn <- true
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	for _, o := range batch {
		if o != c {
			o.turn <- false
		}
	}
	return c.err
}

// commitAll runs the calls' functions in order in one transaction and
// sets each call's err. A function that fails gets its error and the
// transaction rolls back; the others run again without it.
func commitAll(db *bolt.DB, calls []*queuedCall) {
	run := append([]*queuedCall(nil), calls...)
	for len(run) > 0 {
		failed := -1
		err := db.Update(func(tx *bolt.Tx) error {
			for i, c := range run {
				if err := safely(c.fn, tx); err != nil {
					failed, c.err = i, err
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, c := range run {
				c.err = err // nil, or the commit's own failure
			}
			return
		}
		run = append(run[:failed], run[failed+1:]...)
	}
}

// safely runs fn, turning a panic (bbolt panics on some damaged pages)
// into an error for its caller alone, so the lead is always handed on.
func safely(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: bbolt panicked: %v", ErrCorrupt, p)
		}
	}()
	return fn(tx)
}
