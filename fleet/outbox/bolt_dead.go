package outbox

import (
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// DeadLetters lists up to max dead letters (max <= 0: all), lowest id
// (oldest enqueued) first, with Attempts and LastError. It reads only.
func (b *Bolt) DeadLetters(ctx context.Context, max int) ([]Message, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	var out []Message
	err := b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDead).Cursor()
		for k, v := c.First(); k != nil && (max <= 0 || len(out) < max); k, v = c.Next() {
			r, err := decodeRec(v)
			if err != nil {
				return fmt.Errorf("dead letter %d: %w", keyID(k), err)
			}
			out = append(out, r.message(keyID(k)))
		}
		return nil
	})
	return out, err
}

// Replay moves the dead letters ids (none given: all) back to the queue
// as if enqueued again now: Attempts and LastError cleared, CreatedAt and
// SendAt now, a new id at the back of the receiver's queue, and its
// Conflict applied, so an Overwrite may replace a queued version in place
// or be stale against a newer one. It is counted as replayed (and
// overwritten or stale), not as enqueued, and MaxDepth does not apply.
// Ids that are not dead letters are skipped; it returns how many moved.
func (b *Bolt) Replay(ctx context.Context, ids ...uint64) (int, error) {
	if err := b.enter(ctx); err != nil {
		return 0, err
	}
	defer b.mu.RUnlock()
	now := unixNano(b.o.Clock.Now())
	var n int
	err := b.write(batched, func(bk buckets, w *writerState, d *counters) error {
		n = 0
		for _, id := range deadIDs(bk, ids) {
			v := bk.dead.Get(idKey(id))
			if v == nil {
				continue
			}
			r, err := decodeRec(v)
			if err != nil {
				return fmt.Errorf("dead letter %d: %w", id, err)
			}
			r.attempts, r.lastErr, r.leaseUntil, r.superseded, r.parked = 0, nil, 0, false, false
			r.sendAt, r.createdAt = now, now
			if _, err := b.enqueueOne(bk, w, d, &r, r.encode(), false, now); err != nil {
				return err
			}
			// r aliases the dead record: delete it only once it is copied.
			if err := bk.dead.Delete(idKey(id)); err != nil {
				return err
			}
			n++
			d.dead--
			d.replayed++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Purge deletes the dead letters ids (none given: all) for good and
// returns how many it deleted. Ids that are not dead letters are skipped.
func (b *Bolt) Purge(ctx context.Context, ids ...uint64) (int, error) {
	if err := b.enter(ctx); err != nil {
		return 0, err
	}
	defer b.mu.RUnlock()
	var n int
	err := b.write(batched, func(bk buckets, _ *writerState, d *counters) error {
		n = 0
		for _, id := range deadIDs(bk, ids) {
			k := idKey(id)
			if bk.dead.Get(k) == nil {
				continue
			}
			if err := bk.dead.Delete(k); err != nil {
				return err
			}
			n++
			d.dead--
			d.purged++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// deadIDs is ids sorted and without repeats (so a replay re-enqueues
// oldest first, whatever order ids came in), or every dead letter's id if
// none are given.
func deadIDs(bk buckets, ids []uint64) []uint64 {
	if len(ids) > 0 {
		return slices.Compact(slices.Sorted(slices.Values(ids)))
	}
	var all []uint64
	_ = bk.dead.ForEach(func(k, _ []byte) error {
		all = append(all, keyID(k))
		return nil
	})
	return all
}
