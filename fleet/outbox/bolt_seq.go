package outbox

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// NextSeq hands out the store's next sequence number: 1, 2, 3, … in
// commit order, each once, across reopens of the file. It is the meta
// bucket's own bbolt sequence (NextSequence), so a file written before
// NextSeq existed starts at 1 and needs no new bucket. The number is as
// durable as any other write (Options.Durability): with sync or batch it
// is on disk when NextSeq returns, so a leader killed and restarted from
// the file never hands out a number twice.
//
// It commits as the relay's calls do (the commit queue in bolt_commit.go,
// not bbolt's DB.Batch): a lone caller — a deploy, a leader sending one
// command — starts a commit at once instead of waiting out the batch
// delay, and callers that overlap share one (docs/BENCHMARKS.md,
// sequence numbers).
func (b *Bolt) NextSeq(ctx context.Context) (uint64, error) {
	if err := b.enter(ctx); err != nil {
		return 0, err
	}
	defer b.mu.RUnlock()
	var seq uint64
	err := b.update(queued, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("%w: bucket %q is missing", ErrCorrupt, bucketMeta)
		}
		var err error
		seq, err = meta.NextSequence() // a rolled-back run takes it back
		return err
	})
	if err != nil {
		return 0, err
	}
	return seq, nil
}
