package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// leaderState is the leader across its restarts: the instance serving
// now, the one being stopped, and the stopped ones, whose final counters
// the Result sums.
type leaderState struct {
	life sync.Mutex // serialises start and stop, each of which takes a while
	path string

	mu       sync.Mutex // guards the fields below
	cur      *leaderRun // serving; nil while the leader is down
	dying    *leaderRun // being stopped: its counters still count as live
	past     []*leaderRun
	up       chan struct{} // closed while cur is set
	n        int           // instances started
	restarts int
	capacity *int       // set_leader: overrides the spec for later instances too
	service  *dist.Dist // likewise
	// The outbox file as the first instance found it: the balance counts
	// from there, so a file that was not empty does not count as loss.
	depthStart int
	opened     bool
}

// leaderRun is one leader process: its outbox store, session and actor.
type leaderRun struct {
	n      int
	l      *leader.Leader
	st     outbox.Store
	sess   leaderLink
	link   *crashLink
	cancel context.CancelFunc
	done   chan error

	// Set once stopped (guarded by leaderState.mu).
	stopped bool
	final   leader.Stats
	// dead is the dead letters listed at a clean stop (deadOK: listed).
	dead   []outbox.Message
	deadOK bool
}

func (s *leaderState) init() { s.up = make(chan struct{}) }

// limitInitial is the relay limiter's starting limit as the leader will
// use it.
func (r *Runner) limitInitial() int { return r.Limiter().Initial }

// Limiter is the relay's limiter as the scenario sets it, defaults
// filled as the relay fills them (outbox.LimiterDefaults): its strategy
// and bounds (the dashboard names the relay by it).
func (r *Runner) Limiter() flow.LimiterOptions {
	spec := r.sc.Leader.Relay.Limit
	o := outbox.LimiterDefaults(flow.LimiterOptions{Initial: spec.Initial, Min: spec.Min, Max: spec.Max})
	if s, err := spec.Strategy.Flow(); err == nil {
		o.Strategy = s
	}
	return o
}

func (r *Runner) outboxOptions() (outbox.Options, error) {
	o := r.sc.Leader.Outbox
	oo := outbox.Options{
		Clock: r.clk, Partitions: o.Partitions, MaxAttempts: o.MaxAttempts,
		LeaseTimeout: o.LeaseTimeout.D(), MaxDepth: o.MaxDepth,
	}
	if oo.Partitions == 0 {
		oo.Partitions = outbox.DefaultPartitions
	}
	d, err := o.Durability.Outbox()
	if err != nil {
		return oo, fmt.Errorf("scenario %s: leader.outbox.durability: %w", r.sc.Name, err)
	}
	oo.Durability = d
	return oo, nil
}

// leaderConfig is the leader's configuration from the spec, with the
// run-time changes of set_leader events applied; zero fields take the
// leader package's defaults.
func (r *Runner) leaderConfig() (leader.Config, error) {
	ls := r.sc.Leader
	lc := leader.Config{
		Clock: r.clk, Seed: r.sc.Seed, Logger: r.log.With("component", "leader"),
		Mailbox:           mailbox.Options{Capacity: ls.Mailbox.Capacity, Policy: ls.Mailbox.Policy, BlockTimeout: ls.Mailbox.BlockTimeout.D(), Retry: ls.Mailbox.RetryAfter, Wait: &r.leaderWait},
		HeartbeatInterval: ls.HeartbeatInterval.D(),
		HeartbeatAppend:   ls.HeartbeatPolicy == scenario.HeartbeatAppend,
		AskTimeout:        ls.AskTimeout.D(),
		HeartbeatWait:     &r.hbWait,
		AskRTT:            &r.askRTT,
		ServiceLag:        &r.lag.service.leader,
		DeliveryLag:       &r.lag.delivery.leader,
		ReplyQueue:        max(leader.DefaultReplyQueue, 2*len(r.workers)),
		// One heartbeat slot per worker, as many as there are: the
		// default (a million) allocates its ring and key map up front,
		// half a second and a hundred megabytes at every (re)start.
		HeartbeatSlots: max(len(r.workers), 1),
		// Every deploy of the run (a wait_for_wave deploy is one per
		// wave): the result reads each one's progress at the end.
		DeployHistory: 1 << 16,
		RetryRejects:  ls.Relay.RetryRejects,
		Relay: outbox.RelayOptions{
			Interval: ls.Relay.Interval.D(), Batch: ls.Relay.Batch,
			Limiter: flow.LimiterOptions{Initial: ls.Relay.Limit.Initial, Min: ls.Relay.Limit.Min, Max: ls.Relay.Limit.Max},
			Backoff: flow.Backoff{Base: ls.Relay.Backoff.Base.D(), Cap: ls.Relay.Backoff.Cap.D()},
			// Enough of each partition's limit history for the sampler,
			// which reads it every sample, to see every move (the sawtooth).
			History:    limitHistory,
			TryOffline: ls.Relay.TryOffline,
		},
	}
	if ls.Service != nil {
		lc.Service = *ls.Service
	}
	s, err := ls.Relay.Limit.Strategy.Flow()
	if err != nil {
		return lc, fmt.Errorf("scenario %s: leader.relay.limit.strategy: %w", r.sc.Name, err)
	}
	lc.Relay.Limiter.Strategy = s
	r.lead.mu.Lock()
	if r.lead.capacity != nil {
		lc.Mailbox.Capacity = *r.lead.capacity
	}
	if r.lead.service != nil {
		lc.Service = *r.lead.service
	}
	r.lead.mu.Unlock()
	if r.testLeaderConfig != nil {
		r.testLeaderConfig(&lc)
	}
	return lc, nil
}

