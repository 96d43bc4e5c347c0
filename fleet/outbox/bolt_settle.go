package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Settle applies ss in order in one write transaction, committed as
// Options.Durability says before it returns. See Ack, Nack, Release, Park
// and DeadLetter for what each SettleOp does. A message that is not leased gets
// a result wrapping ErrNotLeased and leaves the rest of the call alone; a
// returned error (ErrClosed, ErrInvalid, ctx, a failed write) means nothing
// was settled.
//
// Under Durability Batch or None, calls that overlap share a commit, but
// none waits for company (see update), as a relay's loops call it.
func (b *Bolt) Settle(ctx context.Context, ss ...Settlement) ([]SettleResult, error) {
	res, _, err := b.settle(ctx, queued, ss, 0, -1)
	return res, err
}

// SettleAndDequeue is Settle then Dequeue in one write transaction, so one
// commit (and under Sync or Batch one fsync) instead of two, which is
// most of what a relay's turn costs on bbolt (docs/BENCHMARKS.md, relay);
// it shares commits as they do. With nothing to settle it is Dequeue,
// idle check included.
func (b *Bolt) SettleAndDequeue(ctx context.Context, partition, max int, ss ...Settlement) ([]SettleResult, []Message, error) {
	if len(ss) == 0 {
		ms, err := b.Dequeue(ctx, partition, max)
		return nil, ms, err
	}
	if max < 0 {
		max = 0
	}
	return b.settle(ctx, queued, ss, partition, max)
}

// Ack removes leased message id: it was delivered. The receiver's next
// message becomes its head. It returns ErrNotLeased if id is not leased. A
// lease past its deadline still counts until a Dequeue reclaims it, so a
// late Ack of a delivered message still prevents a duplicate.
func (b *Bolt) Ack(ctx context.Context, id uint64) error {
	_, err := b.settleOne(ctx, Settlement{ID: id, Op: SettleAck})
	return err
}

// Nack records a failed delivery of leased message id: Attempts+1,
// LastError = cause, due again at now+delay (a negative delay counts as 0).
// When Attempts reaches MaxAttempts the message moves to the dead letters
// instead and the result is DeadLettered. Otherwise, if an Overwrite
// superseded it while it was leased (see Enqueue), it is dropped, counted
// as Overwritten, and the result is Superseded: the newest version of its
// key takes over its Attempts and LastError, and the receiver's next
// message is due no sooner than now+delay. It returns ErrNotLeased if id
// is not leased.
func (b *Bolt) Nack(ctx context.Context, id uint64, delay time.Duration, cause string) (NackResult, error) {
	r, err := b.settleOne(ctx, Settlement{ID: id, Op: SettleNack, Delay: delay, Cause: cause})
	return r.Nack, err
}

// Release returns leased message id without counting an attempt, due
// again at sendAt (zero: now). A message an Overwrite superseded while it
// was leased is dropped instead, as Nack does. It returns ErrNotLeased if
// id is not leased.
func (b *Bolt) Release(ctx context.Context, id uint64, sendAt time.Time) error {
	_, err := b.settleOne(ctx, Settlement{ID: id, Op: SettleRelease, SendAt: sendAt})
	return err
}

// Park returns leased message id without counting an attempt, parked for
// its offline receiver: it waits for Wake, or for recheck if no Wake has
// come by then (zero: Wake only). A message an Overwrite superseded while
// it was leased is dropped instead, and the receiver's next message, if
// due by now, is parked in its place. It returns ErrNotLeased if id is
// not leased.
func (b *Bolt) Park(ctx context.Context, id uint64, recheck time.Time) error {
	_, err := b.settleOne(ctx, Settlement{ID: id, Op: SettlePark, SendAt: recheck})
	return err
}

// DeadLetter moves leased message id to the dead letters at once, with
// LastError = cause and Attempts as they were (a permanent error is not a
// retry). It returns ErrNotLeased if id is not leased.
func (b *Bolt) DeadLetter(ctx context.Context, id uint64, cause string) error {
	_, err := b.settleOne(ctx, Settlement{ID: id, Op: SettleDeadLetter, Cause: cause})
	return err
}

