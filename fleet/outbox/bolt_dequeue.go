package outbox

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Dequeue leases up to max due heads of partition, oldest SendAt first
// (ties: lower id first), each for Options.LeaseTimeout. It first returns
// every expired lease (of any partition) to the ready index, and drops heads
// whose TTL has run out, counting them as expired and considering the
// receiver's next message in their place. A call with nothing to do costs a
// read transaction only, so idle polling does not fsync. It returns
// ErrInvalid for a partition outside 0..Partitions()-1.
func (b *Bolt) Dequeue(ctx context.Context, partition, max int) ([]Message, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	if partition < 0 || partition >= b.o.Partitions {
		return nil, fmt.Errorf("%w: partition %d: must be 0..%d", ErrInvalid, partition, b.o.Partitions-1)
	}
	if max < 0 {
		max = 0 // which still reclaims expired leases, as the memory store does
	}
	now := unixNano(b.o.Clock.Now())
	if idle, err := b.idle(partition, max, now); idle || err != nil {
		return nil, err
	}
	var out []Message
	err := b.write(queued, func(bk buckets, _ *writerState, d *counters) error {
		var err error
		out, err = b.lease(bk, d, partition, max, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lease is Dequeue inside a write transaction, counting into d.
func (b *Bolt) lease(bk buckets, d *counters, partition, max int, now int64) ([]Message, error) {
	if err := b.reclaim(bk, d, now); err != nil {
		return nil, err
	}
	// Messages are big: grow once for a relay's batch, without trusting
	// a huge max.
	out := make([]Message, 0, min(max, 256))
	prefix := partitionPrefix(partition)
	c := bk.ready.Cursor()
	for len(out) < max {
		// Seek afresh each time: taking a head changes the index, and
		// the receiver's next message may be due before the others.
		k, _ := c.Seek(prefix)
		if k == nil || !bytes.HasPrefix(k, prefix) {
			break
		}
		if _, sendAt := readyDue(k); sendAt > now {
			break
		}
		id := keyID(k)
		if err := bk.ready.Delete(k); err != nil {
			return nil, err
		}
		r, err := bk.get(id)
		if err != nil {
			return nil, fmt.Errorf("%w: ready index names message %d: %v", ErrCorrupt, id, err)
		}
		if r.expired(now) {
			if err := bk.remove(id, &r); err != nil {
				return nil, err
			}
			if err := bk.promote(r.receiver, b.o.Partitions); err != nil {
				return nil, err
			}
			d.depth--
			d.expired++
			continue
		}
		r.leaseUntil, r.parked = addNano(now, b.o.LeaseTimeout), false
		if err := bk.msgs.Put(idKey(id), r.encode()); err != nil {
			return nil, err
		}
		if err := bk.lease.Put(leaseKey(r.leaseUntil, id), nil); err != nil {
			return nil, err
		}
		d.leased++
		out = append(out, r.message(id))
	}
	return out, nil
}

// idle reports, from a read transaction, that Dequeue of up to max
// messages of partition has nothing to do at now: no expired lease, and no
// due head or no room for one.
func (b *Bolt) idle(partition, max int, now int64) (bool, error) {
	idle := true
	err := b.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLease).Cursor().First(); k != nil && leaseDeadline(k) <= now {
			idle = false
			return nil
		}
		if max == 0 {
			return nil
		}
		prefix := partitionPrefix(partition)
		if k, _ := tx.Bucket(bucketReady).Cursor().Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) {
			_, sendAt := readyDue(k)
			idle = sendAt > now
		}
		return nil
	})
	return idle, err
}

// reclaim returns the messages whose lease ran out by now to the ready
// index: their holder crashed or hung, so they are handed out again (or,
// superseded, dropped as Release would). A settle call for one of them
// afterwards gets ErrNotLeased.
func (b *Bolt) reclaim(bk buckets, d *counters, now int64) error {
	var ids []uint64
	c := bk.lease.Cursor()
	for k, _ := c.First(); k != nil && leaseDeadline(k) <= now; k, _ = c.Next() {
		ids = append(ids, keyID(k))
	}
	for _, id := range ids {
		r, err := bk.get(id)
		if err != nil {
			return fmt.Errorf("%w: lease index names message %d: %v", ErrCorrupt, id, err)
		}
		d.leased--
		if r.superseded {
			if err := b.dropSuperseded(bk, d, id, &r, now); err != nil {
				return err
			}
			continue
		}
		if err := bk.unlease(id, &r, b.o.Partitions); err != nil {
			return err
		}
	}
	return nil
}

// Wake makes receiver's head due now if it is parked (the receiver has
// just come back online). A head waiting for its own SendAt (a wave, a
// backoff), a leased head, or a receiver with nothing queued is left
// alone; only an actual change costs a write transaction.
func (b *Bolt) Wake(ctx context.Context, receiver string) error {
	if err := b.enter(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	now := unixNano(b.o.Clock.Now())
	rcv := []byte(receiver)
	waiting := func(bk buckets) (uint64, rec, bool, error) {
		id, ok, err := bk.head(rcv)
		if !ok {
			return 0, rec{}, false, err
		}
		r, err := bk.get(id)
		if err != nil {
			return 0, r, false, err
		}
		return id, r, r.leaseUntil == 0 && r.parked, nil
	}
	var wait bool
	err := b.db.View(func(tx *bolt.Tx) error {
		bk, err := bucketsOf(tx)
		if err == nil {
			_, _, wait, err = waiting(bk)
		}
		return err
	})
	if err != nil || !wait {
		return err
	}
	return b.write(batched, func(bk buckets, _ *writerState, _ *counters) error {
		id, r, wait, err := waiting(bk) // again: it may have changed since
		if err != nil || !wait {
			return err
		}
		r.parked = false
		if r.sendAt <= now {
			return bk.msgs.Put(idKey(id), r.encode())
		}
		p := PartitionOf(receiver, b.o.Partitions)
		if err := bk.ready.Delete(readyKey(p, r.sendAt, id)); err != nil {
			return err
		}
		r.sendAt = now
		if err := bk.msgs.Put(idKey(id), r.encode()); err != nil {
			return err
		}
		return bk.ready.Put(readyKey(p, now, id), nil)
	})
}
