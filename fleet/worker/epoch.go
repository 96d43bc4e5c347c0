package worker

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
)

// epochs names connections. An epoch is this process's random 64-bit
// prefix and a process-wide connection count, "9f2c4e1a7b3d5e60-12": unique
// for every connection attempt of every worker in the process, and across
// processes (a restarted worker draws a new prefix) but for a 2^-64 chance.
//
// Not a clock: a wall clock steps back and simulated clocks repeat (two
// runs of a scenario, a restarted process at the same simulated time),
// and the leader needs no order, only "the same connection or not". Not
// the worker's seeded randomness either: a restarted process replays its
// seed, which would repeat its epochs, and drawing from the seeded stream
// would shift every backoff jitter that follows. An epoch decides nothing
// in the simulation; it only names a connection.
var epochs struct {
	once   sync.Once
	prefix string
	n      atomic.Uint64
}

// newEpoch returns a fresh epoch (a valid wire.ValidEpoch).
func newEpoch() string {
	epochs.once.Do(func() {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		epochs.prefix = hex.EncodeToString(b[:])
	})
	return epochs.prefix + "-" + strconv.FormatUint(epochs.n.Add(1), 10)
}
