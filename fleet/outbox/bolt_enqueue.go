package outbox

import (
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Enqueue stores msgs in one transaction: all or none. It returns
// ErrInvalid (nothing stored) for a message without Receiver or Kind, an
// Overwrite without Key, or a Receiver+Key too long for a bbolt key, and
// ErrFull if the appended messages would take Depth past MaxDepth. It
// blocks until the transaction is committed as Durability says (under
// Batch, up to about a millisecond longer while the batch fills).
//
// An Overwrite targets the newest queued message with the same (Receiver,
// Key), whatever Conflict that one was enqueued with. A lower Seq is Stale;
// an equal or higher Seq replaces Kind, Payload, Seq, TTL and CreatedAt in
// place, keeping ID, position, Attempts, LastError and the later of the two
// SendAts. If the target is in flight (leased) the new version is
// appended instead and becomes the key's target, and the one in flight is
// superseded: acked or dead-lettered it stays so, but handed back
// undelivered (Nack, Release, its lease running out, a reopen) it is
// dropped and counted as Overwritten (see Nack).
func (b *Bolt) Enqueue(ctx context.Context, msgs ...Message) ([]Receipt, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	if len(msgs) == 0 {
		return nil, nil
	}
	// Validate and encode in the caller's goroutine: bbolt runs a batch's
	// calls one after another on one goroutine, so work done here is work
	// taken off the group commit's critical path.
	now := unixNano(b.o.Clock.Now())
	recs := make([]rec, len(msgs))
	vals := make([][]byte, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if err := m.validate(); err != nil {
			return nil, err
		}
		if len(m.Receiver)+1+len(m.Key) > bolt.MaxKeySize {
			return nil, fmt.Errorf("%w: receiver and key too long (%d bytes, max %d)", ErrInvalid, len(m.Receiver)+len(m.Key), bolt.MaxKeySize-1)
		}
		recs[i] = newRec(m, now)
		vals[i] = recs[i].encode()
	}
	receipts := make([]Receipt, len(msgs))
	err := b.write(batched, func(bk buckets, w *writerState, d *counters) error {
		for i := range recs {
			var err error
			if receipts[i], err = b.enqueueOne(bk, w, d, &recs[i], vals[i], true, now); err != nil {
				return err
			}
		}
		d.enqueued = int64(len(recs)) // appended, replaced or stale: see Stats
		return nil
	})
	if err != nil {
		return nil, err
	}
	return receipts, nil
}

// enqueueOne stores one message (record r, encoded as val) at now in a
// write transaction, counting into d. With bounded false (Replay)
// MaxDepth is not enforced.
func (b *Bolt) enqueueOne(bk buckets, w *writerState, d *counters, r *rec, val []byte, bounded bool, now int64) (Receipt, error) {
	var kk []byte
	var inflight uint64 // the leased version this one supersedes, if any
	var inflightRec rec
	if len(r.key) > 0 {
		kk = keyIndexKey(r.receiver, r.key)
		if v := bk.keys.Get(kk); r.overwrite && len(v) == 16 {
			id, seq := binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
			if r.seq < seq {
				d.stale++
				return Receipt{ID: id, Outcome: Stale}, nil
			}
			old, err := bk.get(id)
			if err != nil {
				return Receipt{}, fmt.Errorf("%w: key index names message %d: %v", ErrCorrupt, id, err)
			}
			if old.leaseUntil == 0 {
				if err := b.replace(bk, id, &old, r, now); err != nil {
					return Receipt{}, err
				}
				d.overwritten++
				return Receipt{ID: id, Outcome: Replaced}, bk.keys.Put(kk, keyIndexVal(id, r.seq))
			}
			// In flight: the receiver may already have the old version,
			// so the new one must follow it. It is appended below and
			// becomes the key's target; the old one is marked, so that
			// it is dropped if it comes back undelivered.
			if !old.superseded {
				inflight, inflightRec = id, old
			}
		}
	}
	if bounded && b.o.MaxDepth > 0 && w.cur.depth+d.depth >= int64(b.o.MaxDepth) {
		return Receipt{}, fmt.Errorf("%w: %d messages queued (max depth %d)", ErrFull, w.cur.depth+d.depth, b.o.MaxDepth)
	}
	if inflight != 0 {
		inflightRec.superseded = true
		if err := bk.msgs.Put(idKey(inflight), inflightRec.encode()); err != nil {
			return Receipt{}, err
		}
	}
	id, err := bk.appendMsg(r, val, b.o.Partitions)
	if err != nil {
		return Receipt{}, err
	}
	if kk != nil {
		if err := bk.keys.Put(kk, keyIndexVal(id, r.seq)); err != nil {
			return Receipt{}, err
		}
	}
	d.depth++
	return Receipt{ID: id, Outcome: Appended}, nil
}

// replace overwrites queued message id (record old, not leased) with the
// new version r in place at now. It keeps the old Attempts and LastError
// (the receiver has still failed that often: a fresh count would restart
// the backoff and keep a message that is overwritten often from ever
// reaching the dead letters) and the later of the two SendAts (a backoff
// in progress holds). A parked message's SendAt is no due time but a
// recheck: a new version due by now stays parked, a later one waits for
// its own SendAt, unparked.
func (b *Bolt) replace(bk buckets, id uint64, old, r *rec, now int64) error {
	nr := *r
	nr.attempts, nr.lastErr = old.attempts, old.lastErr
	switch {
	case !old.parked:
		nr.sendAt = max(r.sendAt, old.sendAt)
	case r.sendAt <= now:
		nr.sendAt, nr.parked = old.sendAt, true
	}
	if err := bk.msgs.Put(idKey(id), nr.encode()); err != nil {
		return err
	}
	if nr.sendAt == old.sendAt {
		return nil
	}
	if h, _, err := bk.head(r.receiver); err != nil || h != id {
		return err // not a head: no ready key to move
	}
	p := PartitionOf(string(r.receiver), b.o.Partitions)
	if err := bk.ready.Delete(readyKey(p, old.sendAt, id)); err != nil {
		return err
	}
	return bk.ready.Put(readyKey(p, nr.sendAt, id), nil)
}