func (b *Bolt) settleOne(ctx context.Context, s Settlement) (SettleResult, error) {
	rs, _, err := b.settle(ctx, batched, []Settlement{s}, 0, -1)
	if err != nil {
		return SettleResult{}, err
	}
	return rs[0], rs[0].Err
}

// settle runs ss in one write transaction, then leases up to max due
// messages of partition (max < 0: no Dequeue, partition unused), committed
// as mode says.
func (b *Bolt) settle(ctx context.Context, mode commitMode, ss []Settlement, partition, max int) ([]SettleResult, []Message, error) {
	if err := b.enter(ctx); err != nil {
		return nil, nil, err
	}
	defer b.mu.RUnlock()
	if max >= 0 && (partition < 0 || partition >= b.o.Partitions) {
		return nil, nil, fmt.Errorf("%w: partition %d: must be 0..%d", ErrInvalid, partition, b.o.Partitions-1)
	}
	if err := validateSettlements(ss); err != nil {
		return nil, nil, err
	}
	if len(ss) == 0 {
		return nil, nil, nil
	}
	now := unixNano(b.o.Clock.Now())
	res := make([]SettleResult, len(ss))
	var out []Message
	err := b.write(mode, func(bk buckets, _ *writerState, d *counters) error {
		var err error
		for i := range ss {
			// Set afresh: bbolt may run this function again (see update).
			if res[i], err = b.settleRec(bk, d, &ss[i], now); err != nil {
				return err
			}
		}
		if max >= 0 {
			out, err = b.lease(bk, d, partition, max, now)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return res, out, nil
}

// settleRec applies s inside a write transaction, counting into d. A
// message that is not leased goes into the result; the error is for the
// transaction (a failed write, a damaged record).
func (b *Bolt) settleRec(bk buckets, d *counters, s *Settlement, now int64) (SettleResult, error) {
	res := SettleResult{ID: s.ID}
	r, err := bk.leased(s.ID)
	if err != nil {
		if errors.Is(err, ErrNotLeased) {
			res.Err = err
			return res, nil
		}
		return res, err
	}
	d.leased--
	switch s.Op {
	case SettleAck:
		if err := bk.remove(s.ID, &r); err != nil {
			return res, err
		}
		d.depth--
		d.acked++
		return res, bk.promote(r.receiver, b.o.Partitions)
	case SettleNack:
		r.attempts++
		r.lastErr = []byte(s.Cause)
		if r.attempts >= uint64(b.o.MaxAttempts) {
			res.Nack = DeadLettered
			d.depth--
			d.dead++
			d.deadLettered++
			return res, bk.bury(s.ID, &r, b.o.Partitions)
		}
		r.sendAt = addNano(now, max(s.Delay, 0))
		if r.superseded {
			res.Nack = Superseded
			return res, b.dropSuperseded(bk, d, s.ID, &r, now)
		}
		res.Nack = Requeued
		d.nacked++
		return res, bk.unlease(s.ID, &r, b.o.Partitions)
	case SettleRelease:
		r.sendAt = now
		if !s.SendAt.IsZero() {
			r.sendAt = unixNano(s.SendAt)
		}
		if r.superseded {
			return res, b.dropSuperseded(bk, d, s.ID, &r, now)
		}
		d.released++
		return res, bk.unlease(s.ID, &r, b.o.Partitions)
	case SettlePark:
		r.sendAt, r.parked = unixNano(never), true
		if !s.SendAt.IsZero() {
			r.sendAt = unixNano(s.SendAt)
		}
		if r.superseded {
			return res, b.dropSuperseded(bk, d, s.ID, &r, now)
		}
		d.parked++
		return res, bk.unlease(s.ID, &r, b.o.Partitions)
	default: // SettleDeadLetter; validateSettlements let nothing else through
		r.lastErr = []byte(s.Cause)
		d.depth--
		d.dead++
		d.deadLettered++
		return res, bk.bury(s.ID, &r, b.o.Partitions)
	}
}

// dropSuperseded drops leased message id (record r, with its settlement
// applied at now), which an Overwrite superseded, counting into d.
func (b *Bolt) dropSuperseded(bk buckets, d *counters, id uint64, r *rec, now int64) error {
	d.depth--
	d.overwritten++
	return bk.dropSuperseded(id, r, b.o.Partitions, now)
}
