package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
)

// settle collects the finished deliveries and settles everything pending
// in one store call.
func (p *partition) settle(ctx context.Context) {
	p.collect()
	if len(p.pending) == 0 {
		return
	}
	p.countRetry()
	res, err := p.r.st.Settle(ctx, p.settlements()...)
	p.settled(ctx, res, err)
}

// settlements returns pending's settlements, in a buffer reused from call
// to call.
func (p *partition) settlements() []Settlement {
	p.batch = p.batch[:0]
	for _, o := range p.pending {
		p.batch = append(p.batch, o.Settlement)
	}
	return p.batch
}

// settled counts the results of settling pending and empties pending.
// err means the call failed and settled none of them: unless the store is
// closed, pending is kept to be settled again after a backoff, since the
// deliveries happened and dropping their settlements would have them
// delivered again once their leases run out.
func (p *partition) settled(ctx context.Context, res []SettleResult, err error) {
	if err != nil && len(p.pending) > 0 && retryable(err) {
		p.c.storeErrors.Add(1)
		p.holdOff()
		return
	}
	if len(p.pending) > 0 && p.failures > 0 {
		p.failures, p.holdUntil = 0, time.Time{}
	}
	for i, o := range p.pending {
		switch {
		case err != nil || res[i].Err != nil:
			p.c.storeErrors.Add(1)
		case o.Op == SettleDeadLetter, o.Op == SettleNack && res[i].Nack == DeadLettered:
			p.c.deadLettered.Add(1)
		case o.Op == SettleNack:
			p.c.retries.Add(1)
		}
		// Unpark may have run between our offline check and this park,
		// found the head leased and left it alone; release it ourselves.
		if o.parked != "" && !p.r.isOffline(o.parked) {
			if err := p.r.st.Wake(ctx, o.parked); err != nil {
				p.c.storeErrors.Add(1)
			}
			p.poke()
		}
	}
	clear(p.pending) // drop the causes' strings
	p.pending = p.pending[:0]
}

// settleRetryCap bounds the backoff between settling calls after a store
// error: the settlements must land well within the store's lease (30 s by
// default), or their messages are handed out again.
const settleRetryCap = time.Second

// holding reports whether a settle backoff is in progress.
func (p *partition) holding() bool {
	return p.failures > 0 && p.r.o.Clock.Now().Before(p.holdUntil)
}

// holdOff starts the backoff after a failed settling call: full jitter
// over min(settleRetryCap, Backoff.Base × 2^failures). The loop's ticker
// (every Interval) notices its end.
func (p *partition) holdOff() {
	b := flow.Backoff{Base: p.r.o.Backoff.Base, Cap: settleRetryCap}
	p.holdUntil = p.r.o.Clock.Now().Add(p.backoffWith(b, p.failures))
	p.failures++
}

// countRetry counts a settling call that carries settlements a failed one
// kept.
func (p *partition) countRetry() {
	if p.failures > 0 {
		p.c.settleRetries.Add(1)
	}
}

// retryable: a failed settling call is worth repeating unless the store is
// closed for good or refused the settlements themselves.
func retryable(err error) bool {
	return !errors.Is(err, ErrClosed) && !errors.Is(err, ErrInvalid)
}

// deliver runs one delivery on a goroutine of the pool and finishes it.
func (p *partition) deliver(ctx context.Context, d delivery) {
	p.finish(ctx, d.m, d.ps, d.start, p.r.d.Deliver(ctx, d.m))
}

// finish feeds a delivery's answer to the limiter and hands the
// settlement to the loop, marked with the start it ends. It owns ps.
func (p *partition) finish(ctx context.Context, m Message, ps permits, start uint64, err error) {
	o := p.verdict(ctx, m, ps, err)
	o.start = start
	p.done <- o // never blocks: see partition
	// The receiver's next message is visible only once the loop has
	// settled this one; the poke has it do so now.
	p.poke()
}

// verdict returns ps with the limits moved by err (+1, /2 once per
// window, or unchanged, by flow.Classify; see permits.done) and says how
// to settle m.
func (p *partition) verdict(ctx context.Context, m Message, ps permits, err error) outcome {
	s := Settlement{ID: m.ID}
	if err != nil && ctx.Err() != nil {
		// Failed because we are stopping (or at least while we are): not the
		// receiver's fault, so no attempt and no limit change.
		ps.release()
		p.c.abandoned.Add(1)
		s.Op = SettleRelease
		return outcome{Settlement: s}
	}
	ps.done(err)
	var full string
	switch flow.Classify(err) {
	case flow.OK:
		p.sample()
		p.c.delivered.Add(1)
		s.Op = SettleAck
	case flow.Backpressure:
		p.sample()
		p.c.backpressure.Add(1)
		retryAfter, _ := flow.RetryAfter(err)
		s.Op, s.Delay, s.Cause = SettleNack, max(retryAfter, p.backoff(m.Attempts)), err.Error()
		full = m.Receiver
	case flow.Reject:
		s.Op, s.Cause = SettleDeadLetter, err.Error()
	default: // flow.Retry
		p.c.errors.Add(1)
		s.Op, s.Delay, s.Cause = SettleNack, p.backoff(m.Attempts), err.Error()
	}
	return outcome{Settlement: s, full: full}
}

func (p *partition) backoff(attempt int) time.Duration {
	return p.backoffWith(p.r.o.Backoff, attempt)
}

func (p *partition) backoffWith(b flow.Backoff, attempt int) time.Duration {
	p.rngMu.Lock()
	defer p.rngMu.Unlock()
	return b.Delay(attempt, p.rng)
}

// sample records the limits if they moved since the last sample.
func (p *partition) sample() {
	p.hist.add(p.r.o.Clock, p.lim)
	p.slow.hist.add(p.r.o.Clock, p.slow.lim)
}
