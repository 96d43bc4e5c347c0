package outbox

import (
	"fmt"
)

// Index maintenance shared by the bbolt store's operations. Each keeps the
// invariants of the layout described on Bolt:
//
//   - every queued message has a msgs record, and its receiver's chain
//     (recv head, then next links, to recv tail) passes through it once;
//   - a receiver's head is either in ready (not leased) or in lease
//     (leased, with the deadline in its record), and no other message is
//     in either;
//   - a keys entry names a queued message with that (receiver, key).
//
// Only heads ever leave the queue (acked, expired, dead-lettered), so the
// chain needs no back links.

// get loads and decodes message id; it returns ErrNotLeased if there is no
// such queued message (callers that need another error check first).
func (bk *buckets) get(id uint64) (rec, error) {
	v := bk.msgs.Get(idKey(id))
	if v == nil {
		return rec{}, fmt.Errorf("%w: no queued message %d", ErrNotLeased, id)
	}
	r, err := decodeRec(v)
	if err != nil {
		return r, fmt.Errorf("message %d: %w", id, err)
	}
	return r, nil
}

// leased loads message id, which the caller is about to settle.
func (bk *buckets) leased(id uint64) (rec, error) {
	r, err := bk.get(id)
	if err == nil && r.leaseUntil == 0 {
		err = fmt.Errorf("%w: message %d is queued but not leased", ErrNotLeased, id)
	}
	return r, err
}

// head returns the id of receiver's first queued message.
func (bk *buckets) head(receiver []byte) (id uint64, ok bool, err error) {
	v := bk.recv.Get(receiver)
	if v == nil {
		return 0, false, nil
	}
	id, _, err = queueEnds(v)
	return id, err == nil, err
}

// promote puts receiver's head, if it has one, into the ready index: the
// previous head has just left (acked, expired or dead-lettered).
func (bk *buckets) promote(receiver []byte, partitions int) error {
	id, ok, err := bk.head(receiver)
	if !ok {
		return err
	}
	sendAt, err := recSendAt(bk.msgs.Get(idKey(id)))
	if err != nil {
		return fmt.Errorf("message %d: %w", id, err)
	}
	return bk.ready.Put(readyKey(PartitionOf(string(receiver), partitions), sendAt, id), nil)
}

// remove deletes queued message id (record r), which must be its
// receiver's head, and its index entries, but not its ready key: a leased
// message has none, and Dequeue deletes the key of an expired head before
// it looks at the record. The next message in the chain becomes the head;
// callers promote it.
func (bk *buckets) remove(id uint64, r *rec) error {
	head, tail, err := queueEnds(bk.recv.Get(r.receiver))
	if err != nil {
		return err
	}
	if head != id {
		return fmt.Errorf("%w: message %d leaves but %q's head is %d", ErrCorrupt, id, r.receiver, head)
	}
	if head == tail {
		err = bk.recv.Delete(r.receiver)
	} else {
		nk := idKey(id)
		nv := bk.next.Get(nk)
		if len(nv) != 8 {
			return fmt.Errorf("%w: message %d of %q has no next link", ErrCorrupt, id, r.receiver)
		}
		if err = bk.recv.Put(r.receiver, queueVal(keyID(nv), tail)); err == nil {
			err = bk.next.Delete(nk)
		}
	}
	if err != nil {
		return err
	}
	if err := bk.msgs.Delete(idKey(id)); err != nil {
		return err
	}
	if r.leaseUntil != 0 {
		if err := bk.lease.Delete(leaseKey(r.leaseUntil, id)); err != nil {
			return err
		}
	}
	if len(r.key) > 0 {
		k := keyIndexKey(r.receiver, r.key)
		// A newer version appended while this one was in flight owns the
		// key now; leave its entry alone.
		if v := bk.keys.Get(k); len(v) == 16 && keyID(v[:8]) == id {
			return bk.keys.Delete(k)
		}
	}
	return nil
}

