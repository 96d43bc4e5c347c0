package leader

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// nextSeq takes a command's sequence number from the outbox's store, which
// hands each out once and in order across restarts (a bbolt file keeps
// the count). The leader's clock has no say: a leader whose clock is
// behind its predecessor's still sends newer versions, never stale ones.
func (l *Leader) nextSeq(ctx context.Context) (uint64, error) {
	n, err := l.cfg.Store.NextSeq(ctx)
	if err != nil {
		return 0, err
	}
	if n > wire.MaxSeq {
		// 2^53 calls: unreachable in practice, but a number past it would
		// read as another on a worker that holds JSON numbers as doubles.
		return 0, fmt.Errorf("outbox sequence %d is past the protocol's highest, %d: start a new outbox file", n, uint64(wire.MaxSeq))
	}
	return n, nil
}

// uniqueKey is the idempotency key of a command with no natural one (a
// job, a ping): its kind and its sequence number, which no other command
// shares. The worker dedupes redeliveries of it like any keyed command.
func uniqueKey(kind wire.Kind, seq uint64) string {
	return string(kind) + "/" + strconv.FormatUint(seq, 10)
}
