package outbox

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Jobs is a leader's job queue for work pulling: jobs wait in it until a
// worker asks for its next one, are leased to that worker, and leave it
// when the worker reports them done. A lease not reported done by its
// deadline expires (Expire) and its job goes back to the queue, at its
// place in the order it was added. Jobs are handed out oldest first.
//
// Two implementations share this contract (jobs_contract_test.go):
// MemoryJobs, and BoltJobs, which keeps the queue in its own bucket of a
// Bolt outbox file so that a restarted leader carries on with it. Both are
// safe for concurrent use.
type Jobs interface {
	// Add queues one job per entry of work (0: the worker's own service
	// time), added at now, and returns their ids in order. All or none:
	// ErrFull when they would take the queue past its capacity.
	Add(ctx context.Context, now time.Time, work ...time.Duration) ([]string, error)
	// Lease answers worker's job request request: the oldest queued job,
	// leased to worker until now+lease; or, when request is the one the
	// worker's last lease answered and that job is still leased to it,
	// the same job again (repeat true): one request never gets two jobs.
	// ok is false when there is nothing for the request.
	Lease(ctx context.Context, worker, request string, now time.Time, lease time.Duration) (j Job, ok, repeat bool, err error)
	// Complete takes worker's report that job id is done. See JobOutcome.
	Complete(ctx context.Context, worker, id string) (JobOutcome, error)
	// Expire puts every job whose lease ended at or before now back in the
	// queue, and returns how many.
	Expire(ctx context.Context, now time.Time) (int, error)
	// Stats returns the queue's measures as of now.
	Stats(now time.Time) JobStats
}

// Job is one job of a Jobs queue.
type Job struct {
	// ID is "q" and a number that grows in Add order, never reused.
	ID string
	// Work is the job's work time; 0: the worker's own service time.
	Work time.Duration
	// Added is when it was added.
	Added time.Time
	// Worker holds the lease ("" while queued), Request is the request
	// the lease answered, Until the lease's end.
	Worker, Request string
	Until           time.Time
	// Leases counts the times it was leased, this one included.
	Leases int
}

// JobOutcome is what Complete made of a done report.
type JobOutcome int

const (
	// JobDone: the job was leased to the worker (or queued again after its
	// lease expired, and not leased since): it is done and leaves the queue.
	JobDone JobOutcome = iota
	// JobLate: the job's lease expired and it is leased to another worker
	// now; the report changes nothing and the job stays with that worker.
	JobLate
	// JobUnknown: no such job in the queue (done already, or never added);
	// the report changes nothing.
	JobUnknown
)

// JobStats are a Jobs queue's measures.
type JobStats struct {
	// Depth is the jobs waiting for a worker; Leased those leased.
	Depth, Leased int
	// OldestAge is the age of the oldest job not done (queued or leased).
	OldestAge time.Duration
	// Capacity bounds Depth+Leased.
	Capacity int
	// Totals since the queue was opened: jobs added, leases given (repeats
	// not counted), leases expired, jobs done, late reports.
	Added, LeasesGiven, Expired, Done, Late uint64
}

// ErrJobsInvalid: a job queue option is out of range.
var ErrJobsInvalid = errors.New("outbox: invalid job queue option")

// DefaultJobCapacity is the capacity of a job queue created with 0.
const DefaultJobCapacity = 100_000

// MaxJobCapacity is the largest capacity a job queue takes.
const MaxJobCapacity = 10_000_000

// jobQueue is the queue's state and rules, shared by both implementations.
// BoltJobs persists each change it makes before it returns, and undoes it
// in memory if the file refused it. Every operation costs what it changes,
// not the size of the queue or of the fleet: a leader serves one job
// request per poll of every pulling worker, and a cost that grew with
// either would make the fleet's polling cost grow with its square.
type jobQueue struct {
	mu       sync.Mutex
	capacity int
	next     uint64               // the number of the last job added
	jobs     map[uint64]*Job      // every job not done
	queued   []uint64             // waiting, ascending
	last     map[string]lastLease // worker -> its last lease
	due      leaseHeap            // lease deadlines, soonest first
	st       JobStats
	// visited counts the jobs expire looked at, for the tests that hold
	// it to the leases that ran out.
	visited uint64
}

// lastLease is the request a worker's last lease answered, and its job.
type lastLease struct {
	request string
	n       uint64
}

func (q *jobQueue) init(capacity int) {
	q.capacity = capacity
	q.jobs = map[uint64]*Job{}
	q.last = map[string]lastLease{}
	q.st.Capacity = capacity
}

func jobNum(id string) (uint64, bool) {
	if len(id) < 2 || id[0] != 'q' {
		return 0, false
	}
	n, err := strconv.ParseUint(id[1:], 10, 64)
	return n, err == nil
}

func (q *jobQueue) enqueue(n uint64) {
	i, _ := slices.BinarySearch(q.queued, n)
	q.queued = slices.Insert(q.queued, i, n)
}

// add queues work; changed lists the jobs written.
func (q *jobQueue) add(now time.Time, work []time.Duration) (ids []string, changed []*Job, err error) {
	if len(q.jobs)+len(work) > q.capacity {
		return nil, nil, ErrFull
	}
	for _, w := range work {
		q.next++
		j := &Job{ID: "q" + strconv.FormatUint(q.next, 10), Work: w, Added: now}
		q.jobs[q.next] = j
		q.queued = append(q.queued, q.next) // q.next is the largest
		ids = append(ids, j.ID)
		changed = append(changed, j)
	}
	q.st.Added += uint64(len(work))
	return ids, changed, nil
}