// unlease clears the lease on message id (record r, which the caller then
// stores) and makes it ready again at r.sendAt.
func (bk *buckets) unlease(id uint64, r *rec, partitions int) error {
	if err := bk.lease.Delete(leaseKey(r.leaseUntil, id)); err != nil {
		return err
	}
	r.leaseUntil = 0
	if err := bk.msgs.Put(idKey(id), r.encode()); err != nil {
		return err
	}
	return bk.ready.Put(readyKey(PartitionOf(string(r.receiver), partitions), r.sendAt, id), nil)
}

// dropSuperseded removes leased message id (record r, its settlement
// applied at now), which an Overwrite superseded, as if that Overwrite
// had replaced it in place: the newest version of its key takes over its
// Attempts and LastError, and the receiver's next head, promoted, is due
// no sooner than r was (a backoff still holds). If r was being parked,
// the next head, if due by now, is parked in its place; one waiting for
// a later wave keeps waiting for it, so that a Wake cannot bring it
// forward.
func (bk *buckets) dropSuperseded(id uint64, r *rec, partitions int, now int64) error {
	if v := bk.keys.Get(keyIndexKey(r.receiver, r.key)); len(v) == 16 {
		if nid := keyID(v[:8]); nid != id {
			n, err := bk.get(nid)
			if err != nil {
				return fmt.Errorf("%w: key index names message %d: %v", ErrCorrupt, nid, err)
			}
			n.attempts, n.lastErr = r.attempts, r.lastErr
			if err := bk.msgs.Put(idKey(nid), n.encode()); err != nil {
				return err
			}
		}
	}
	if err := bk.remove(id, r); err != nil {
		return err
	}
	hid, ok, err := bk.head(r.receiver)
	if !ok {
		return err
	}
	h, err := bk.get(hid)
	if err != nil {
		return fmt.Errorf("%w: message %d: %v", ErrCorrupt, hid, err)
	}
	switch {
	case r.parked && h.sendAt > now:
	case r.parked || h.sendAt < r.sendAt:
		h.parked = r.parked
		h.sendAt = max(h.sendAt, r.sendAt)
		if err := bk.msgs.Put(idKey(hid), h.encode()); err != nil {
			return err
		}
	}
	return bk.ready.Put(readyKey(PartitionOf(string(r.receiver), partitions), h.sendAt, hid), nil)
}

// bury moves message id (record r, already updated with its Attempts and
// LastError) to the dead letters and promotes the receiver's next message.
func (bk *buckets) bury(id uint64, r *rec, partitions int) error {
	if err := bk.remove(id, r); err != nil {
		return err
	}
	// A dead letter is out of the queue: a replay is a new message, which
	// no Overwrite has superseded yet.
	r.leaseUntil, r.superseded, r.parked = 0, false, false
	if err := bk.dead.Put(idKey(id), r.encode()); err != nil {
		return err
	}
	return bk.promote(r.receiver, partitions)
}

// appendMsg stores a new message with record value val at the back of its
// receiver's queue and returns its id. A receiver with nothing queued gets
// it as its head, so it goes into the ready index too. Linking from the old
// tail (rather than indexing receiver+id) keeps the pages a batch dirties
// few: the recv bucket has one small entry per receiver, and the next links
// written are those of recent messages, which sit together.
func (bk *buckets) appendMsg(r *rec, val []byte, partitions int) (uint64, error) {
	id, err := bk.msgs.NextSequence()
	if err != nil {
		return 0, err
	}
	if err := bk.msgs.Put(idKey(id), val); err != nil {
		return 0, err
	}
	v := bk.recv.Get(r.receiver)
	if v == nil {
		if err := bk.recv.Put(r.receiver, queueVal(id, id)); err != nil {
			return 0, err
		}
		return id, bk.ready.Put(readyKey(PartitionOf(string(r.receiver), partitions), r.sendAt, id), nil)
	}
	head, tail, err := queueEnds(v)
	if err != nil {
		return 0, err
	}
	if err := bk.next.Put(idKey(tail), idKey(id)); err != nil {
		return 0, err
	}
	return id, bk.recv.Put(r.receiver, queueVal(head, id))
}
