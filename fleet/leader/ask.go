package leader

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// ErrAskTimeout: the worker did not ack within Config.AskTimeout. The relay
// retries it as a transient failure.
var ErrAskTimeout = errors.New("leader: no ack before the ask timeout")

// asks correlates outstanding deliveries with the acks that answer them.
// Each ask is bound to its receiver: command ids are sequential and easy to
// guess, so an ack counts only from the worker the command went to.
//
// An ask is waiting (Leader.ask: a goroutine waits on its channel) or
// started (startedAsks: nothing waits; the ack, the timeout or the end of
// its context finishes it through the relay's Finish).
type asks struct {
	mu      sync.Mutex
	pending map[string]pendingAsk
	started map[string]int  // started asks per worker, so a reconnect finds them at once
	seq     atomic.Uint64   // the last started ask's
	ctx     context.Context // the started asks' context, watched (begin)
}

type pendingAsk struct {
	worker string             // the receiver, the only worker whose ack answers it
	ch     chan wire.Envelope // a waiting ask's; nil for a started one

	// A started ask's.
	fin     outbox.Finish
	ctx     context.Context
	topic   string
	payload []byte
	seq     uint64        // of its last publish: a timer armed for an earlier one misses it
	timer   clock.Timer   // its ask timeout
	sent    time.Duration // its last publish, on the leader's monotonic clock
	again   bool          // its worker came online on a new connection since (publishAgain)
}

// ackFate is what an ack did.
type ackFate int

const (
	ackAnswered ackFate = iota // it answered the ask waiting for it
	ackLate                    // no ask waits for its ref (timed out, duplicate, or never sent)
	ackForged                  // an ask waits for its ref, but from another worker
)

func (a *asks) init() {
	a.pending = make(map[string]pendingAsk)
	a.started = make(map[string]int)
}

func (a *asks) register(id, worker string) chan wire.Envelope {
	ch := make(chan wire.Envelope, 1)
	a.mu.Lock()
	a.pending[id] = pendingAsk{worker: worker, ch: ch}
	a.mu.Unlock()
	return ch
}

func (a *asks) remove(id string) {
	a.mu.Lock()
	delete(a.pending, id)
	a.mu.Unlock()
}

// complete hands ack, sent by worker from, to the ask waiting for it, or
// returns the started ask it answers for the caller to finish. An ack
// from any worker but the ask's receiver is forged: the ask is left
// waiting for its receiver's answer.
func (a *asks) complete(ref, from string, ack wire.Envelope) (ackFate, pendingAsk) {
	a.mu.Lock()
	p, ok := a.pending[ref]
	switch {
	case !ok:
		a.mu.Unlock()
		return ackLate, pendingAsk{}
	case p.worker != from:
		a.mu.Unlock()
		return ackForged, pendingAsk{}
	}
	a.deleteLocked(ref, p)
	a.mu.Unlock()
	if p.ch != nil {
		p.ch <- ack // buffered, and only one ack is ever sent on it
	}
	return ackAnswered, p
}

// begin registers the started ask p as id, unless ctx has ended. It
// returns the started ask id replaced, if any: the store handed the
// message out again while that one waited. The first ask of a context
// has abandon called once the context ends, to finish the asks still
// pending under it.
func (a *asks) begin(ctx context.Context, id string, p pendingAsk, abandon func(context.Context)) (old pendingAsk, replaced, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ctx.Err() != nil {
		return pendingAsk{}, false, false
	}
	if ctx != a.ctx {
		a.ctx = ctx
		context.AfterFunc(ctx, func() { abandon(ctx) })
	}
	old, replaced = a.pending[id]
	if replaced {
		a.deleteLocked(id, old)
	}
	a.pending[id] = p
	a.started[p.worker]++
	return old, replaced && old.ch == nil, true
}

// arm gives the started ask id its timer, unless the ask has ended or
// moved on to a later publish: then the timer is stopped.
func (a *asks) arm(id string, seq uint64, t clock.Timer) {
	a.mu.Lock()
	p, ok := a.pending[id]
	ok = ok && p.ch == nil && p.seq == seq
	if ok {
		p.timer = t
		a.pending[id] = p
	}
	a.mu.Unlock()
	if !ok {
		t.Stop()
	}
}

// stopTimer stops a started ask's timer, if it has one yet.
func (p pendingAsk) stopTimer() bool { return p.timer != nil && p.timer.Stop() }

// take removes and returns the started ask id, if its last publish is seq.
func (a *asks) take(id string, seq uint64) (pendingAsk, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[id]
	if !ok || p.ch != nil || p.seq != seq {
		return pendingAsk{}, false
	}
	a.deleteLocked(id, p)
	return p, true
}

// takeAll removes and returns the started asks of ctx.
func (a *asks) takeAll(ctx context.Context) []pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []pendingAsk
	for id, p := range a.pending {
		if p.ch == nil && p.ctx == ctx {
			out = append(out, p)
			a.deleteLocked(id, p)
		}
	}
	return out
}

// markAgain marks the started asks to worker to be published again, and
// reports whether there were any.
func (a *asks) markAgain(worker string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started[worker] == 0 {
		return false
	}
	for id, p := range a.pending {
		if p.worker == worker && p.ch == nil {
			p.again = true
			a.pending[id] = p
		}
	}
	return true
}

