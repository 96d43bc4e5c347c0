package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// drain is the quiet period after the timeline: telemetry stops (the load
// is over; heartbeats go on), every worker is healed (and the disconnected
// ones reconnected), each coming back by its own reconnect policy, and the
// run waits — at most sc.Drain of simulated time — until nothing is left to
// deliver (busy says what still is). Only then are the counts final enough
// to balance. A drain that runs out of time is a warning; the balance then
// counts what is still queued.
func (r *Runner) drain(ctx context.Context) {
	r.setPhase(result.PhaseDraining)
	r.record("event", "drain: every worker healed; waiting until nothing is left to deliver", 0)
	start := r.simNow()
	for _, id := range r.cutGateways() {
		r.healGateway(id)
		r.settle(ctx)
	}
	for i, w := range r.workers {
		// The load is over: no new telemetry, so what the workers stored
		// can drain (heartbeats go on: they coalesce, they do not pile up).
		_ = w.SetTelemetry(0)
		r.heal(i)
		if r.disc[i].Swap(false) {
			w.Reconnect()
		}
		r.settle(ctx)
	}
	deadline := r.simNow() + r.sc.Drain.D()
	poll := min(r.sc.SampleEvery.D(), time.Second)
	for {
		why := r.busy()
		if why == "" {
			r.record("event", "drain: done, nothing left to deliver after "+fmtDur(r.simNow()-start), 0)
			return
		}
		left := deadline - r.simNow()
		if left <= 0 {
			r.warnf("drain timed out: still %s after %v (simulated): counting as it stands", why, r.sc.Drain)
			return
		}
		if clock.Sleep(ctx, r.own, min(poll, left)) != nil {
			return
		}
	}
}

// busy says what the system is still doing, or "" when it is quiet: the
// leader serving with an empty outbox (dead letters apart) and an empty
// mailbox, no deploy still enqueueing waves, every worker online with an
// empty mailbox and local outbox and no message to the leader unanswered,
// and the leader seeing every worker online. An unanswered message may be
// in no queue either side can see — on its way through the broker — so
// a worker's open asks count as much as its queues.
func (r *Runner) busy() string {
	lr, _ := r.current()
	if lr == nil {
		return "no leader serving"
	}
	if why := leaderBusy(lr); why != "" {
		return why
	}
	if n := r.deploysN.Load(); n > 0 {
		return fmt.Sprintf("%d deploys enqueueing waves", n)
	}
	offline, queued, stored, asking, syncing := 0, 0, 0, 0, 0
	for _, w := range r.workers {
		s := w.State()
		if !s.Online {
			offline++
		}
		queued += s.Depth
		if s.Busy {
			queued++
		}
		stored += s.Stored
		asking += s.Asking
		if s.SyncDue {
			syncing++
		}
	}
	switch {
	case offline > 0:
		return fmt.Sprintf("%d workers offline", offline)
	case queued == 0 && stored == 0 && asking == 0 && syncing == 0:
		// A worker whose connection went silent and was healed thinks it
		// is online until its keepalive fails; the leader, told by the
		// broker's will, knows better.
		if on := lr.l.Online(); on < len(r.workers) {
			return fmt.Sprintf("the leader sees %d of %d workers online", on, len(r.workers))
		}
	case queued > 0:
		return fmt.Sprintf("%d commands queued or in service at workers", queued)
	case stored > 0:
		return fmt.Sprintf("%d messages in workers' local outboxes", stored)
	case asking > 0:
		return fmt.Sprintf("%d messages from workers awaiting the leader's answer", asking)
	case syncing > 0:
		return fmt.Sprintf("%d workers yet to send a sync request, or waiting to retry one", syncing)
	}
	// Again, after the workers: a message that left a worker while they
	// were read (an ask answered, so no longer counted there) is in the
	// leader's mailbox now, unless it was served. A command is read in
	// the other order by the first look: one the outbox no longer held
	// was acked, so its worker had queued it.
	return leaderBusy(lr)
}

// leaderBusy says what the leader lr still holds, or "".
func leaderBusy(lr *leaderRun) string {
	if d := lr.st.Stats().Depth; d > 0 {
		return fmt.Sprintf("%d commands in the leader's outbox", d)
	}
	if d := lr.l.Stats().Mailbox.Depth; d > 0 {
		return fmt.Sprintf("%d requests and telemetry waiting in the leader's mailbox", d)
	}
	return ""
}