func (q *jobQueue) lease(worker, request string, now time.Time, lease time.Duration) (j Job, ok, repeat bool, changed *Job) {
	if l, had := q.last[worker]; had && l.request == request {
		// Answered already: the same job again while the worker holds
		// it, and nothing once it is done or expired.
		if p := q.jobs[l.n]; p != nil && p.Worker == worker && p.Request == request {
			return *p, true, true, nil
		}
		return Job{}, false, false, nil
	}
	if len(q.queued) == 0 {
		return Job{}, false, false, nil
	}
	n := q.queued[0]
	q.queued = q.queued[1:]
	p := q.jobs[n]
	p.Worker, p.Request, p.Until = worker, request, now.Add(lease)
	p.Leases++
	q.due.push(leaseDue{until: p.Until, n: n})
	q.last[worker] = lastLease{request: request, n: n}
	q.st.LeasesGiven++
	return *p, true, false, p
}

// complete takes worker's report that id is done; p is the job that
// left the queue (nil: none did), wasQueued whether it was waiting.
func (q *jobQueue) complete(worker, id string) (o JobOutcome, p *Job, wasQueued bool) {
	n, ok := jobNum(id)
	p = q.jobs[n]
	if !ok || p == nil {
		return JobUnknown, nil, false
	}
	switch p.Worker {
	case worker:
	case "": // expired, not leased since: the work is done all the same
		i, _ := slices.BinarySearch(q.queued, n)
		q.queued = slices.Delete(q.queued, i, i+1)
		wasQueued = true
	default:
		q.st.Late++
		return JobLate, nil, false
	}
	// Its deadline stays in q.due until it comes up, and is passed over
	// then: the job is gone.
	delete(q.jobs, n)
	q.st.Done++
	return JobDone, p, wasQueued
}

// expire puts the jobs whose lease ended at or before now back in the
// queue. It looks only at the deadlines that came up (q.due), so a poll
// that finds none costs nothing. changed lists the jobs written; was
// holds each one's lease as it was, for undo.
func (q *jobQueue) expire(now time.Time) (changed []*Job, was []Job) {
	var back []uint64
	for len(q.due) > 0 && !now.Before(q.due[0].until) {
		d := q.due.pop()
		q.visited++
		p := q.jobs[d.n]
		if p == nil {
			continue // done since
		}
		// A job leased again since has a deadline of its own in q.due.
		if p.Worker != "" && !now.Before(p.Until) {
			was = append(was, *p)
			p.Worker, p.Request, p.Until = "", "", time.Time{}
			back = append(back, d.n)
			changed = append(changed, p)
		}
	}
	q.enqueueAll(back)
	q.st.Expired += uint64(len(changed))
	return changed, was
}

// enqueueAll puts jobs back in the queue at their places: one merge
// however many come back at once.
func (q *jobQueue) enqueueAll(ns []uint64) {
	switch len(ns) {
	case 0:
		return
	case 1:
		q.enqueue(ns[0])
		return
	}
	slices.Sort(ns)
	merged := make([]uint64, 0, len(q.queued)+len(ns))
	i, k := 0, 0
	for i < len(q.queued) && k < len(ns) {
		if q.queued[i] < ns[k] {
			merged = append(merged, q.queued[i])
			i++
		} else {
			merged = append(merged, ns[k])
			k++
		}
	}
	merged = append(merged, q.queued[i:]...)
	q.queued = append(merged, ns[k:]...)
}

func (q *jobQueue) stats(now time.Time) JobStats {
	st := q.st
	st.Depth = len(q.queued)
	st.Leased = len(q.jobs) - st.Depth
	var oldest *Job
	for _, p := range q.jobs { // jobs not done are few: a queue, not a log
		if oldest == nil || p.Added.Before(oldest.Added) {
			oldest = p
		}
	}
	if oldest != nil {
		st.OldestAge = max(now.Sub(oldest.Added), 0)
	}
	return st
}

// MemoryJobs is the in-memory Jobs: lost when the process ends.
type MemoryJobs struct{ q jobQueue }

// NewMemoryJobs returns an empty queue for capacity jobs (0:
// DefaultJobCapacity; above MaxJobCapacity or below 0: ErrJobsInvalid).
func NewMemoryJobs(capacity int) (*MemoryJobs, error) {
	c, err := jobCapacity(capacity)
	if err != nil {
		return nil, err
	}
	m := &MemoryJobs{}
	m.q.init(c)
	return m, nil
}

func jobCapacity(c int) (int, error) {
	switch {
	case c == 0:
		return DefaultJobCapacity, nil
	case c < 0 || c > MaxJobCapacity:
		return 0, errors.Join(ErrJobsInvalid, errors.New("capacity must be 1 to 10,000,000 (0: 100,000)"))
	}
	return c, nil
}

// Add implements Jobs.
func (m *MemoryJobs) Add(ctx context.Context, now time.Time, work ...time.Duration) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	ids, _, err := m.q.add(now, work)
	return ids, err
}

// Lease implements Jobs.
func (m *MemoryJobs) Lease(ctx context.Context, worker, request string, now time.Time, lease time.Duration) (Job, bool, bool, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, false, false, err
	}
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	j, ok, repeat, _ := m.q.lease(worker, request, now, lease)
	return j, ok, repeat, nil
}

// Complete implements Jobs.
func (m *MemoryJobs) Complete(ctx context.Context, worker, id string) (JobOutcome, error) {
	if err := ctx.Err(); err != nil {
		return JobUnknown, err
	}
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	o, _, _ := m.q.complete(worker, id)
	return o, nil
}

// Expire implements Jobs.
func (m *MemoryJobs) Expire(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	changed, _ := m.q.expire(now)
	return len(changed), nil
}

// Stats implements Jobs.
func (m *MemoryJobs) Stats(now time.Time) JobStats {
	m.q.mu.Lock()
	defer m.q.mu.Unlock()
	return m.q.stats(now)
}
