package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// runStack is what Run started and shutdown stops.
type runStack struct {
	broker     *broker.Broker
	poolCancel context.CancelFunc
	poolDone   chan struct{}
	bgCancel   context.CancelFunc
	sampler    *ownedLoop
	timeline   *timelineLoop
	offline    *ownedLoop
}

// ownedLoop is a goroutine the run owns.
type ownedLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func goLoop(f func(ctx context.Context)) *ownedLoop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &ownedLoop{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		f(ctx)
	}()
	return l
}

// stop tells the goroutine to stop and waits for it. Safe on nil and
// more than once.
func (l *ownedLoop) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// Reconnect backoff defaults (docs/SCENARIOS.md: base 1s, cap 60s).
var defaultReconnect = worker.DefaultReconnectBackoff

// buildPool makes one worker per WorkerSpec. The workers dial the broker
// Run starts; none dials before it exists.
func (r *Runner) buildPool() error {
	cfgs := make([]worker.Config, len(r.specs))
	// Each worker owns its timers; a gateway's devices share its loop,
	// whose timers their gateway's first device owns. A gateway's own
	// timers (reconnects, its downlink) have an owner of their own, keyed
	// after every worker.
	gateways := map[string]uint64{}
	gwClock := map[string]clock.Clock{}
	for i, ws := range r.specs {
		key := keyWorkers + uint64(i)
		if g := ws.Gateway; g != "" {
			if k, ok := gateways[g]; ok {
				key = k
			} else {
				gateways[g] = key
				gwClock[g] = clock.Keyed(r.clk, keyWorkers+uint64(len(r.specs)+len(gwClock)))
			}
		}
		cfgs[i] = r.workerConfig(ws, clock.Keyed(r.clk, key))
		cfgs[i].GatewayClock = gwClock[ws.Gateway]
	}
	dial := worker.DialerFunc(func(ctx context.Context, o worker.DialOptions) (worker.Session, error) {
		return r.dialer().Dial(ctx, o)
	})
	po := worker.PoolOptions{Clock: clock.Keyed(r.clk, keyPool), Gateways: runnerGateways{r}}
	if n := len(cfgs); n > 1 && r.sc.Fleet.Ramp > 0 {
		// The scenario's ramp is the time over which the whole fleet
		// connects; the pool spaces one worker from the next.
		po.Ramp = r.sc.Fleet.Ramp.D() / time.Duration(n-1)
	}
	p, err := worker.NewPool(cfgs, dial, po)
	if err != nil {
		return err
	}
	r.pool, r.workers = p, p.Workers()
	return nil
}

// runnerGateways dials the sessions of the pool's gateways on the broker
// Run starts, as buildPool's dialer does the workers'.
type runnerGateways struct{ r *Runner }

func (g runnerGateways) DialGateway(ctx context.Context, o worker.GatewayDialOptions) (worker.GatewayLink, error) {
	return g.r.dialer().DialGateway(ctx, o)
}

// dialer opens sessions on the broker Run started, timed by the run's
// clock.
func (r *Runner) dialer() worker.MQTTDialer {
	return worker.MQTTDialer{Broker: "mem://", Mem: r.broker.Load(), Clock: r.clk}
}

// workerConfig turns a worker's profile into its worker.Config, on the
// clock clk; unset fields keep the worker package's defaults.
func (r *Runner) workerConfig(ws scenario.WorkerSpec, clk clock.Clock) worker.Config {
	p := ws.Profile
	c := worker.Config{
		ID: ws.ID, Gateway: ws.Gateway, Clock: clk, Seed: r.sc.Seed, Index: uint64(ws.Index), Logger: r.log.With("worker", ws.ID),
		ServiceLag: &r.lag.service.workers, DeliveryLag: &r.lag.delivery.workers,
	}
	if p.Mailbox != nil {
		c.Mailbox = mailbox.Options{Capacity: p.Mailbox.Capacity, Policy: p.Mailbox.Policy, BlockTimeout: p.Mailbox.BlockTimeout.D()}
	}
	c.Mailbox.Wait = &r.workerWait
	if p.Service != nil {
		c.Service = *p.Service
	}
	if d := r.sc.Fleet.GatewayDownlink; d != nil && ws.Gateway != "" {
		c.GatewayDownlink = worker.Downlink{Capacity: d.Capacity, Airtime: d.Airtime.D()}
	}
	if p.RTT != nil {
		c.RTT = *p.RTT
	}
	if p.Loss != nil {
		c.Loss = *p.Loss
	}
	if p.Heartbeat != nil {
		c.Heartbeat = p.Heartbeat.D()
	}
	if p.Telemetry != nil {
		c.Telemetry = p.Telemetry.D()
	}
	if p.Reconnect != nil {
		c.Reconnect.Immediate = p.Reconnect.Policy == scenario.ReconnectImmediate
		c.Reconnect.Backoff = flow.Backoff{Base: p.Reconnect.Base.D(), Cap: p.Reconnect.Cap.D()}
		if c.Reconnect.Backoff.Base == 0 {
			c.Reconnect.Backoff.Base = defaultReconnect.Base
		}
		if c.Reconnect.Backoff.Cap == 0 {
			c.Reconnect.Backoff.Cap = max(defaultReconnect.Cap, c.Reconnect.Backoff.Base)
		}
	}
	if p.KeepAlive != nil {
		c.KeepAlive = p.KeepAlive.D()
	}
	if p.AskTimeout != nil {
		c.AskTimeout = p.AskTimeout.D()
	}
	if p.Version != nil {
		c.Version = *p.Version
	}
	if p.LocalOutbox != nil {
		c.LocalOutbox = *p.LocalOutbox
	}
	if pulls(p) {
		c.Pull = &worker.Pull{Interval: time.Second}
		if q := p.Poll; q != nil {
			c.Pull = &worker.Pull{Interval: q.Interval.D(), Jitter: q.Jitter.D(), Timeout: q.Timeout.D()}
		}
	}
	c.OnJob = r.jobs.done
	return c
}

