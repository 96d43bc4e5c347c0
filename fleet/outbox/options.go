package outbox

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Durability says when a bbolt Enqueue returns relative to the disk.
type Durability int

const (
	// Sync: every Enqueue call commits its own transaction and fsyncs
	// before returning. Survives kill -9 and power loss.
	Sync Durability = iota
	// Batch: concurrent Enqueue calls share one transaction and one fsync
	// (group commit); each still returns only after its data is on disk.
	Batch
	// None: no fsync. Survives kill -9 of the process (the OS has the
	// pages) but NOT a power loss or kernel crash. For fast simulations
	// only.
	None
)

func (d Durability) String() string {
	switch d {
	case Sync:
		return "sync"
	case Batch:
		return "batch"
	case None:
		return "none"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// ParseDurability parses "sync", "batch" or "none".
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "sync":
		return Sync, nil
	case "batch":
		return Batch, nil
	case "none":
		return None, nil
	}
	return 0, fmt.Errorf("unknown durability %q (valid: sync, batch, none)", s)
}

// Options configures a Store. The zero value of each field takes the default
// shown in DefaultOptions.
type Options struct {
	// Clock supplies now for SendAt, TTL, leases and ages. Default: wall clock.
	Clock clock.Clock
	// Partitions divides receivers for Dequeue. Default 1.
	Partitions int
	// MaxAttempts is the number of failed deliveries after which Nack moves
	// a message to the dead letters. Default 10.
	MaxAttempts int
	// LeaseTimeout is how long a dequeued, unsettled message stays invisible.
	// Default 30 s.
	LeaseTimeout time.Duration
	// MaxDepth bounds the queued messages; Enqueue past it returns ErrFull.
	// Overwrites of a queued message always succeed. 0: unbounded.
	MaxDepth int
	// Durability applies to the bbolt store only. Default Sync.
	Durability Durability
	// OpenTimeout bounds the wait for the bbolt file lock. Default 1 s.
	OpenTimeout time.Duration
}

// DefaultOptions lists the defaults.
var DefaultOptions = Options{
	Clock:        clock.Real{},
	Partitions:   1,
	MaxAttempts:  10,
	LeaseTimeout: 30 * time.Second,
	Durability:   Sync,
	OpenTimeout:  time.Second,
}

// withDefaults fills zero fields from DefaultOptions and checks the rest.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Partitions == 0 {
		o.Partitions = d.Partitions
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = d.MaxAttempts
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = d.LeaseTimeout
	}
	if o.OpenTimeout == 0 {
		o.OpenTimeout = d.OpenTimeout
	}
	switch {
	case o.Partitions < 1 || o.Partitions > MaxPartitions:
		return o, fmt.Errorf("outbox: partitions %d: must be 1..%d", o.Partitions, MaxPartitions)
	case o.MaxAttempts < 1:
		return o, fmt.Errorf("outbox: max attempts %d: must be at least 1", o.MaxAttempts)
	case o.LeaseTimeout < 0:
		return o, fmt.Errorf("outbox: lease timeout %v: must be positive", o.LeaseTimeout)
	case o.MaxDepth < 0:
		return o, fmt.Errorf("outbox: max depth %d: must be 0 (unbounded) or positive", o.MaxDepth)
	case o.Durability < Sync || o.Durability > None:
		return o, fmt.Errorf("outbox: durability %d: must be sync, batch or none", o.Durability)
	}
	return o, nil
}
