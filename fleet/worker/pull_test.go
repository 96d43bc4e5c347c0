package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// nextPull returns the worker's next job request, checking its report.
func (r *rig) nextPull(t *testing.T, what, done string) wire.Envelope {
	t.Helper()
	for {
		env := r.next(t, what)
		if env.Kind != wire.KindRequest {
			continue
		}
		var rq wire.Request
		if err := env.BodyInto(&rq); err != nil || rq.What != wire.RequestJob || rq.Done != done {
			t.Fatalf("%s: got %+v (%v), want a job request reporting %q done", what, rq, err, done)
		}
		return env
	}
}

func (r *rig) giveJob(t *testing.T, ref, id string, lease time.Duration) {
	t.Helper()
	r.reply(t, wire.Envelope{Kind: wire.KindReply, Ref: ref, Result: wire.ResultOK, Key: id, Seq: 1, SentMs: r.clk.Now().UnixMilli(),
		Body: wire.Body(wire.Job{ID: id, LeaseMs: lease.Milliseconds()})})
}

// TestPullLoop: a pulling worker asks for one job at a time, reports the
// one it finished with its next request, waits out a drained answer's
// retry time (its own interval when that is longer), asks again with the
// same id when an answer never comes (a stranded wait), and applies a job
// handed out again once only.
func TestPullLoop(t *testing.T) {
	var applied atomic.Int64
	cfg := worker.Config{Service: dist.Const(time.Microsecond), Pull: &worker.Pull{Interval: time.Second, Timeout: 2 * time.Second},
		OnJob: func(_, id string) { applied.Add(1) }}
	bothDrivers(t, func(t *testing.T, drv driver) {
		applied.Store(0)
		r := startRig(t, drv, cfg)
		p1 := r.nextPull(t, "the first job request", "")
		r.giveJob(t, p1.ID, "q1", 10*time.Second)
		p2 := r.nextPull(t, "the request after q1", "q1")
		r.reply(t, wire.Envelope{Kind: wire.KindReply, Ref: p2.ID, Result: wire.ResultDrained, RetryAfterMs: 500})
		waitUntil(func() bool { return r.w.Stats().PullsDrained == 1 })
		// The next ask is armed for the interval (1s), not the retry time
		// (500ms): nothing is due before it.
		drained := r.clk.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.clk.WaitDue(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		if next, _ := r.clk.NextDeadline(); next.Sub(drained) != time.Second {
			t.Fatalf("the next ask is due %v after drained, want the interval, 1s", next.Sub(drained))
		}
		r.clk.Advance(999 * time.Millisecond)
		if n := len(r.up); n != 0 {
			t.Fatalf("asked again %v after drained, before its interval", 999*time.Millisecond)
		}
		r.clk.Advance(time.Millisecond)
		p3 := r.nextPull(t, "the request after the interval", "")
		r.clk.Advance(2 * time.Second) // no answer: stranded
		if again := r.nextPull(t, "the request asked again", ""); again.ID != p3.ID {
			t.Fatalf("asked again as %s, want the same id %s", again.ID, p3.ID)
		}
		// The leader hands q1 out again (its report was lost, say).
		r.giveJob(t, p3.ID, "q1", 10*time.Second)
		r.nextPull(t, "the request after q1 again", "q1")
		s := r.w.Stats()
		if s.JobsPulled != 2 || s.Duplicates != 1 || s.StrandedWaits != 1 || applied.Load() != 1 {
			t.Fatalf("pulled %d, duplicates %d, stranded %d, applied %d; want 2, 1, 1, 1", s.JobsPulled, s.Duplicates, s.StrandedWaits, applied.Load())
		}
	})
}

// TestPullAbandonsAfterLease: a pulled job that finishes after its lease
// ran out is not applied, nor reported done.
func TestPullAbandonsAfterLease(t *testing.T) {
	cfg := worker.Config{Service: dist.Const(5 * time.Second), Pull: &worker.Pull{Interval: time.Second}}
	r := startRig(t, drivers[0], cfg)
	p1 := r.nextPull(t, "the first job request", "")
	r.giveJob(t, p1.ID, "q1", 2*time.Second)
	waitUntil(func() bool { return r.w.State().Busy })
	r.clk.Advance(5 * time.Second)
	r.nextPull(t, "the request after the abandoned job", "")
	if s := r.w.Stats(); s.JobsAbandoned != 1 || s.Jobs != 0 {
		t.Fatalf("abandoned %d, applied %d; want 1 and 0", s.JobsAbandoned, s.Jobs)
	}
}

// TestPullStrandedRetryJitters: a job request that got no answer is asked
// again (same id) after a wait drawn from the poll jitter and the
// worker's seed, not at the instant it timed out: after a leader's
// restart the requests its crash lost all time out together, and the
// fleet must not ask again in one instant.
func TestPullStrandedRetryJitters(t *testing.T) {
	const timeout, jitter = 2 * time.Second, time.Second
	waits := map[time.Duration]bool{}
	for seed := range uint64(3) {
		cfg := worker.Config{Seed: seed + 1, Service: dist.Const(time.Microsecond),
			Pull: &worker.Pull{Interval: time.Second, Jitter: jitter, Timeout: timeout}}
		r := startRig(t, drivers[0], cfg)
		p1 := r.nextPull(t, "the first job request", "")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.clk.WaitDue(ctx, timeout); err != nil {
			t.Fatal(err)
		}
		r.clk.Advance(timeout) // no answer: stranded
		waitUntil(func() bool { return r.w.Stats().StrandedWaits == 1 })
		if err := r.clk.WaitDue(ctx, jitter); err != nil {
			t.Fatalf("seed %d: no retry armed within the jitter after the timeout: %v", cfg.Seed, err)
		}
		next, _ := r.clk.NextDeadline()
		wait := next.Sub(r.clk.Now())
		if wait <= 0 || wait >= jitter || len(r.up) != 0 {
			t.Fatalf("seed %d: asked again %v after the timeout (%d sent already), want within (0, %v)", cfg.Seed, wait, len(r.up), jitter)
		}
		waits[wait] = true
		r.clk.Advance(wait)
		if again := r.nextPull(t, "the request asked again", ""); again.ID != p1.ID {
			t.Fatalf("asked again as %s, want the same id %s", again.ID, p1.ID)
		}
	}
	if len(waits) < 2 {
		t.Fatalf("three seeds waited %v: the same wait, not a random one", waits)
	}
}
