package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// startSampler takes a Sample every sc.SampleEvery of simulated time, from
// time 0 until the run stops it, measuring how late each tick fires and
// how far the service loops and deliveries fell behind since the last (on
// the virtual clock, not at all unless something waited on the wall
// clock). A tick that comes too late to be useful is skipped, not made
// up.
func (r *Runner) startSampler() *ownedLoop {
	every := r.sc.SampleEvery.D()
	return goLoop(func(ctx context.Context) {
		for k := time.Duration(0); ; {
			// A sampler whose samples take longer than sample_every
			// (a fast speed on a slow machine) never sleeps: it must
			// still stop when told.
			if ctx.Err() != nil {
				return
			}
			at := k * every
			if wait := r.untilSim(at); wait > 0 {
				if clock.Sleep(ctx, r.own, wait) != nil {
					return
				}
				continue
			}
			now := r.simNow()
			r.observeLag(now-at, "a sample tick")
			r.observeLoops(every)
			r.takeSample(now)
			k = now/every + 1
		}
	})
}

// leaderTotals sums the leader's counters over its instances.
type leaderTotals struct {
	all []leader.Stats // every instance, oldest first
	cur *leader.Stats  // the serving instance's, if one serves
}

// gather reads every leader instance's stats once: the stopped ones'
// final counters and the live ones' current ones. newest is the outbox as
// the newest instance sees it (a stopping one's, while no leader serves),
// which is what the file holds.
func (r *Runner) gather() (lt leaderTotals, newest outbox.Stats) {
	past, live, up := r.liveLeaders()
	for _, lr := range past {
		lt.all = append(lt.all, lr.stats(&r.lead))
	}
	for _, lr := range live {
		s := lr.stats(&r.lead)
		lt.all = append(lt.all, s)
		r.limits.observe(lr.n, s.Relay.Partitions)
	}
	if n := len(lt.all); n > 0 {
		newest = lt.all[n-1].Outbox
		if up {
			lt.cur = &lt.all[n-1]
		}
	}
	return lt, newest
}

func (lt leaderTotals) sum(f func(*leader.Stats) uint64) uint64 {
	var n uint64
	for i := range lt.all {
		n += f(&lt.all[i])
	}
	return n
}

func (lt leaderTotals) maxOf(f func(*leader.Stats) int) int {
	n := 0
	for i := range lt.all {
		n = max(n, f(&lt.all[i]))
	}
	return n
}

// takeSample records the fleet at simulated time now.
func (r *Runner) takeSample(now time.Duration) {
	lt, _ := r.gather()
	cum, interval := r.waitP99()
	s := LeaderSample(simSec(now), lt.all, lt.cur != nil, cum)
	s.LeaderWaitP99Interval = simSec(interval)
	r.mu.Lock()
	target := r.target
	r.mu.Unlock()
	for _, w := range r.workers {
		st := w.State()
		if st.Online {
			s.Online++
		}
		if st.Busy {
			s.Busy++
		}
		if target != "" && st.Version == target {
			s.AtTarget++
		}
		s.WorkerDepth += st.Depth
		s.WorkerFull += st.AckedFull
	}
	r.mu.Lock()
	if n := len(r.samples); n > 0 && r.samples[n-1].T >= s.T {
		// The run's last sample, at the moment of the sampler's last
		// tick: the later reading replaces it, in a new array, since
		// snapshots share the old one with their readers.
		r.samples = append(r.samples[:n-1:n-1], s)
	} else {
		r.samples = append(r.samples, s)
	}
	var pending []*deployRun
	for _, d := range r.deploys {
		if !d.done {
			pending = append(pending, d)
		}
	}
	r.mu.Unlock()
	// A deploy is done once every target runs its version. Reading the
	// targets again, and only for deploys not yet done (stopping at the
	// first behind), costs less than keeping every worker's state of every
	// sample: at 200k workers that was 16 MB a sample.
	var news []string
	for _, d := range pending {
		if r.allAt(d.targets, d.version) {
			r.mu.Lock()
			d.done, d.doneAt = true, now
			r.mu.Unlock()
			news = append(news, fmt.Sprintf("deploy %s: every target runs it, %s after it started", d.version, fmtDur(now-d.at)))
		}
	}
	r.mu.Lock()
	refs := r.waveRefs()
	r.mu.Unlock()
	for _, text := range append(r.waveNews(refs), news...) {
		r.record("event", text, 0)
	}
}

// waitP99 is the leader mailbox wait's p99 over the run so far and over
// the waits since the last call (from the histogram's difference).
func (r *Runner) waitP99() (cum, interval time.Duration) {
	wait := r.leaderWait.Snapshot()
	r.sampleMu.Lock()
	defer r.sampleMu.Unlock()
	interval = wait.Since(r.lastWait).Quantile(0.99)
	r.lastWait = wait
	return wait.Quantile(0.99), interval
}

