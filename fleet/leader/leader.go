package leader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/ratelog"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Leader is the leader actor. Create it with New, start it with Run.
// Methods other than Run are safe for concurrent use, before, during and
// after Run.
type Leader struct {
	cfg   Config
	clk   clock.Clock
	relay *outbox.Relay

	progressRounds atomic.Int64 // progress ticks handled: tests wait on it

	inbox      *mailbox.Mailbox[inbound]   // requests and telemetry, bounded
	heartbeats *mailbox.Mailbox[heartbeat] // coalescing, one per worker
	replies    chan reply                  // answers for the replier goroutine
	stopped    chan struct{}               // closed when Run returns
	relayUp    chan struct{}               // closed when the relay has taken its first turn
	asks       asks
	wakes      wakes // parked commands to release, off the delivery goroutine
	fleet      fleetView
	link       linkState // the session with the broker
	deploys    deployTracker
	askRTT     *stats.Histogram // publish to ack, answered asks only
	service    atomic.Pointer[dist.Dist]
	c          counters
	refusalLog *ratelog.Limiter // refused worker messages: a line per worker per interval
}

// inbound is a request or telemetry message waiting for the leader.
type inbound struct {
	worker string
	kind   wire.Kind
	at     time.Time // when it arrived: its service cannot start earlier
	// A job request: its id, answered with the job, and the job it
	// reports done.
	job      bool
	id, done string
}

// heartbeat is a worker's latest heartbeat waiting to be processed.
type heartbeat struct {
	worker string
	seq    uint64
	body   wire.Heartbeat
}

// reply is an answer to publish on a worker's down topic.
type reply struct {
	worker string
	env    wire.Envelope
}

// New checks cfg and builds a leader; nothing runs until Run.
func New(cfg Config) (*Leader, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l := &Leader{cfg: cfg, clk: cfg.Clock, replies: make(chan reply, cfg.ReplyQueue), stopped: make(chan struct{}), relayUp: make(chan struct{}), askRTT: cfg.AskRTT}
	l.service.Store(&cfg.Service)
	l.refusalLog = ratelog.New(ratelog.Options{Clock: cfg.Clock, Every: cfg.RefusalLogInterval})
	l.asks.init()
	l.wakes.init()
	l.fleet.init()
	l.link.init()
	l.deploys.init(cfg.DeployHistory)
	if err := l.loadDeploys(); err != nil {
		return nil, err
	}
	if l.inbox, err = mailbox.New[inbound](cfg.Mailbox); err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	hbOpts := mailbox.Options{Capacity: cfg.HeartbeatSlots, Policy: mailbox.Coalesce, Clock: cfg.Clock, Wait: cfg.HeartbeatWait}
	if cfg.HeartbeatAppend {
		hbOpts.Policy = mailbox.Unbounded
	}
	if l.heartbeats, err = mailbox.New[heartbeat](hbOpts); err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	ro := cfg.Relay
	var up sync.Once
	ro.OnRunning = func() {
		up.Do(func() { close(l.relayUp) })
		if cfg.Relay.OnRunning != nil {
			cfg.Relay.OnRunning()
		}
	}
	var d outbox.Delivery = outbox.DeliveryFunc(l.deliver)
	if il, ok := cfg.Link.(InlineLink); ok && il.PublishesInline() {
		d = startedAsks{l}
	}
	if l.relay, err = outbox.NewRelay(cfg.Store, d, ro); err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	return l, nil
}

// ErrStopped is returned by calls that need a running leader after Run has
// returned.
var ErrStopped = errors.New("leader: stopped")