// heartbeatOf is worker i's configured heartbeat interval (what a storm
// returns it to).
func (r *Runner) heartbeatOf(i int) time.Duration {
	if h := r.specs[i].Profile.Heartbeat; h != nil {
		return h.D()
	}
	return 0
}

// startStack starts the broker, the leader on its bbolt file, the
// background context and the worker pool. On an error it stops what it
// started.
func (r *Runner) startStack(ctx context.Context, path string) (*runStack, error) {
	b, err := broker.StartBroker(broker.BrokerOptions{})
	if err != nil {
		return nil, fmt.Errorf("scenario %s: start the broker: %w", r.sc.Name, err)
	}
	r.broker.Store(b)
	st := &runStack{broker: b}
	r.lead.path = path
	if err := r.startLeader(ctx); err != nil {
		r.closeBroker(b)
		return nil, err
	}
	// The leader subscribed and serving before the first worker dials,
	// on every run.
	r.settle(ctx)
	bgCtx, bgCancel := context.WithCancel(context.Background())
	r.bgMu.Lock()
	r.bgCtx = bgCtx
	r.bgMu.Unlock()
	st.bgCancel = bgCancel
	poolCtx, poolCancel := context.WithCancel(context.Background())
	st.poolCancel, st.poolDone = poolCancel, make(chan struct{})
	go func() {
		defer close(st.poolDone)
		_ = r.pool.Run(poolCtx)
	}()
	// The pool's first start (its first worker connected) is over before
	// the runner goes on.
	r.settle(ctx)
	return st, nil
}

// waitConnected waits (simulated time, at most ConnectTimeout) for every
// worker to be online when the scenario has no ramp — online as the
// worker sees it and as the leader does, which hears a large fleet's
// statuses later than the workers send them (and parks commands for a
// worker it does not know to be online) — so that time 0 finds the fleet
// connected. With a ramp, connecting is part of the scenario and time 0
// is now. It returns an error only when ctx ends.
//
// The workers connect one after another, in the fleet's order, each once
// the one before has settled (worker.Pool on the virtual clock): a
// connect takes no simulated time, so without a ramp the fleet connects
// at one simulated instant, in the same order on every run.
func (r *Runner) waitConnected(ctx context.Context) error {
	if r.sc.Fleet.Ramp > 0 {
		return nil
	}
	deadline := r.clk.Mono() + r.o.ConnectTimeout
	for {
		online := 0
		for _, w := range r.workers {
			if w.State().Online {
				online++
			}
		}
		heard := 0
		if lr, _ := r.current(); lr != nil {
			heard = lr.l.Online()
		}
		if online == len(r.workers) && heard >= len(r.workers) {
			return nil
		}
		if r.clk.Mono() >= deadline {
			r.warnf("only %d of %d workers connected within %v, and the leader heard %d online: starting anyway", online, len(r.workers), r.o.ConnectTimeout, heard)
			return nil
		}
		if err := clock.Sleep(ctx, r.own, connectPoll); err != nil {
			return err
		}
	}
}

// connectPoll is how often (simulated) waitConnected looks.
const connectPoll = 10 * time.Millisecond

// stopBackground ends the control and deploy goroutines and waits for
// them.
func (r *Runner) stopBackground(st *runStack) {
	r.bgMu.Lock()
	st.bgCancel()
	r.bgMu.Unlock()
	r.bg.Wait()
}

func (r *Runner) closeBroker(b *broker.Broker) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		r.warnf("closing the broker: %v", err)
	}
}
