package runner

import (
	"context"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

// windowMark is the run's cumulative counters at one edge of a window.
type windowMark struct {
	at      time.Duration
	leader  result.WindowLeader
	relay   result.WindowRelay
	workers result.WindowWorkers
	wait    stats.HistogramSnapshot // the leader mailbox's wait, since the start
	// The newest leader instance's mailbox high-water mark, and how many
	// instances the run had started: a mark that rose between two edges
	// was reached between them.
	maxDepth, instances int
	// peak is the most the serving leader's mailbox held since the edge
	// before (since it started, at the first edge or after a restart).
	peak int
}

// windowEdges pushes an action at each distinct edge of the windows that
// marks the counters there. They are pushed before the events, so that a
// window starting or ending at an event's time sees the run just before
// the event fires, and windows sharing an edge share its mark.
func (r *Runner) windowEdges(push func(*timelineAction)) {
	seen := map[time.Duration]bool{}
	for i := range r.sc.Windows {
		from, to := r.sc.Windows[i].Span(r.sc)
		for _, at := range [2]time.Duration{from, to} {
			if seen[at] {
				continue
			}
			seen[at] = true
			push(&timelineAction{at: at, mark: true, mustRun: true, text: "window edge", do: func(context.Context, func(*timelineAction)) {
				m := r.windowMark()
				r.mu.Lock()
				if r.marks == nil {
					r.marks = map[time.Duration]*windowMark{}
				}
				r.marks[at] = &m
				r.mu.Unlock()
			}})
		}
	}
}

// windowMark reads every counter a window reports, summed over the
// leader's instances and the workers, as they are now.
func (r *Runner) windowMark() windowMark {
	m := windowMark{at: r.simNow(), wait: r.leaderWait.Snapshot()}
	lt, _ := r.gather()
	sum := lt.sum
	mb := &m.leader.Mailbox
	mb.Offered = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Offered })
	mb.Taken = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Taken })
	mb.Dropped = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Dropped() })
	mb.Rejected = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Rejected() })
	if n := len(lt.all); n > 0 {
		last := lt.all[n-1].Mailbox
		mb.Capacity, mb.Policy, mb.Depth = last.Capacity, last.Policy.String(), last.Depth
		m.maxDepth, m.instances = last.MaxDepth, n
	}
	if lr, _ := r.current(); lr != nil {
		m.peak = lr.l.MailboxPeak()
	}
	m.leader.RequestsServed = sum(func(l *leader.Stats) uint64 { return l.RequestsServed })
	m.leader.AnsweredFull = sum(func(l *leader.Stats) uint64 { return l.AnsweredFull })
	relay := func(f func(outbox.PartitionStats) uint64) uint64 {
		return sum(func(l *leader.Stats) uint64 { return f(l.Relay.Total()) })
	}
	m.relay = result.WindowRelay{
		Delivered:    relay(func(p outbox.PartitionStats) uint64 { return p.Delivered }),
		Backpressure: relay(func(p outbox.PartitionStats) uint64 { return p.Backpressure }),
		Retries:      relay(func(p outbox.PartitionStats) uint64 { return p.Retries }),
		Errors:       relay(func(p outbox.PartitionStats) uint64 { return p.Errors }),
		OfflineSkips: relay(func(p outbox.PartitionStats) uint64 { return p.OfflineSkips }),
	}
	for _, w := range r.workers {
		s := w.Stats()
		m.workers.Connects += s.Connects
		m.workers.SyncSent += s.SyncSent
		m.workers.SyncOK += s.SyncOK
		m.workers.SyncFull += s.SyncFull
		m.workers.AckedFull += s.AckedFull
	}
	return m
}

// windowResults computes each window whose two edges were marked; a window
// the run did not reach the end of is left out.
func (r *Runner) windowResults() map[string]result.WindowResult {
	if len(r.sc.Windows) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]result.WindowResult{}
	for _, w := range r.sc.Windows {
		from, to := w.Span(r.sc)
		a, b := r.marks[from], r.marks[to]
		if a == nil || b == nil {
			continue
		}
		res := result.WindowResult{From: a.at.Seconds(), To: b.at.Seconds(), Relay: b.relay.Minus(a.relay), Workers: b.workers.Minus(a.workers)}
		res.Leader.RequestsServed = b.leader.RequestsServed - a.leader.RequestsServed
		res.Leader.AnsweredFull = b.leader.AnsweredFull - a.leader.AnsweredFull
		am, bm := a.leader.Mailbox, b.leader.Mailbox
		res.Leader.Mailbox = result.MailboxResult{
			Capacity: bm.Capacity, Policy: bm.Policy, Depth: bm.Depth,
			Offered: bm.Offered - am.Offered, Taken: bm.Taken - am.Taken,
			Dropped: bm.Dropped - am.Dropped, Rejected: bm.Rejected - am.Rejected,
			MaxDepth: max(am.Depth, bm.Depth),
			Wait:     quantilesOf(b.wait.Since(a.wait)),
		}
		// The mailbox's own high-water mark where it applies (it rose
		// within the window, or its instance started within it), and the
		// peaks between the edges within it: the most it held, exactly.
		if b.instances != a.instances || b.maxDepth > a.maxDepth {
			res.Leader.Mailbox.MaxDepth = max(res.Leader.Mailbox.MaxDepth, b.maxDepth)
		}
		for _, m := range r.marks {
			if m.at > a.at && m.at <= b.at {
				res.Leader.Mailbox.MaxDepth = max(res.Leader.Mailbox.MaxDepth, m.peak)
			}
		}
		out[w.Name] = res
	}
	return out
}

// eventResults lists the named events with how many workers each selected.
func (r *Runner) eventResults() map[string]result.EventResult {
	var out map[string]result.EventResult
	for _, te := range r.events {
		if te.ev.Name == "" {
			continue
		}
		if out == nil {
			out = map[string]result.EventResult{}
		}
		out[te.ev.Name] = result.EventResult{At: te.at.Seconds(), Workers: len(te.targets)}
	}
	return out
}