// Run subscribes to the fleet's topics, starts serving, announces the
// leader online once it serves (subscribed, and the relay has taken its
// first turn) and serves until ctx ends. It then announces the leader
// offline (best effort), stops the relay (in-flight deliveries settle or
// are handed back uncharged), saves its deploys' progress, and returns
// once every goroutine it started has returned. A Leader runs once.
//
// A leader that dies without the goodbye leaves its retained "online"
// behind, unless its session carries a last will saying "offline"
// (transport.LeaderWill): give it one.
//
// If Link is a Redialer, a lost session does not end Run: the relay
// pauses (deliveries in flight are handed back uncharged, nothing new is
// sent), the leader dials again with Config.Reconnect's backoff until it
// is back, says "online" again and resumes. Stats.Broker counts the
// outages.
func (l *Leader) Run(ctx context.Context) error {
	tp := l.cfg.Topics
	// Up first, statuses last: subscribing to the statuses brings every
	// worker's retained status at once, and a SUBSCRIBE sent behind that
	// flood can be refused for its packet id (mochi 2.7.9 checks it against
	// the ids of the messages it sends; transport subscribes again). Up is
	// QoS 0: the leader's own acks and timeouts make
	// delivery reliable, and QoS 0 spares the broker an in-flight entry per
	// worker message (see broker.BrokerOptions.MaxInflight).
	if err := l.cfg.Link.Subscribe(ctx, tp.AllUp(), 0, l.onUp); err != nil {
		return fmt.Errorf("leader: subscribe %s: %w", tp.AllUp(), err)
	}
	// Gateways before their devices: a dead gateway's retained offline
	// then comes before its devices' retained onlines and makes them
	// stale; after them, they would be applied (the relay woken for
	// them) and taken offline again a moment later. Gateways are few:
	// their replay is no flood.
	if err := l.cfg.Link.Subscribe(ctx, tp.AllGatewayStatus(), 1, l.onGatewayStatus); err != nil {
		return fmt.Errorf("leader: subscribe %s: %w", tp.AllGatewayStatus(), err)
	}
	if err := l.cfg.Link.Subscribe(ctx, tp.AllStatus(), 1, l.onStatus); err != nil {
		return fmt.Errorf("leader: subscribe %s: %w", tp.AllStatus(), err)
	}
	// On a simulation's virtual clock, the retained statuses that pour in
	// behind the subscription are all in before the relay's first turn,
	// so that it finds the same fleet online on every run. (A leader on
	// the wall clock cannot tell when they end, and need not wait.)
	if err := clock.Settle(ctx, l.clk); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Go(func() {
		if err := l.runRelay(runCtx); err != nil {
			errc <- err
			stop()
		}
	})
	if rd, ok := l.cfg.Link.(Redialer); ok {
		wg.Go(func() { l.keepLink(runCtx, rd) })
	}
	wg.Go(func() { l.serveRequests(runCtx) })
	wg.Go(func() { l.processHeartbeats(runCtx) })
	if l.cfg.SuspectAfter > 0 {
		wg.Go(func() { l.watchSilence(runCtx) })
	}
	wg.Go(func() { l.publishReplies(runCtx) })
	wg.Go(func() { l.keepProgress(runCtx) })
	if l.cfg.Jobs != nil {
		wg.Go(func() { l.every(runCtx, max(l.cfg.JobLease/10, time.Millisecond), l.expireJobs) })
	}
	wg.Go(func() {
		select {
		case <-l.relayUp:
		case <-runCtx.Done():
			return
		}
		// A session lost meanwhile says it again once back (keepLink).
		if err := l.cfg.Link.Publish(runCtx, tp.LeaderStatus(), 1, true, []byte(wire.StatusOnline)); err != nil && runCtx.Err() == nil && !l.sessionLost() {
			errc <- fmt.Errorf("leader: announce online: %w", err)
			stop()
			return
		}
		l.askAnnounce(runCtx, l.cfg.Link)
	})
	wg.Go(func() { l.wakes.run(runCtx, l.unpark) })
	wg.Wait()
	close(l.stopped)
	for len(l.replies) > 0 { // the replier has stopped: these never leave
		<-l.replies
		l.c.repliesDroppedStopping.Add(1)
	}
	l.inbox.Close()
	l.heartbeats.Close()
	bye, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = l.cfg.Link.Publish(bye, tp.LeaderStatus(), 1, true, []byte(wire.StatusOffline))
	l.saveProgress(bye, true) // what the relay's last settlements changed
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// serveRequests is the leader's actor loop: one request or telemetry
// message at a time. Service time is simulated by accounting: busyUntil
// moves forward by each sampled service time and the loop sleeps only when
// it is more than a millisecond ahead of the clock, so a short service time
// under a fast clock costs no busy loop and stays exact on average.
//
// Each completion records its service lag: how far the loop is behind
// busyUntil when it completes the message. A loop that keeps up completes
// on time or early (it does not sleep for a millisecond or less), or late
// by a timer's overshoot, which the next messages make up. A loop whose
// machine cannot give it the wall time its speed demands falls further
// behind with each message, and the lag grows.
func (l *Leader) serveRequests(ctx context.Context) {
	r := rand.New(rand.NewPCG(l.cfg.Seed, 0x1ead))
	var busyUntil time.Time
	for {
		in, err := l.inbox.Take(ctx)
		if err != nil {
			return
		}
		// Service starts when the previous one ended or the message
		// arrived, whichever is later — not when this goroutine woke: a
		// sleep overshoots by a timer tick, and under a scaled clock a
		// tick is many simulated milliseconds. Counting from the
		// schedule credits the overshoot to the next messages, so the
		// rate is exact on average however coarse the timers.
		now := l.clk.Now()
		if busyUntil.Before(in.at) {
			busyUntil = in.at
		}
		busyUntil = busyUntil.Add(l.service.Load().Sample(r))
		if ahead := busyUntil.Sub(now); ahead > time.Millisecond {
			if clock.Sleep(ctx, l.clk, ahead) != nil {
				return
			}
			now = l.clk.Now()
		}
		l.cfg.ServiceLag.Record(now.Sub(busyUntil)) // early counts as 0
		switch in.kind {
		case wire.KindRequest:
			l.c.requestsServed.Add(1)
			if in.job {
				l.serveJob(ctx, in, now)
			}
		case wire.KindTelemetry:
			l.c.telemetryServed.Add(1)
		}
	}
}

// processHeartbeats wakes every HeartbeatInterval and takes the heartbeats
// waiting then: the newest of each worker, the older ones having been
// coalesced away in the mailbox. One that arrives during the round waits
// for the next, so a round takes at most one heartbeat per worker.
func (l *Leader) processHeartbeats(ctx context.Context) {
	l.every(ctx, l.cfg.HeartbeatInterval, func() {
		now := l.clk.Now()
		for range l.heartbeats.Len() {
			hb, ok := l.heartbeats.TryTake()
			if !ok {
				break
			}
			if !l.fleet.heartbeat(hb, now) {
				l.c.heartbeatsStale.Add(1)
				continue
			}
			l.c.heartbeatsProcessed.Add(1)
		}
		l.c.heartbeatRounds.Add(1)
	})
}

// SetMailboxCapacity changes the capacity of the mailbox for worker
// requests and telemetry while the leader runs (see
// mailbox.Mailbox.SetCapacity: lowering it drops nothing queued). A
// capacity below 1 is an error and changes nothing.
func (l *Leader) SetMailboxCapacity(n int) error {
	if err := l.inbox.SetCapacity(n); err != nil {
		return fmt.Errorf("leader: %w", err)
	}
	return nil
}

// SetService changes the leader's service time per request or telemetry
// message from the next message on.
func (l *Leader) SetService(d dist.Dist) { l.service.Store(&d) }

// publishReplies publishes the answers queued by the MQTT delivery
// goroutine, which must not publish itself. It hands each to the client
// without waiting for the broker's PUBACK: the client reads PUBACKs on
// the goroutine that delivers the workers' messages, so a replier that
// waited for one would stall whenever that goroutine does, and the
// replies behind it would be dropped (see queueReply).
func (l *Leader) publishReplies(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-l.replies:
			b, err := wire.Encode(r.env)
			if err != nil { // a bug: the leader built a bad answer
				l.cfg.Logger.Error("encode reply", "worker", r.worker, "err", err)
				continue
			}
			if err := l.cfg.Link.Send(l.cfg.Topics.Down(r.worker), 1, b); err != nil {
				l.c.replyErrors.Add(1)
				continue
			}
			l.c.repliesSent.Add(1)
		}
	}
}

// queueReply hands an answer to the replier and returns at once: it runs
// on the MQTT delivery goroutine, which must never wait (it also reads the
// PUBACKs every publish of the leader waits for). An answer that finds the
// queue full, or the leader stopping, is dropped and counted; the worker's
// request times out and it asks again (docs/PROTOCOL.md).
func (l *Leader) queueReply(worker string, env wire.Envelope) {
	select {
	case <-l.stopped:
		l.c.repliesDroppedStopping.Add(1)
		return
	default:
	}
	select {
	case l.replies <- reply{worker: worker, env: env}:
	default:
		l.c.repliesDroppedFull.Add(1)
	}
}
