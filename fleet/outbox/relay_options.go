package outbox

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
)

// RelayOptions configures a Relay. The zero value of each field takes the
// default shown in DefaultRelayOptions.
type RelayOptions struct {
	// Clock must be the store's clock: the relay computes offline parking
	// times and limit samples on it. Default: wall clock.
	Clock clock.Clock
	// Interval is how often each partition polls its store when nothing
	// wakes it sooner. A finished delivery and Wake both wake the partition
	// at once, so the interval bounds only the latency of newly due
	// messages (enqueued, or out of backoff). Default 5 ms.
	Interval time.Duration
	// Batch bounds the messages one poll leases. A poll never leases more
	// than the limiter has permits for. Default 20.
	Batch int
	// Limiter configures each partition's AIMD limiter, and its slow
	// lane's (see SlowFor); zero fields take flow.DefaultLimiterOptions
	// (10 / 1 / 50, AIMD).
	Limiter flow.LimiterOptions
	// SlowFor is how long a receiver that answered "full" counts as slow
	// after its latest "full". Deliveries to slow receivers share a lane
	// with its own AIMD limiter (options as Limiter) under the partition's
	// limit: their "full" answers halve the lane's limit, not the
	// partition's, so a few slow receivers do not throttle the rest of the
	// partition. A "full" from a receiver not known to be slow halves the
	// partition's limit, as before. A receiver quiet for SlowFor leaves
	// the lane and is forgotten. Default 30 s.
	SlowFor time.Duration
	// SharedLimit turns the slow lane off: every delivery takes only its
	// partition's limiter, and every "full" halves it (once per window),
	// whichever receiver said it. For comparison runs that show what the
	// slow lane saves.
	SharedLimit bool
	// Backoff spaces retries after failures: full jitter over
	// [0, min(Cap, Base × 2^Attempts)]. Zero fields take flow.DefaultBackoff.
	Backoff flow.Backoff
	// Seed drives the jitter. Partition i draws from its own PCG seeded with
	// (Seed, i), so a run can be repeated.
	Seed uint64
	// OfflineRecheck is how long an offline receiver's head message stays
	// parked (Store.Park) when the relay meets it, if no Wake releases it
	// sooner. It only bounds the work spent on a receiver that came back
	// without anyone calling Wake: Wake makes a parked head due again at
	// once. No attempt is charged. Default 1 minute.
	OfflineRecheck time.Duration
	// History bounds the limit samples kept per partition (the newest are
	// kept). Default 256.
	History int
	// TryOffline makes SetOffline a no-op: the relay tries receivers known
	// to be offline, spending an attempt (and an ask timeout) on each. For
	// comparison runs that show what skipping them saves. It overrides
	// AssumeOffline.
	TryOffline bool
	// AssumeOffline counts a receiver as offline until SetOnline or Wake
	// names it, instead of online until SetOffline does. A leader that has
	// just (re)started does not know who is connected: with it, a due
	// message for a receiver not yet heard from is parked rather than sent
	// into the void to hold its slot for an ask timeout, and the
	// receiver's "online" wakes it.
	AssumeOffline bool
	// OnRunning, if set, is called once per Run when every partition's
	// loop has taken its first turn (settled nothing yet, leased what was
	// due): from then on the relay delivers. It runs on a goroutine of
	// Run's and must return promptly. A leader announces itself online
	// from it.
	OnRunning func()
}

// Partitions and batches of a leader's store and relay. DefaultPartitions
// is what a leader runs with unless told otherwise (leader --partitions,
// leader dlq --partitions, a scenario's leader.outbox.partitions): a store
// opened with Options.Partitions 0 has one (DefaultOptions), as a tool
// that reads it needs. MaxPartitions bounds a store (and so what a
// leader's flags and a scenario may ask for): each partition is a loop
// and a limiter of its own. MaxBatch bounds the messages one poll
// leases.
const (
	DefaultPartitions = 4
	MaxPartitions     = 256
	MaxBatch          = 10_000
)

// DefaultRelayOptions lists the defaults.
var DefaultRelayOptions = RelayOptions{
	Clock:          clock.Real{},
	Interval:       5 * time.Millisecond,
	Batch:          20,
	Limiter:        flow.DefaultLimiterOptions,
	Backoff:        flow.DefaultBackoff,
	OfflineRecheck: time.Minute,
	History:        256,
	SlowFor:        30 * time.Second,
}

// withDefaults fills zero fields from DefaultRelayOptions and checks the rest.
func (o RelayOptions) withDefaults() (RelayOptions, error) {
	d := DefaultRelayOptions
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Interval == 0 {
		o.Interval = d.Interval
	}
	if o.Batch == 0 {
		o.Batch = d.Batch
	}
	o.Limiter = LimiterDefaults(o.Limiter)
	if o.OfflineRecheck == 0 {
		o.OfflineRecheck = d.OfflineRecheck
	}
	if o.History == 0 {
		o.History = d.History
	}
	if o.SlowFor == 0 {
		o.SlowFor = d.SlowFor
	}
	switch {
	case o.Interval < 0:
		return o, fmt.Errorf("outbox: relay interval %v: must be positive", o.Interval)
	case o.Batch < 0 || o.Batch > MaxBatch:
		return o, fmt.Errorf("outbox: relay batch %d: must be 1 to %d", o.Batch, MaxBatch)
	case o.Backoff.Base < 0 || o.Backoff.Cap < 0:
		return o, fmt.Errorf("outbox: relay backoff base %v, cap %v: must be 0 (default) or positive", o.Backoff.Base, o.Backoff.Cap)
	case o.OfflineRecheck < 0:
		return o, fmt.Errorf("outbox: relay offline recheck %v: must be positive", o.OfflineRecheck)
	case o.History < 0:
		return o, fmt.Errorf("outbox: relay history %d: must be positive", o.History)
	case o.SlowFor < 0:
		return o, fmt.Errorf("outbox: relay slow-for %v: must be positive", o.SlowFor)
	}
	if err := o.Limiter.Validate(); err != nil {
		return o, fmt.Errorf("outbox: relay %w", err)
	}
	return o, nil
}

// LimiterDefaults fills the zero fields of a relay's limiter options from
// DefaultRelayOptions.Limiter. A Max left out rises to an Initial above
// the default Max, so that Initial alone is a valid setting.
func LimiterDefaults(o flow.LimiterOptions) flow.LimiterOptions {
	d := DefaultRelayOptions.Limiter
	if o.Initial == 0 {
		o.Initial = d.Initial
	}
	if o.Min == 0 {
		o.Min = d.Min
	}
	if o.Max == 0 {
		o.Max = max(d.Max, o.Initial)
	}
	return o
}
