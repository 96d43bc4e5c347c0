package runner

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// jobsRun is the run's jobs (the timeline's jobs events): how they were
// dealt, and which worker applied which, when.
type jobsRun struct {
	r       *Runner
	mu      sync.Mutex
	next    int // the worker index the next job is dealt to
	events  uint64
	pushSeq int
	added   int
	pushed  int
	queued  int
	failed  int               // jobs an event could not add (the queue full, the run ending)
	groupOf map[string]string // worker id -> group
	applied map[string]int    // job id -> workers' applies
	byGroup map[string]int    // group -> jobs applied there
	first   time.Duration     // the first jobs event
	last    time.Duration     // the last apply
}

func (j *jobsRun) init(r *Runner) {
	j.r = r
	j.groupOf = make(map[string]string, len(r.specs))
	for _, ws := range r.specs {
		j.groupOf[ws.ID] = ws.Group
	}
	j.applied, j.byGroup = map[string]int{}, map[string]int{}
}

// done records that worker applied job id (worker.Config.OnJob; on the
// worker's loop).
func (j *jobsRun) done(worker, id string) {
	now := j.r.simNow()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.applied[id]++
	j.byGroup[j.groupOf[worker]]++
	j.last = max(j.last, now)
}

// pulls reports whether a worker of profile p pulls its jobs.
func pulls(p scenario.WorkerProfile) bool {
	return p.Delivery != nil && *p.Delivery == scenario.DeliveryPull
}

// pullers returns which workers pull (leader.Config.JobWorkers).
func (r *Runner) pullers() (func(string) bool, bool) {
	set := map[string]bool{}
	for _, ws := range r.specs {
		if pulls(ws.Profile) {
			set[ws.ID] = true
		}
	}
	return func(w string) bool { return set[w] }, len(set) > 0
}

// openJobs opens the leader's job queue on its store: in the outbox file
// (a bucket of its own) when it is one, in memory otherwise.
func (r *Runner) openJobs(st outbox.Store) (outbox.Jobs, error) {
	if b, ok := st.(*outbox.Bolt); ok {
		return b.OpenJobs(r.sc.Leader.Jobs.Capacity)
	}
	return outbox.NewMemoryJobs(r.sc.Leader.Jobs.Capacity)
}

// addJobs deals an event's jobs round robin over the fleet in index
// order: a pushing worker's share is enqueued for it as job commands, a
// pulling worker's goes to the leader's job queue. In the background,
// through leader crashes, as a deploy is enqueued.
func (r *Runner) addJobs(ev scenario.JobsEvent) {
	j := &r.jobs
	j.mu.Lock()
	j.events++
	rnd := rand.New(rand.NewPCG(r.sc.Seed, 0x10b5+j.events))
	var pullWork []time.Duration
	var pushTo []string
	var pushBodies [][]byte
	count := ev.Jobs(len(r.specs))
	for range count {
		ws := r.specs[j.next%len(r.specs)]
		j.next++
		var work time.Duration
		if ev.Work != nil {
			work = ev.Work.Sample(rnd)
		}
		if pulls(ws.Profile) {
			pullWork = append(pullWork, work)
			continue
		}
		j.pushSeq++
		pushTo = append(pushTo, ws.ID)
		pushBodies = append(pushBodies, wire.Body(wire.Job{ID: "j" + strconv.Itoa(j.pushSeq), WorkMs: work.Milliseconds()}))
	}
	if j.added == 0 {
		j.first = r.simNow()
	}
	j.added += count
	j.mu.Unlock()
	ok := r.goBackground(func(ctx context.Context) {
		err := r.withLeader(ctx, func(lr *leaderRun) error {
			if len(pullWork) > 0 {
				if _, err := lr.l.AddJobs(ctx, pullWork...); err != nil {
					return err
				}
				j.mu.Lock()
				j.queued += len(pullWork)
				j.mu.Unlock()
				pullWork = nil
			}
			if err := lr.l.SendEach(ctx, pushTo, wire.KindJob, pushBodies); err != nil {
				return err
			}
			j.mu.Lock()
			j.pushed += len(pushTo)
			j.mu.Unlock()
			return nil
		})
		if err != nil && ctx.Err() == nil {
			r.warnf("jobs: %d of %d jobs not added: %v", len(pullWork)+len(pushTo), count, err)
			j.mu.Lock()
			j.failed += len(pullWork) + len(pushTo)
			j.mu.Unlock()
		}
	})
	if !ok {
		r.warnf("jobs: the run is ending; nothing added")
	}
}

// jobsResult is the jobs' outcome: from the runner's count of who applied
// what, the workers' pull counters and the leader's queue.
func (r *Runner) jobsResult(lt leaderTotals, ws []worker.Stats, last outbox.JobStats) result.JobsResult {
	j := &r.jobs
	j.mu.Lock()
	defer j.mu.Unlock()
	res := result.JobsResult{
		Added: j.added, Pushed: j.pushed, Queued: j.queued, NotAdded: j.failed,
		Done: len(j.applied), DoneBy: map[string]int{}, Makespan: result.Never,
		Depth: last.Depth, Leased: last.Leased,
	}
	for _, n := range j.applied {
		if n > 1 {
			res.DoneTwice++
		}
	}
	for g, n := range j.byGroup {
		res.DoneBy[g] = n
	}
	switch {
	case res.Added == 0:
		res.Makespan = 0 // no jobs: nothing to wait for
	case res.Done == res.Added:
		res.Makespan = simSec(j.last - j.first)
	}
	res.Lost = res.Added - res.NotAdded - res.Done - res.Depth - res.Leased
	res.HeldMax = map[string]int{}
	for i, s := range ws {
		g := r.groups[i]
		res.HeldMax[g] = max(res.HeldMax[g], s.JobsHeldPeak)
		res.Polls += s.PullsSent
		res.Abandoned += s.JobsAbandoned
		res.StrandedWaits += s.StrandedWaits
	}
	res.Drained = lt.sum(func(l *leader.Stats) uint64 { return l.JobsDrained })
	res.Refused = lt.sum(func(l *leader.Stats) uint64 { return l.JobsRefused })
	res.Leases = lt.sum(func(l *leader.Stats) uint64 { return l.Jobs.LeasesGiven })
	res.Expired = lt.sum(func(l *leader.Stats) uint64 { return l.Jobs.Expired })
	res.OldestAge = simSec(last.OldestAge)
	return res
}
