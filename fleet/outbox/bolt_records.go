package outbox

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// bucketRecords holds Records: key -> value. A file from before Records
// has no such bucket; the first PutRecords creates it, and an older build
// ignores it, so the format version stays.
var bucketRecords = []byte("records")

// PutRecords writes rs in one transaction (Records), durable as
// Options.Durability says.
func (b *Bolt) PutRecords(ctx context.Context, rs ...Record) error {
	if err := validateRecords(rs); err != nil {
		return err
	}
	if err := b.enter(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	return b.update(batched, func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketRecords)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.Value == nil {
				err = bk.Delete([]byte(r.Key))
			} else {
				err = bk.Put([]byte(r.Key), r.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// GetRecord returns key's value, or ErrNoRecord (Records).
func (b *Bolt) GetRecord(ctx context.Context, key string) ([]byte, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	var out []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bucketRecords); bk != nil {
			if v := bk.Get([]byte(key)); v != nil {
				out = slices.Clone(v) // bbolt's slice lives only as long as tx
			}
		}
		return nil
	})
	if err == nil && out == nil {
		err = ErrNoRecord
	}
	return out, err
}

// ListRecords returns the records under prefix, in key order (Records):
// one seek, then a scan of the matching keys only.
func (b *Bolt) ListRecords(ctx context.Context, prefix string) ([]Record, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	var out []Record
	err := b.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketRecords)
		if bk == nil {
			return nil
		}
		p := []byte(prefix)
		c := bk.Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			out = append(out, Record{Key: string(k), Value: slices.Clone(v)})
		}
		return nil
	})
	return out, err
}

// Locate reports where each id is (Locator): one lookup in msgs (its
// record says whether it is leased), and in dead for those not queued,
// all in one read transaction.
func (b *Bolt) Locate(ctx context.Context, ids ...uint64) ([]Place, error) {
	if err := b.enter(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	out := make([]Place, len(ids))
	err := b.db.View(func(tx *bolt.Tx) error {
		msgs, dead := tx.Bucket(bucketMsgs), tx.Bucket(bucketDead)
		for i, id := range ids {
			k := idKey(id)
			if v := msgs.Get(k); v != nil {
				r, err := decodeRec(v)
				if err != nil {
					return fmt.Errorf("message %d: %w", id, err)
				}
				out[i] = Queued
				if r.leaseUntil != 0 {
					out[i] = Leased
				}
			} else if dead.Get(k) != nil {
				out[i] = Dead
			}
		}
		return nil
	})
	return out, err
}
