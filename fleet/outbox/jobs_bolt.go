package outbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketJobs holds a BoltJobs queue: number(8) -> record (JSON of
// jobRecord), one per job not done; its bbolt sequence is the number of
// the last job added. A file from before work pulling has no such bucket:
// OpenJobs creates it, and an older build ignores it, so the format
// version stays.
var bucketJobs = []byte("jobs")

// jobRecord is a job as the file keeps it (times in Unix nanoseconds).
type jobRecord struct {
	Work    int64  `json:"work,omitempty"`
	Added   int64  `json:"added"`
	Worker  string `json:"worker,omitempty"`
	Request string `json:"request,omitempty"`
	Until   int64  `json:"until,omitempty"`
	Leases  int    `json:"leases,omitempty"`
}

// BoltJobs is the durable Jobs: the queue in its own bucket of a Bolt
// outbox file, with an index in memory read from it at OpenJobs. Every
// change is one write transaction of the Bolt store (durable as its
// Options.Durability says) before the call returns; a change the file
// refused is not made in memory either. Leases are kept with their
// deadlines, so those a crashed leader gave expire after its restart.
type BoltJobs struct {
	b *Bolt
	q jobQueue
}

// OpenJobs opens the job queue kept in b's file, for capacity jobs (0:
// DefaultJobCapacity). It is closed with b.
func (b *Bolt) OpenJobs(capacity int) (*BoltJobs, error) {
	c, err := jobCapacity(capacity)
	if err != nil {
		return nil, err
	}
	j := &BoltJobs{b: b}
	j.q.init(c)
	if err := b.enter(context.Background()); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	err = b.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketJobs)
		if err != nil {
			return err
		}
		j.q.next = bk.Sequence()
		return bk.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("job key %x: want 8 bytes", k)
			}
			var r jobRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("job %d: %w", binary.BigEndian.Uint64(k), err)
			}
			n := binary.BigEndian.Uint64(k)
			p := &Job{ID: fmt.Sprintf("q%d", n), Work: time.Duration(r.Work), Added: time.Unix(0, r.Added), Worker: r.Worker, Request: r.Request, Leases: r.Leases}
			if r.Until != 0 {
				p.Until = time.Unix(0, r.Until)
			}
			j.q.jobs[n] = p
			if p.Worker == "" {
				j.q.queued = append(j.q.queued, n) // ForEach goes in key order
			} else {
				j.q.last[p.Worker] = lastLease{request: p.Request, n: n}
				j.q.due.push(leaseDue{until: p.Until, n: n})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("outbox: %s: job queue: %w", b.path, err)
	}
	return j, nil
}