// startLeader opens the outbox file, connects the leader's session and
// starts a leader on them. It fails the run if any of it fails.
func (r *Runner) startLeader(ctx context.Context) error {
	s := &r.lead
	s.life.Lock()
	defer s.life.Unlock()
	oo, err := r.outboxOptions()
	if err != nil {
		return err
	}
	lc, err := r.leaderConfig()
	if err != nil {
		return err
	}
	var st outbox.Store
	if r.sc.Leader.Outbox.Store == scenario.StoreMemory {
		// What the outbox's file buys: a memory store starts empty at
		// every (re)start, so what a crash leaves queued is gone.
		st, err = outbox.NewMemory(oo)
	} else {
		st, err = outbox.OpenBolt(s.path, oo)
	}
	if err != nil {
		return fmt.Errorf("scenario %s: leader outbox: %w", r.sc.Name, err)
	}
	s.mu.Lock()
	if !s.opened {
		s.opened, s.depthStart = true, st.Stats().Depth
	}
	s.mu.Unlock()
	sess, err := r.dialLeader(lc)
	if err != nil {
		st.Close()
		return fmt.Errorf("scenario %s: leader link: %w", r.sc.Name, err)
	}
	link := &crashLink{leaderLink: sess}
	lc.Link, lc.Store = link, st
	if who, any := r.pullers(); any {
		jobs, err := r.openJobs(st)
		if err != nil {
			sess.Close(true)
			st.Close()
			return fmt.Errorf("scenario %s: leader job queue: %w", r.sc.Name, err)
		}
		lc.Jobs, lc.JobWorkers = jobs, who
		lc.JobLease, lc.JobRetry = r.sc.Leader.Jobs.Lease.D(), r.sc.Leader.Jobs.Retry.D()
	}
	l, err := leader.New(lc)
	if err != nil {
		sess.Close(true)
		st.Close()
		return fmt.Errorf("scenario %s: leader: %w", r.sc.Name, err)
	}
	lctx, lcancel := context.WithCancel(context.Background())
	lr := &leaderRun{l: l, st: st, sess: sess, link: link, cancel: lcancel, done: make(chan error, 1)}
	go func() { lr.done <- l.Run(lctx) }()
	s.mu.Lock()
	s.n++
	lr.n = s.n
	s.cur = lr
	close(s.up)
	s.mu.Unlock()
	return nil
}

// stopLeader stops the serving leader and returns it (nil if it was
// down). A crash stops it as a killed process would: the outbox file is
// closed under it first (nothing it still had in flight is settled: those
// leases expire when the file is opened again), then its connection goes
// dead — every later publish fails at once, so it says no goodbye and no
// goroutine of it waits on the connection — and drops without a
// DISCONNECT. A clean stop lets the relay settle what is in flight,
// announces the leader offline and closes the session, then the store.
func (r *Runner) stopLeader(crash bool) *leaderRun {
	s := &r.lead
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	lr := s.cur
	if lr == nil {
		s.mu.Unlock()
		return nil
	}
	s.cur, s.dying, s.up = nil, lr, make(chan struct{})
	s.mu.Unlock()
	var runErr error
	if crash {
		_ = lr.st.Close()
		lr.link.kill()
		lr.cancel()
		<-lr.done // its last store calls failed with ErrClosed, counted
		lr.sess.Close(false)
	} else {
		lr.cancel()
		runErr = <-lr.done
		dead, err := lr.st.DeadLetters(context.Background(), 0)
		if err != nil {
			r.warnf("listing the dead letters: %v", err)
		}
		lr.dead, lr.deadOK = dead, err == nil
		lr.sess.Close(true)
		if err := lr.st.Close(); err != nil {
			r.warnf("closing the leader's outbox: %v", err)
		}
	}
	if runErr != nil {
		r.warnf("leader %d stopped with: %v", lr.n, runErr)
	}
	final := lr.l.Stats() // a closed store keeps its last counters
	r.limits.observe(lr.n, final.Relay.Partitions)
	s.mu.Lock()
	lr.stopped, lr.final = true, final
	s.past = append(s.past, lr)
	s.dying = nil
	s.mu.Unlock()
	return lr
}