// allAt reports whether every target worker runs version now.
func (r *Runner) allAt(targets []int, version string) bool {
	for _, i := range targets {
		if r.workers[i].State().Version != version {
			return false
		}
	}
	return true
}

// limitHistory is how many limit moves each relay partition keeps between
// two samples; more moves than that in one sample interval are counted
// as a gap (a warning), not guessed.
const limitHistory = 4096

// limitTracker follows the relay's AIMD limits through their histories,
// across leader restarts: the lowest and highest any partition reached.
// How often a limit fell is the limiters' own count
// (outbox.PartitionStats.Decreases): a history sample can hide a fall.
type limitTracker struct {
	mu                sync.Mutex
	initial, min, max int
	seen              map[int][]seenLimit // per leader instance, per partition
	gaps              int
}

type seenLimit struct {
	s  outbox.LimitSample
	ok bool
}

func (t *limitTracker) init(initial int) {
	t.initial, t.min, t.max = initial, initial, initial
	t.seen = make(map[int][]seenLimit)
}

// observe folds in the moves of instance inst's partitions since the last
// call.
func (t *limitTracker) observe(inst int, parts []outbox.PartitionStats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.seen[inst]
	if len(last) != len(parts) {
		last = make([]seenLimit, len(parts))
		t.seen[inst] = last
	}
	for i, p := range parts {
		h := p.LimitHistory
		start := 0
		if last[i].ok {
			j := len(h) - 1
			for j >= 0 && h[j] != last[i].s {
				j--
			}
			start = j + 1
			if j < 0 && len(h) >= limitHistory {
				t.gaps++ // the ring wrapped past what we saw last
			}
		}
		for _, s := range h[start:] {
			t.min, t.max = min(t.min, s.Limit), max(t.max, s.Limit)
			last[i] = seenLimit{s: s, ok: true}
		}
		t.min, t.max = min(t.min, p.Limit), max(t.max, p.Limit)
	}
}

func (t *limitTracker) result() (lo, hi, gaps int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.min, t.max, t.gaps
}

// LeaderSample is a Sample at time t with the fields that come from the
// leader filled in, and the workers' fields left zero. It is the one
// mapping from leader.Stats to a Sample: the runner's sampler and the
// remote dashboard (which reads a leader's stats topic) both use it.
//
// instances are the stats of every leader instance of the run, oldest
// first (one for a remote leader): the counters are summed over them, so
// they keep growing across a restart. serving says the newest instance
// serves now; only then are the gauges (mailbox depth and capacity,
// heartbeats queued, limits, in-flight, the outbox's and the job queue's
// oldest) set, as a
// leader that is down has none. The outbox depth is the newest instance's
// either way: it is what the file holds. waitP99 is the 99th percentile of
// the leader's mailbox wait.
func LeaderSample(t result.Seconds, instances []leader.Stats, serving bool, waitP99 time.Duration) result.Sample {
	lt := leaderTotals{all: instances}
	n := len(instances)
	if serving && n > 0 {
		lt.cur = &instances[n-1]
	}
	s := result.Sample{T: t, LeaderUp: lt.cur != nil}
	s.LeaderAccepted = lt.sum(func(l *leader.Stats) uint64 {
		return l.Mailbox.Offered - l.Mailbox.Rejected() - l.Mailbox.DroppedNewest
	})
	s.LeaderRejected = lt.sum(func(l *leader.Stats) uint64 { return l.Mailbox.Rejected() })
	s.LeaderDropped = lt.sum(func(l *leader.Stats) uint64 { return l.Mailbox.Dropped() })
	s.Delivered = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Delivered })
	s.Backpressure = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Backpressure })
	s.Retries = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Retries })
	s.DeadLettered = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().DeadLettered })
	s.JobRequests = lt.sum(func(l *leader.Stats) uint64 { return l.JobRequests })
	s.JobsDrained = lt.sum(func(l *leader.Stats) uint64 { return l.JobsDrained })
	s.LeaderMaxDepth = lt.maxOf(func(l *leader.Stats) int { return l.Mailbox.MaxDepth })
	s.LeaderWaitP99 = simSec(waitP99)
	if n > 0 {
		s.OutboxDepth = instances[n-1].Outbox.Depth
	}
	if c := lt.cur; c != nil {
		s.LeaderDepth, s.LeaderCapacity = c.Mailbox.Depth, c.Mailbox.Capacity
		s.HeartbeatsQueued = c.Heartbeats.Depth
		s.Limits = make([]int, len(c.Relay.Partitions))
		for i, p := range c.Relay.Partitions {
			s.Limits[i] = p.Limit
			s.InFlight += p.InFlight
		}
		s.OutboxDepth, s.OutboxOldest = c.Outbox.Depth, simSec(c.Outbox.OldestAge)
		s.JobsOldest = simSec(c.Jobs.OldestAge)
	}
	return s
}
