package leader

import (
	"context"
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// InlineLink is a Link whose Publish never waits on a connection: it
// returns once the broker has the message queued for its subscribers
// (transport.Inline, on the broker of the leader's own process). Over
// one, the leader's asks are started on the relay's loops (startedAsks)
// instead of each waiting on a goroutine of the relay's pool: the ack
// settles its delivery where it arrives.
type InlineLink interface {
	Link
	// PublishesInline reports whether Publish returns without waiting on
	// a connection.
	PublishesInline() bool
}

// startedAsks is the relay's Delivery over an InlineLink: Deliver for a
// caller that waits, Start for the relay, which does not.
type startedAsks struct{ l *Leader }

func (s startedAsks) Deliver(ctx context.Context, m outbox.Message) error {
	return s.l.deliver(ctx, m)
}

// Start publishes m's command and returns; the worker's ack finishes
// the delivery (onUp), or the ask timeout, or the end of ctx (its
// asks are then handed back, as a waiting ask hands its delivery back
// when ctx ends). It keeps the waiting ask's rules (see Leader.deliver):
// the same answers, and the same command published again at once, with
// a full timeout, when the worker comes online on a new connection
// (publishAgain, from the waker, since a reconnect is learnt where
// nothing may be published).
func (s startedAsks) Start(ctx context.Context, m outbox.Message, f outbox.Finish) {
	l := s.l
	id, payload, err := l.command(m)
	if err != nil {
		l.c.poison.Add(1)
		l.finishStarted(f, flow.Permanent(err))
		return
	}
	seq := l.asks.seq.Add(1)
	p := pendingAsk{
		worker: m.Receiver, fin: f, ctx: ctx, payload: payload, topic: l.cfg.Topics.Down(m.Receiver),
		seq: seq, sent: l.clk.Mono(),
	}
	old, replaced, ok := l.asks.begin(ctx, id, p, l.abandonStarted)
	if !ok {
		l.finishStarted(f, flow.Transient(ctx.Err()))
		return
	}
	// Armed once the ask is pending, so that a timeout however short
	// finds it.
	l.asks.arm(id, seq, l.startedTimer(id, seq))
	if replaced {
		// The store handed the message out again while its earlier ask
		// still waited (a lease shorter than the ask): that ask ends here.
		old.stopTimer()
		l.c.asksFailed.Add(1)
		l.finishStarted(old.fin, flow.Transient(fmt.Errorf("ask %s to %s: %w", id, m.Receiver, errAskSuperseded)))
	}
	l.c.asksSent.Add(1)
	if err := l.cfg.Link.Publish(ctx, p.topic, 1, false, payload); err != nil {
		if p, ok := l.asks.take(id, seq); ok {
			p.stopTimer()
			l.c.asksFailed.Add(1)
			l.finishStarted(p.fin, flow.Transient(fmt.Errorf("ask %s to %s: publish: %w", id, m.Receiver, err)))
		}
	}
}

// errAskSuperseded ends a started ask whose command was handed out again.
var errAskSuperseded = errors.New("leader: the command was handed out again before its ack")

// finishStarted settles a started ask: the deploy's record first, as
// Leader.deliver does, then the relay.
func (l *Leader) finishStarted(f outbox.Finish, err error) {
	l.deploys.outcome(f.Message(), err, l.clk.Now())
	f.Finish(err)
}

// startedTimer arms the ask timeout of the started ask id's publish seq.
func (l *Leader) startedTimer(id string, seq uint64) clock.Timer {
	return l.clk.AfterFunc(l.cfg.AskTimeout, func() { l.startedTimedOut(id, seq) })
}

// startedTimedOut ends the started ask id unless an ack, or a new
// connection's publish (a later seq), came first.
func (l *Leader) startedTimedOut(id string, seq uint64) {
	p, ok := l.asks.take(id, seq)
	if !ok {
		return
	}
	l.c.asksTimedOut.Add(1)
	l.finishStarted(p.fin, flow.Transient(fmt.Errorf("ask %s to %s: %w", id, p.worker, ErrAskTimeout)))
}

// answered finishes the started ask id with the worker's ack.
func (l *Leader) answered(id string, p pendingAsk, ack wire.Envelope) {
	p.stopTimer()
	l.askRTT.Record(l.clk.Mono() - p.sent)
	l.finishStarted(p.fin, l.answer(id, p.worker, ack))
}

// abandonStarted hands back every started ask of ctx, which has ended:
// the relay is stopping or pausing, and collects them.
func (l *Leader) abandonStarted(ctx context.Context) {
	for _, p := range l.asks.takeAll(ctx) {
		p.stopTimer()
		l.finishStarted(p.fin, flow.Transient(ctx.Err()))
	}
}

// publishAgain publishes the started asks of worker once more, each
// with a full timeout, if worker came online on a new connection since
// they were published (asks.again); an ask whose timeout is running out
// as this runs is left to it.
func (l *Leader) publishAgain(ctx context.Context, worker string) {
	for _, p := range l.asks.rearm(worker, l.clk.Mono(), l.startedTimer) {
		if err := l.cfg.Link.Publish(ctx, p.topic, 1, false, p.payload); err != nil {
			l.cfg.Logger.Debug("publish again", "worker", worker, "err", err)
		}
	}
}