// crashLeader kills the leader and restarts it from the same bbolt file,
// at once when restartAfter is 0 (else the caller schedules restartLeader).
func (r *Runner) crashLeader(restartAfter time.Duration) {
	lr := r.stopLeader(true)
	if lr == nil {
		r.warnf("leader crash: the leader is already down")
		return
	}
	r.lead.mu.Lock()
	r.lead.restarts++
	r.lead.mu.Unlock()
	if r.testLeaderDown != nil {
		r.testLeaderDown(r.lead.path)
	}
	if restartAfter <= 0 {
		r.restartLeader()
	}
}

// restartLeader starts a new leader on the outbox file, unless one is
// serving. A failure to restart ends the run with that error. It does not
// take a context: a restart under way finishes even when the timeline
// stops around it (its connect has its own timeout).
func (r *Runner) restartLeader() {
	r.lead.mu.Lock()
	up := r.lead.cur != nil
	r.lead.mu.Unlock()
	if up {
		return
	}
	if err := r.startLeader(context.Background()); err != nil {
		r.failRun(fmt.Errorf("restarting the leader from %s: %w", r.lead.path, err))
	}
}

// current returns the serving leader, or nil and a channel closed when
// one serves.
func (r *Runner) current() (*leaderRun, <-chan struct{}) {
	r.lead.mu.Lock()
	defer r.lead.mu.Unlock()
	return r.lead.cur, r.lead.up
}

// withLeader calls f with the serving leader, waiting for one while it is
// down. If f fails because that leader crashed meanwhile (stopLeader
// unregisters a leader before it closes its outbox, so the outbox refused
// the call and nothing of it happened), f is called again with its
// successor. Any other error is returned.
func (r *Runner) withLeader(ctx context.Context, f func(*leaderRun) error) error {
	for {
		lr, up := r.current()
		if lr == nil {
			select {
			case <-up:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := f(lr)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if cur, _ := r.current(); cur == lr {
			return err // still serving: a real error
		}
	}
}

// liveLeaders returns, under one lock so nothing is counted twice or
// missed, the stopped instances and the live ones (dying, then serving).
func (r *Runner) liveLeaders() (past, live []*leaderRun, up bool) {
	s := &r.lead
	s.mu.Lock()
	defer s.mu.Unlock()
	past = append([]*leaderRun(nil), s.past...)
	if s.dying != nil {
		live = append(live, s.dying)
	}
	if s.cur != nil {
		live = append(live, s.cur)
	}
	return past, live, s.cur != nil
}

// stats returns a stopped instance's final counters, or a live one's now.
func (lr *leaderRun) stats(s *leaderState) leader.Stats {
	s.mu.Lock()
	stopped, final := lr.stopped, lr.final
	s.mu.Unlock()
	if stopped {
		return final
	}
	return lr.l.Stats()
}

// errKilled is what a crashed leader's publishes fail with.
var errKilled = errors.New("the leader process was killed")

// crashLink is the leader's session as the runner hands it to the leader:
// kill makes it dead for the leader, as a killed process's connection is.
type crashLink struct {
	leaderLink
	dead atomic.Bool
}

func (c *crashLink) kill() { c.dead.Store(true) }

// Publish publishes, unless the leader was killed.
func (c *crashLink) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if c.dead.Load() {
		return errKilled
	}
	return c.leaderLink.Publish(ctx, topic, qos, retained, payload)
}

// PublishesInline is its link's (leader.InlineLink): a killed link
// fails every publish at once, which waits no more than the link did.
func (c *crashLink) PublishesInline() bool {
	il, ok := c.leaderLink.(leader.InlineLink)
	return ok && il.PublishesInline()
}

// Send sends, unless the leader was killed.
func (c *crashLink) Send(topic string, qos byte, payload []byte) error {
	if c.dead.Load() {
		return errKilled
	}
	return c.leaderLink.Send(topic, qos, payload)
}