// rearm returns the started asks to worker marked again, each with a
// new seq and a new timeout from arm, and clears the mark; an ask whose
// timeout is firing already is left to it.
func (a *asks) rearm(worker string, now time.Duration, arm func(id string, seq uint64) clock.Timer) []pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []pendingAsk
	for id, p := range a.pending {
		// An ask not armed yet is not published yet either: it reaches
		// the new connection without help.
		if p.worker != worker || !p.again || !p.stopTimer() {
			continue
		}
		p.seq = a.seq.Add(1)
		p.timer, p.sent, p.again = arm(id, p.seq), now, false
		a.pending[id] = p
		out = append(out, p)
	}
	return out
}

func (a *asks) deleteLocked(id string, p pendingAsk) {
	delete(a.pending, id)
	if p.ch != nil {
		return
	}
	if n := a.started[p.worker]; n > 1 {
		a.started[p.worker] = n - 1
	} else {
		delete(a.started, p.worker)
	}
}

// commandID names a command on the wire: its outbox id, the same on every
// attempt, so a late ack of an earlier attempt still proves delivery.
func commandID(m outbox.Message) string { return "m" + strconv.FormatUint(m.ID, 10) }

// deliver is the relay's Delivery: an ask over MQTT. It publishes the
// command and waits for the worker's ack, mapping the answer onto the typed
// errors the relay steers by:
//
//	ack ok                       nil
//	ack full, retry_after_ms     flow.Capacity(retry after)
//	ack reject, reason           flow.Permanent
//	no ack in time, publish err  flow.Transient
//	a command that cannot be encoded  flow.Permanent (a poison message)
//
// If the worker comes online on a new connection while the ask waits, the
// command is published again at once, and the ask timeout starts over.
func (l *Leader) deliver(ctx context.Context, m outbox.Message) error {
	err := l.ask(ctx, m)
	l.deploys.outcome(m, err, l.clk.Now())
	return err
}

func (l *Leader) ask(ctx context.Context, m outbox.Message) error {
	id, payload, err := l.command(m)
	if err != nil {
		l.c.poison.Add(1)
		return flow.Permanent(err)
	}
	ch := l.asks.register(id, m.Receiver)
	defer l.asks.remove(id)
	again, unwatch := l.resends.watch(m.Receiver)
	defer unwatch()
	// One deadline on the leader's clock covers the publish and the wait.
	pubCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := l.clk.AfterFunc(l.cfg.AskTimeout, cancel)
	defer func() { timer.Stop() }()
	l.c.asksSent.Add(1)
	timedOut := func() error {
		l.c.asksTimedOut.Add(1)
		return flow.Transient(fmt.Errorf("ask %s to %s: %w", id, m.Receiver, ErrAskTimeout))
	}
	for {
		select {
		case <-again: // a reconnect before this publish: it reaches the new connection
		default:
		}
		start := l.clk.Mono()
		if err := l.cfg.Link.Publish(pubCtx, l.cfg.Topics.Down(m.Receiver), 1, false, payload); err != nil {
			if l.sessionLost() {
				<-pubCtx.Done() // the relay pauses, handing this back uncharged (runRelay)
				if ctx.Err() != nil {
					return flow.Transient(ctx.Err())
				}
			}
			l.c.asksFailed.Add(1)
			if pubCtx.Err() != nil && ctx.Err() == nil {
				return flow.Transient(fmt.Errorf("ask %s to %s: %w", id, m.Receiver, ErrAskTimeout))
			}
			return flow.Transient(fmt.Errorf("ask %s to %s: publish: %w", id, m.Receiver, err))
		}
		select {
		case ack := <-ch:
			l.askRTT.Record(l.clk.Mono() - start)
			return l.answer(id, m.Receiver, ack)
		case <-again:
			// The worker came online on a new connection: what went to
			// the old one will not be answered. Publish again at once,
			// with a full timeout, unless this one has just run out. The
			// id is the same, so an ack of either copy completes the ask.
			if !timer.Stop() {
				<-pubCtx.Done()
				if ctx.Err() != nil {
					return flow.Transient(ctx.Err())
				}
				return timedOut()
			}
			timer = l.clk.AfterFunc(l.cfg.AskTimeout, cancel)
		case <-pubCtx.Done():
			if ctx.Err() != nil {
				return flow.Transient(ctx.Err())
			}
			return timedOut()
		}
	}
}

// command returns m's command id and its envelope encoded. The error is
// a command that cannot be encoded: a poison message.
func (l *Leader) command(m outbox.Message) (id string, payload []byte, err error) {
	id = commandID(m)
	env := wire.Envelope{
		ID: id, Kind: wire.Kind(m.Kind), Key: m.Key, Seq: m.Seq,
		TTLMs: m.TTL.Milliseconds(), Attempt: m.Attempts + 1,
		SentMs: l.clk.Now().UnixMilli(), Body: m.Payload,
	}
	payload, err = wire.Encode(env)
	return id, payload, err
}

func (l *Leader) answer(id, worker string, ack wire.Envelope) error {
	switch ack.Result {
	case wire.ResultOK:
		l.c.acksOK.Add(1)
		return nil
	case wire.ResultFull:
		l.c.acksFull.Add(1)
		return flow.Capacity(ack.RetryAfter(), "worker "+worker+" mailbox full")
	default:
		l.c.acksReject.Add(1)
		err := fmt.Errorf("worker %s rejected %s: %s", worker, id, ack.Reason)
		if l.cfg.RetryRejects {
			return flow.Transient(err)
		}
		return flow.Permanent(err)
	}
}
