package outbox

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Ack removes leased message id: it was delivered. The receiver's next
// message becomes its head. It returns ErrNotLeased if id is not leased. A
// lease past its deadline still counts until a Dequeue reclaims it, so a
// late Ack of a delivered message still prevents a duplicate.
func (b *Bolt) Ack(ctx context.Context, id uint64) error {
	return b.settle(ctx, id, func(bk buckets, r *rec, d *counters, _ int64) error {
		if err := bk.remove(id, r); err != nil {
			return err
		}
		d.depth--
		d.leased--
		d.acked++
		return bk.promote(r.receiver, b.o.Partitions)
	})
}

// Nack records a failed delivery of leased message id: Attempts+1,
// LastError = cause, due again at now+delay (a negative delay counts as 0).
// When Attempts reaches MaxAttempts the message moves to the dead letters
// instead and the result is DeadLettered. It returns ErrNotLeased if id is
// not leased.
func (b *Bolt) Nack(ctx context.Context, id uint64, delay time.Duration, cause string) (NackResult, error) {
	var res NackResult
	err := b.settle(ctx, id, func(bk buckets, r *rec, d *counters, now int64) error {
		r.attempts++
		r.lastErr = []byte(cause)
		d.leased--
		if r.attempts >= uint64(b.o.MaxAttempts) {
			res = DeadLettered
			d.depth--
			d.dead++
			d.deadLettered++
			return bk.bury(id, r, b.o.Partitions)
		}
		res = Requeued
		r.sendAt = addNano(now, max(delay, 0))
		d.nacked++
		return bk.unlease(id, r, b.o.Partitions)
	})
	return res, err
}

// Release returns leased message id without counting an attempt, due
// again at sendAt (zero: now). It returns ErrNotLeased if id is not leased.
func (b *Bolt) Release(ctx context.Context, id uint64, sendAt time.Time) error {
	return b.settle(ctx, id, func(bk buckets, r *rec, d *counters, now int64) error {
		r.sendAt = now
		if !sendAt.IsZero() {
			r.sendAt = unixNano(sendAt)
		}
		d.leased--
		d.released++
		return bk.unlease(id, r, b.o.Partitions)
	})
}

// DeadLetter moves leased message id to the dead letters at once, with
// LastError = cause and Attempts as they were (a permanent error is not a
// retry). It returns ErrNotLeased if id is not leased.
func (b *Bolt) DeadLetter(ctx context.Context, id uint64, cause string) error {
	return b.settle(ctx, id, func(bk buckets, r *rec, d *counters, _ int64) error {
		r.lastErr = []byte(cause)
		d.depth--
		d.leased--
		d.dead++
		d.deadLettered++
		return bk.bury(id, r, b.o.Partitions)
	})
}

// settle runs fn on leased message id in a write transaction.
func (b *Bolt) settle(ctx context.Context, id uint64, fn func(bk buckets, r *rec, d *counters, now int64) error) error {
	if err := b.enter(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	now := unixNano(b.o.Clock.Now())
	return b.update(true, func(tx *bolt.Tx) error {
		bk, err := bucketsOf(tx)
		if err != nil {
			return err
		}
		r, err := bk.leased(id)
		if err != nil {
			return err
		}
		w := b.state(tx)
		var d counters
		if err := fn(bk, &r, &d, now); err != nil {
			return err
		}
		w.add(&d)
		return nil
	})
}
