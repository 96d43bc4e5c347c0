package leader

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Defaults of the work-pulling settings (Config).
const (
	DefaultJobLease = 30 * time.Second
	DefaultJobRetry = time.Second
)

// refuseJobRequest returns why a job request from worker is refused, or
// "" if it is not: the leader has no job queue, or the worker is not one
// that may pull. Counted (Stats.JobsRefused) and answered reject.
func (l *Leader) refuseJobRequest(worker string) string {
	switch {
	case l.cfg.Jobs == nil:
		l.c.jobsRefused.Add(1)
		return "this leader has no job queue"
	case l.cfg.JobWorkers != nil && !l.cfg.JobWorkers(worker):
		l.c.jobsRefused.Add(1)
		return fmt.Sprintf("worker %s may not pull jobs from this leader", worker)
	}
	return ""
}

// serveJob answers a job request once the service loop reaches it: first
// the job the worker reports done, then the leases that ran out, then
// exactly one answer: the worker's next job, or drained with a retry time.
// A request the queue answered before (its reply was lost and the worker
// asked again with the same id) gets the same job again.
func (l *Leader) serveJob(ctx context.Context, in inbound, now time.Time) {
	q := l.cfg.Jobs
	ans := wire.Envelope{V: wire.Version, Kind: wire.KindReply, Ref: in.id, Result: wire.ResultOK}
	if in.done != "" {
		switch o, err := q.Complete(ctx, in.worker, in.done); {
		case err != nil:
			l.jobStoreFailed(in.worker, ans, err)
			return
		case o == outbox.JobLate:
			l.cfg.Logger.Debug("late job report", "worker", in.worker, "job", in.done)
		}
	}
	l.expireJobs()
	j, ok, _, err := q.Lease(ctx, in.worker, in.id, now, l.cfg.JobLease)
	if err != nil {
		l.jobStoreFailed(in.worker, ans, err)
		return
	}
	if !ok {
		l.c.jobsDrained.Add(1)
		ans.Result, ans.RetryAfterMs = wire.ResultDrained, l.cfg.JobRetry.Milliseconds()
		l.queueReply(in.worker, ans)
		return
	}
	ans.Key, ans.Seq, ans.SentMs = j.ID, 1, now.UnixMilli()
	ans.Body = wire.Body(wire.Job{ID: j.ID, LeaseMs: j.Until.Sub(now).Milliseconds(), WorkMs: j.Work.Milliseconds()})
	l.queueReply(in.worker, ans)
}

// jobStoreFailed answers a job request the queue could not serve (its
// file failed, or the leader is stopping) with full: the worker asks
// again after the retry time.
func (l *Leader) jobStoreFailed(worker string, ans wire.Envelope, err error) {
	l.cfg.Logger.Warn("job queue", "worker", worker, "err", err)
	ans.Result, ans.RetryAfterMs = wire.ResultFull, l.cfg.JobRetry.Milliseconds()
	l.queueReply(worker, ans)
}

// expireJobs puts the jobs whose lease ran out back in the queue.
func (l *Leader) expireJobs() {
	if _, err := l.cfg.Jobs.Expire(contextBackground, l.clk.Now()); err != nil {
		l.cfg.Logger.Warn("job queue: expire leases", "err", err)
	}
}

// AddJobs queues one job per entry of work (0: the worker's own service
// time) for pulling workers, and returns their ids; ErrNoJobs without a
// job queue, outbox.ErrFull when they do not fit (none is added).
func (l *Leader) AddJobs(ctx context.Context, work ...time.Duration) ([]string, error) {
	if l.cfg.Jobs == nil {
		return nil, ErrNoJobs
	}
	return l.cfg.Jobs.Add(ctx, l.clk.Now(), work...)
}

// ErrNoJobs: the leader was configured without a job queue (Config.Jobs).
var ErrNoJobs = fmt.Errorf("leader: no job queue")

// jobStats is the queue's measures now, zero without a queue.
func (l *Leader) jobStats() outbox.JobStats {
	if l.cfg.Jobs == nil {
		return outbox.JobStats{}
	}
	return l.cfg.Jobs.Stats(l.clk.Now())
}

// SendEach is SendAll with a body of its own for each command (bodies[i]
// to workers[i]): the jobs a scenario assigns to pushing workers, each
// naming its job. One sequence number and one outbox transaction for all.
func (l *Leader) SendEach(ctx context.Context, workers []string, kind wire.Kind, bodies [][]byte) error {
	if len(bodies) != len(workers) {
		return fmt.Errorf("leader: send %d %s commands with %d bodies", len(workers), kind, len(bodies))
	}
	return l.sendMany(ctx, workers, kind, func(i int) []byte { return bodies[i] })
}
