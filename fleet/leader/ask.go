package leader

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// ErrAskTimeout: the worker did not ack within Config.AskTimeout. The relay
// retries it as a transient failure.
var ErrAskTimeout = errors.New("leader: no ack before the ask timeout")

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
	ch, again := l.asks.register(id, m.Receiver)
	defer l.asks.remove(id)
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