// persist writes the jobs put (nil values: none) and deletes those done,
// with the queue's sequence, in one transaction. It joins the store's
// group commit that never waits for company (queued): a leader serves job
// requests one after another from one loop, so through DB.Batch every
// lease and every done report would wait out the batch delay alone.
func (j *BoltJobs) persist(ctx context.Context, put []*Job, done []*Job) error {
	if err := j.b.enter(ctx); err != nil {
		return err
	}
	defer j.b.mu.RUnlock()
	next := j.q.next
	return j.b.update(queued, func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketJobs)
		if err := bk.SetSequence(next); err != nil {
			return err
		}
		for _, p := range put {
			n, _ := jobNum(p.ID)
			r := jobRecord{Work: int64(p.Work), Added: p.Added.UnixNano(), Worker: p.Worker, Request: p.Request, Leases: p.Leases}
			if !p.Until.IsZero() {
				r.Until = p.Until.UnixNano()
			}
			v, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := bk.Put(idKey(n), v); err != nil {
				return err
			}
		}
		for _, p := range done {
			n, _ := jobNum(p.ID)
			if err := bk.Delete(idKey(n)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Add implements Jobs.
func (j *BoltJobs) Add(ctx context.Context, now time.Time, work ...time.Duration) ([]string, error) {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	ids, put, err := j.q.add(now, work)
	if err != nil {
		return nil, err
	}
	if err := j.persist(ctx, put, nil); err != nil {
		j.q.unadd(len(put))
		return nil, err
	}
	return ids, nil
}

// Lease implements Jobs.
func (j *BoltJobs) Lease(ctx context.Context, worker, request string, now time.Time, lease time.Duration) (Job, bool, bool, error) {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Job{}, false, false, err
	}
	before := j.q.snapshotLease(worker)
	got, ok, repeat, p := j.q.lease(worker, request, now, lease)
	if p == nil {
		return got, ok, repeat, nil
	}
	if err := j.persist(ctx, []*Job{p}, nil); err != nil {
		before.undo(&j.q, p)
		return Job{}, false, false, err
	}
	return got, ok, repeat, nil
}

// leaseUndo is what a lease changes, to undo it cheaply.
type leaseUndo struct {
	worker  string
	last    lastLease
	hadLast bool
	leases  uint64
}

func (q *jobQueue) snapshotLease(worker string) leaseUndo {
	l, had := q.last[worker]
	return leaseUndo{worker: worker, last: l, hadLast: had, leases: q.st.LeasesGiven}
}

func (u leaseUndo) undo(q *jobQueue, p *Job) {
	n, _ := jobNum(p.ID)
	p.Worker, p.Request, p.Until = "", "", time.Time{}
	p.Leases--
	q.enqueue(n)
	if u.hadLast {
		q.last[u.worker] = u.last
	} else {
		delete(q.last, u.worker)
	}
	q.st.LeasesGiven = u.leases
}

// Complete implements Jobs.
func (j *BoltJobs) Complete(ctx context.Context, worker, id string) (JobOutcome, error) {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return JobUnknown, err
	}
	o, p, wasQueued := j.q.complete(worker, id)
	if p == nil {
		return o, nil
	}
	if err := j.persist(ctx, nil, []*Job{p}); err != nil {
		j.q.uncomplete(p, wasQueued)
		return JobUnknown, err
	}
	return o, nil
}

// The undoes of a change the file refused put back exactly what the
// change made, so that a change costs what it changes, however many jobs
// and workers the queue holds.

// unadd takes back the k jobs add queued last.
func (q *jobQueue) unadd(k int) {
	for _, n := range q.queued[len(q.queued)-k:] {
		delete(q.jobs, n)
	}
	q.queued = q.queued[:len(q.queued)-k]
	q.next -= uint64(k)
	q.st.Added -= uint64(k)
}

// uncomplete puts back job p, which complete took out of the queue.
func (q *jobQueue) uncomplete(p *Job, wasQueued bool) {
	n, _ := jobNum(p.ID)
	q.jobs[n] = p
	if wasQueued {
		q.enqueue(n)
	}
	q.st.Done--
}

// unexpire gives the jobs expire put back in the queue their leases
// again (was: each one's lease as it was).
func (q *jobQueue) unexpire(changed []*Job, was []Job) {
	back := make(map[uint64]bool, len(changed))
	for i, p := range changed {
		n, _ := jobNum(p.ID)
		back[n] = true
		p.Worker, p.Request, p.Until = was[i].Worker, was[i].Request, was[i].Until
		q.due.push(leaseDue{until: p.Until, n: n})
	}
	q.queued = slices.DeleteFunc(q.queued, func(n uint64) bool { return back[n] })
	q.st.Expired -= uint64(len(changed))
}

// Expire implements Jobs.
func (j *BoltJobs) Expire(ctx context.Context, now time.Time) (int, error) {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	put, was := j.q.expire(now)
	if len(put) == 0 {
		return 0, nil
	}
	if err := j.persist(ctx, put, nil); err != nil {
		j.q.unexpire(put, was)
		return 0, err
	}
	return len(put), nil
}

// Stats implements Jobs.
func (j *BoltJobs) Stats(now time.Time) JobStats {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	return j.q.stats(now)
}
