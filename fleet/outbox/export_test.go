package outbox

// JobsVisited returns how many lease deadlines the Expire calls of j (a
// *MemoryJobs or *BoltJobs) looked at: the work expiring costs.
func JobsVisited(j Jobs) uint64 {
	q := jobQueueOf(j)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.visited
}

// JobsQueued returns the numbers of the jobs waiting in j, in the order
// they are handed out, and the number of lease deadlines it holds.
func JobsQueued(j Jobs) (queued []uint64, due int) {
	q := jobQueueOf(j)
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]uint64(nil), q.queued...), len(q.due)
}

func jobQueueOf(j Jobs) *jobQueue {
	switch j := j.(type) {
	case *MemoryJobs:
		return &j.q
	case *BoltJobs:
		return &j.q
	}
	panic("not a job queue of this package")
}
