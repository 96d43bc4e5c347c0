package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Pool runs many workers in one process.
type Pool struct {
	workers []*Worker
	byID    map[string]*Worker
	clk     clock.Clock
	ramp    time.Duration
	dialing int // at most this many workers in their first connect; 0: no limit
}

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Clock paces the connect ramp. Default: wall.
	Clock clock.Clock
	// Ramp spaces the workers' starts (on Clock): 0 starts all at once —
	// which is itself a thundering herd on the broker's CONNECT path.
	Ramp time.Duration
	// FirstDials is how many workers may be making their first connection
	// attempt at once; the next starts when one has connected (or failed).
	// Default 64. Negative: no limit, every worker dials as it starts. A
	// broker takes CONNECTs fastest a few dozen at a time; tens of
	// thousands at once run into their connect timeouts and retry, and a
	// large fleet does not come up (docs/BENCHMARKS.md, Idle fleet).
	// Reconnects are never limited: a reconnect storm stays one.
	FirstDials int
}

// DefaultFirstDials is PoolOptions.FirstDials's default.
const DefaultFirstDials = 64

// NewPool builds one worker per config, all dialing through dial.
func NewPool(cfgs []Config, dial Dialer, o PoolOptions) (*Pool, error) {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	switch {
	case o.FirstDials == 0:
		o.FirstDials = DefaultFirstDials
	case o.FirstDials < 0:
		o.FirstDials = 0
	}
	p := &Pool{byID: make(map[string]*Worker, len(cfgs)), clk: o.Clock, ramp: o.Ramp, dialing: o.FirstDials}
	for _, c := range cfgs {
		if _, dup := p.byID[c.ID]; dup {
			return nil, fmt.Errorf("worker pool: duplicate worker id %q", c.ID)
		}
		w, err := New(c, dial)
		if err != nil {
			return nil, err
		}
		p.workers = append(p.workers, w)
		p.byID[c.ID] = w
	}
	return p, nil
}

// Run starts every worker (spaced by the ramp) and returns when ctx has
// ended and every worker has stopped.
func (p *Pool) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	var slots chan struct{}
	if p.dialing > 0 {
		slots = make(chan struct{}, p.dialing)
	}
	for i, w := range p.workers {
		if i > 0 && p.ramp > 0 {
			if clock.Sleep(ctx, p.clk, p.ramp) != nil {
				return nil
			}
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			w.started = func() { <-slots }
		}
		wg.Go(func() { _ = w.Run(ctx) })
	}
	<-ctx.Done()
	return nil
}

// Workers returns the workers in creation order.
func (p *Pool) Workers() []*Worker { return p.workers }

// Get returns the worker with id, or nil.
func (p *Pool) Get(id string) *Worker { return p.byID[id] }

// PoolStats sums the workers' stats.
type PoolStats struct {
	Workers, Online, Busy int
	ByVersion             map[string]int // workers per applied version
	Total                 Stats          // counters summed over the workers
}

// Stats sums every worker's counters. It walks all workers: call it a few
// times a second at most.
func (p *Pool) Stats() PoolStats {
	ps := PoolStats{Workers: len(p.workers), ByVersion: map[string]int{}}
	t := &ps.Total
	t.AppliedVersions = map[string]int{}
	for _, w := range p.workers {
		s := w.Stats()
		if s.Online {
			ps.Online++
		}
		if s.Busy {
			ps.Busy++
		}
		ps.ByVersion[s.Version]++
		for v, n := range s.AppliedVersions {
			t.AppliedVersions[v] += n
		}
		t.ConnectAttempts += s.ConnectAttempts
		t.Connects += s.Connects
		t.Reconnects += s.Reconnects
		t.ConnectionsLost += s.ConnectionsLost
		t.Crashes += s.Crashes
		t.AckedOK += s.AckedOK
		t.AckedFull += s.AckedFull
		t.Malformed += s.Malformed
		t.Refused += s.Refused
		t.Applied += s.Applied
		t.Duplicates += s.Duplicates
		t.Stale += s.Stale
		t.Reboots += s.Reboots
		t.CommandsLostInReboot += s.CommandsLostInReboot
		t.TelemetryLostInReboot += s.TelemetryLostInReboot
		t.HeartbeatsLostInReboot += s.HeartbeatsLostInReboot
		t.Expired += s.Expired
		t.Jobs += s.Jobs
		t.Pings += s.Pings
		t.SyncSent += s.SyncSent
		t.SyncOK += s.SyncOK
		t.SyncFull += s.SyncFull
		t.SyncTimeouts += s.SyncTimeouts
		t.SyncRejected += s.SyncRejected
		t.HeartbeatsSent += s.HeartbeatsSent
		t.HeartbeatsStored += s.HeartbeatsStored
		t.HeartbeatsCoalesced += s.HeartbeatsCoalesced
		t.HeartbeatsDropped += s.HeartbeatsDropped
		t.TelemetryGenerated += s.TelemetryGenerated
		t.TelemetryDirect += s.TelemetryDirect
		t.TelemetryStored += s.TelemetryStored
		t.TelemetryForwarded += s.TelemetryForwarded
		t.TelemetryRejected += s.TelemetryRejected
		t.TelemetryDropped += s.TelemetryDropped
		t.TelemetryQueued += s.TelemetryQueued
		t.LateReplies += s.LateReplies
		t.SendErrors += s.SendErrors
		t.MailboxDepth += s.MailboxDepth
		t.Local.Depth += s.Local.Depth
	}
	return ps
}
