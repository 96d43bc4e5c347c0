package worker

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Pool runs many workers in one process, and the gateways that carry the
// workers whose Config.Gateway names one.
type Pool struct {
	workers  []*Worker
	byID     map[string]*Worker
	gateways []*Gateway
	gwByID   map[string]*Gateway
	clk      clock.Clock
	ramp     time.Duration
	loops    []*loop
	dialing  int // at most this many workers in their first connect; 0: no limit
}

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Clock paces the connect ramp. Default: wall.
	Clock clock.Clock
	// Ramp spaces the workers' starts (on Clock): 0 starts all at once —
	// which is itself a thundering herd on the broker's CONNECT path.
	Ramp time.Duration
	// Gateways opens the sessions of the pool's gateways. Default: the
	// pool's Dialer, if it is a GatewayDialer (MQTTDialer is).
	Gateways GatewayDialer
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

// NewPool builds one worker per config, all dialing through dial but
// those behind a gateway (Config.Gateway), which dial through it. The pool
// builds one gateway per id its workers name: its range is its devices'
// common id prefix and their lowest to highest number (w-{0..9} for w-0000
// to w-0009), and its reconnect backoff, keepalive, clock, topics and
// logger are its first device's.
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
	p := &Pool{byID: make(map[string]*Worker, len(cfgs)), gwByID: map[string]*Gateway{}, clk: o.Clock, ramp: o.Ramp, dialing: o.FirstDials}
	if err := p.buildGateways(cfgs, dial, o); err != nil {
		return nil, err
	}
	// A gateway's devices share a loop, as they share its session: what
	// holds up one gateway (its session's writes) holds up no other. A
	// device reading a clock of its own gets a loop of its own, whose
	// timer runs on that clock.
	type loopKey struct {
		gateway string
		clk     clock.Clock
	}
	loops := map[loopKey]*loop{}
	for _, c := range cfgs {
		if _, dup := p.byID[c.ID]; dup {
			return nil, fmt.Errorf("worker pool: duplicate worker id %q", c.ID)
		}
		d, lp := dial, (*loop)(nil)
		if c.Gateway != "" {
			d = p.gwByID[c.Gateway]
			clk := c.Clock
			if clk == nil {
				clk = clock.Real{}
			}
			k := loopKey{c.Gateway, clk}
			if !reflect.TypeOf(clk).Comparable() { // cannot key a map: the gateway's first loop
				k.clk = nil
			}
			if lp = loops[k]; lp == nil {
				lp = newLoop(clk)
				loops[k] = lp
				p.loops = append(p.loops, lp)
			}
		}
		w, err := newWorker(c, d, lp)
		if err != nil {
			return nil, err
		}
		p.workers = append(p.workers, w)
		p.byID[c.ID] = w
	}
	for _, g := range p.gateways {
		if _, dup := p.byID[g.ID()]; dup {
			return nil, fmt.Errorf("worker pool: gateway %q has the id of a worker; both are MQTT client ids and must differ", g.ID())
		}
	}
	return p, nil
}

// Run starts the gateways and, once each has made its first connection
// attempt, every worker (spaced by the ramp): a worker with a session of
// its own on a goroutine of its own, a device behind a gateway on its
// gateway's loop, one goroutine for all of them (see loop). When ctx ends
// it waits for the workers to stop, then stops the gateways, and returns.
func (p *Pool) Run(ctx context.Context) error {
	gctx, stopGateways := context.WithCancel(context.WithoutCancel(ctx))
	var gws sync.WaitGroup
	defer gws.Wait()
	defer stopGateways()
	// On a virtual clock the gateways come up one at a time, each once
	// the one before has settled, as the workers do below; elsewhere all
	// at once (one that cannot reach its broker holds up no other).
	oneByOne := clock.Settles(p.clk)
	for _, g := range p.gateways {
		gws.Go(func() { _ = g.Run(gctx) })
		if oneByOne && (p.ready(ctx, g) != nil || clock.Settle(ctx, p.clk) != nil) {
			return nil
		}
	}
	for _, g := range p.gateways {
		if p.ready(ctx, g) != nil {
			return nil
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, l := range p.loops {
		wg.Go(func() { _ = l.Run(ctx) })
	}
	var slots chan struct{}
	if p.dialing > 0 {
		slots = make(chan struct{}, p.dialing)
	}
	t0 := p.clk.Now()
	for i, w := range p.workers {
		if i > 0 && p.ramp > 0 {
			// Worker i starts i ramps after the first, not a ramp after
			// worker i-1 started: a sleep lasts longer than a short ramp
			// (a millisecond or more on a loaded machine, where 200k
			// workers over 30 s are 150 µs apart), and those that fell
			// due meanwhile start at once.
			if d := t0.Add(time.Duration(i) * p.ramp).Sub(p.clk.Now()); d > 0 {
				if clock.Sleep(ctx, p.clk, d) != nil {
					return nil
				}
			} else if ctx.Err() != nil {
				return nil
			}
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			// A device on a loop frees its slot when the broker has taken
			// its online (it does not wait for it itself); a worker of its
			// own after its first event, its first connection attempt.
			w.started = func() { <-slots }
		}
		if w.lp != nil {
			w.lp.start(w)
		} else {
			wg.Go(func() { _ = w.Run(ctx) })
		}
		// On a simulation's virtual clock, each start has run its course
		// (the worker's first connect, its sync request and what they set
		// off) before the next: the fleet comes up the same way on every
		// run. Elsewhere this returns at once.
		if clock.Settle(ctx, p.clk) != nil {
			return nil
		}
	}
	<-ctx.Done()
	return nil
}

// ready waits until g has made its first connection attempt, or ctx ends.
func (p *Pool) ready(ctx context.Context, g *Gateway) error {
	select {
	case <-g.Ready():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Workers returns the workers in creation order.
func (p *Pool) Workers() []*Worker { return p.workers }

// Get returns the worker with id, or nil.
func (p *Pool) Get(id string) *Worker { return p.byID[id] }

// Gateways returns the gateways in the order their first device appears.
func (p *Pool) Gateways() []*Gateway { return p.gateways }

// Gateway returns the gateway with id, or nil.
func (p *Pool) Gateway(id string) *Gateway { return p.gwByID[id] }

// PoolStats sums the workers' stats.
type PoolStats struct {
	Workers, Online, Busy int
	// Gateways is how many gateways the pool runs, GatewaysOnline how many
	// of them are connected now.
	Gateways, GatewaysOnline int
	// GatewayLoginsRefused sums the gateways' refused logins,
	// GatewaySubscribesRefused their devices' refused subscriptions.
	GatewayLoginsRefused, GatewaySubscribesRefused uint64
	ByVersion                                      map[string]int // workers per applied version
	Total                                          Stats          // counters summed over the workers
}

// Stats sums every worker's counters. It walks all workers: call it a few
// times a second at most.
func (p *Pool) Stats() PoolStats {
	ps := PoolStats{Workers: len(p.workers), ByVersion: map[string]int{}}
	t := &ps.Total
	t.AppliedVersions = map[string]int{}
	ps.Gateways = len(p.gateways)
	for _, g := range p.gateways {
		gs := g.Stats()
		if gs.Online {
			ps.GatewaysOnline++
		}
		ps.GatewayLoginsRefused += gs.LoginsRefused
		ps.GatewaySubscribesRefused += gs.SubscribesRefused
	}
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
		t.DeliveriesDropped += s.DeliveriesDropped
		t.MailboxDepth += s.MailboxDepth
		t.Local.Depth += s.Local.Depth
	}
	return ps
}
