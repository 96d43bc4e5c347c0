package outbox

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
)

// RelayStats is a point-in-time view of a Relay, one entry per store
// partition. The metric names in the field comments are the ones the
// Prometheus endpoint exports, each labelled by partition.
type RelayStats struct {
	Partitions []PartitionStats
}

// PartitionStats is one partition's limiter and counters. Counters count
// since NewRelay. Fields are read one by one, so under load they may be a
// few operations apart.
type PartitionStats struct {
	// Limit is the AIMD limit now (fleetsim_outbox_limiter_current_limit).
	Limit int
	// InFlight is the number of deliveries running now.
	InFlight int
	// Delivered counts deliveries the receiver took
	// (fleetsim_outbox_relay_delivered_total).
	Delivered uint64
	// Backpressure counts capacity answers
	// (fleetsim_outbox_relay_backpressure_total). Answers to deliveries
	// that were in flight together are one signal: at most one per window
	// lowers the limit (see Decreases).
	Backpressure uint64
	// Decreases counts the times a capacity answer lowered the limit, as
	// the partition's limiter counts them (flow.LimiterStats.Decreases).
	Decreases uint64
	// Retries counts failed attempts requeued with a delay, after a capacity
	// or a transient answer (fleetsim_outbox_relay_retries_total). A
	// message superseded while in flight is retried as its newer version,
	// which inherits its attempts and delay (Store, Superseded).
	Retries uint64
	// Errors counts transient (or unclassified) failures, which leave the
	// limit alone (fleetsim_outbox_relay_errors_total).
	Errors uint64
	// DeadLettered counts messages moved to the dead letters, for a
	// permanent error or at the store's MaxAttempts
	// (fleetsim_outbox_relay_dead_lettered_total).
	DeadLettered uint64
	// OfflineSkips counts head messages parked (Store.Park) because their
	// receiver was offline, or, with AssumeOffline, not yet marked online;
	// no attempt was charged.
	OfflineSkips uint64
	// Deferred counts leased messages handed back for want of a permit (the
	// limit fell during the poll, or the slow lane was full); they are not
	// charged.
	Deferred uint64
	// SlowLimit is the slow lane's AIMD limit now: how many deliveries to
	// receivers that answered "full" lately may be in flight at once,
	// within Limit (RelayOptions.SlowFor).
	SlowLimit int
	// SlowReceivers is how many receivers count as slow now: they
	// answered "full" within SlowFor (a few may have expired, awaiting a
	// sweep).
	SlowReceivers int
	// SlowDecreases counts the times a slow receiver's "full" lowered the
	// slow lane's limit. Decreases does not count them: the partition's
	// limit stayed.
	SlowDecreases uint64
	// SlowDeferred counts leases of slow receivers' messages handed back,
	// uncharged, to wait one RelayOptions.Interval because the slow lane
	// was full; they count in Deferred too.
	SlowDeferred uint64
	// Abandoned counts deliveries that failed during shutdown; their
	// messages were handed back uncharged.
	Abandoned uint64
	// StoreErrors counts failed store calls (polls, settling calls,
	// Wakes) and settlements given up: refused because the lease had
	// expired, or failed while the store is closed or the relay stopping.
	// The relay keeps going. A settling call that failed as a whole keeps
	// its settlements and tries again after a backoff (SettleRetries); a
	// settlement given up has its message delivered again when its lease
	// runs out.
	StoreErrors uint64
	// SettleRetries counts settling calls that carried settlements a failed
	// call had kept: full jitter over min(1 s, Backoff.Base × 2^n) after the
	// n-th failure in a row, so an ack lands within the store's lease and
	// its message is not delivered again
	// (fleetsim_outbox_relay_settle_retries_total).
	SettleRetries uint64
	// Superseded counts delivery outcomes that settled nothing: the
	// delivery's lease ran out while it was out, the store handed the
	// message out again, and the newer lease's delivery (or hand-back)
	// settles it instead. A failure counted in Errors or Backpressure
	// may be one of these; it was not retried.
	Superseded uint64
	// LimitHistory holds the limit each time a partition saw it move, oldest
	// first, at most RelayOptions.History samples. Under concurrency two
	// quick moves may show as one; every sample is a value the limit had.
	// Decreases, not the falls in this history, is the exact count.
	LimitHistory []LimitSample
	// SlowHistory is the slow lane's limit as LimitHistory is the
	// partition's.
	SlowHistory []LimitSample
}

// LimitSample is the AIMD limit at one moment.
type LimitSample struct {
	At    time.Time
	Limit int
}

// Total sums the partitions: the limits and in-flight counts add up to
// the relay's total concurrency. LimitHistory and SlowHistory are left
// empty.
func (s RelayStats) Total() PartitionStats {
	var t PartitionStats
	for _, p := range s.Partitions {
		t.Limit += p.Limit
		t.InFlight += p.InFlight
		t.Delivered += p.Delivered
		t.Backpressure += p.Backpressure
		t.Decreases += p.Decreases
		t.Retries += p.Retries
		t.Errors += p.Errors
		t.DeadLettered += p.DeadLettered
		t.OfflineSkips += p.OfflineSkips
		t.Deferred += p.Deferred
		t.SlowLimit += p.SlowLimit
		t.SlowReceivers += p.SlowReceivers
		t.SlowDecreases += p.SlowDecreases
		t.SlowDeferred += p.SlowDeferred
		t.Abandoned += p.Abandoned
		t.StoreErrors += p.StoreErrors
		t.SettleRetries += p.SettleRetries
		t.Superseded += p.Superseded
	}
	return t
}

// Stats returns the relay's per-partition view. Safe to call at any time,
// from any goroutine.
func (r *Relay) Stats() RelayStats {
	out := RelayStats{Partitions: make([]PartitionStats, len(r.parts))}
	for i, p := range r.parts {
		c := &p.c
		out.Partitions[i] = PartitionStats{
			Limit:         p.lim.Limit(),
			InFlight:      p.lim.InFlight(),
			Delivered:     c.delivered.Load(),
			Backpressure:  c.backpressure.Load(),
			Decreases:     p.lim.Stats().Decreases,
			Retries:       c.retries.Load(),
			Errors:        c.errors.Load(),
			DeadLettered:  c.deadLettered.Load(),
			OfflineSkips:  c.offlineSkips.Load(),
			Deferred:      c.deferred.Load(),
			SlowLimit:     p.slow.lim.Limit(),
			SlowReceivers: int(p.slow.size.Load()),
			SlowDecreases: p.slow.lim.Stats().Decreases,
			SlowDeferred:  c.slowDeferred.Load(),
			SlowHistory:   p.slow.hist.snapshot(),
			Abandoned:     c.abandoned.Load(),
			StoreErrors:   c.storeErrors.Load(),
			SettleRetries: c.settleRetries.Load(),
			Superseded:    c.superseded.Load(),
			LimitHistory:  p.hist.snapshot(),
		}
	}
	return out
}

type relayCounters struct {
	delivered, backpressure, retries, errors, deadLettered atomic.Uint64
	offlineSkips, deferred, abandoned, storeErrors         atomic.Uint64
	settleRetries, slowDeferred, superseded                atomic.Uint64
}

// history is a ring of the newest limit samples: bounded memory however
// long the relay runs.
type history struct {
	mu    sync.Mutex
	buf   []LimitSample
	next  int // where the next sample goes once buf is full
	last  int // the limit in the newest sample
	empty bool
}

func newHistory(n int) history {
	return history{buf: make([]LimitSample, 0, n), empty: true}
}

// add samples lim's limit if it differs from the newest sample. The limit
// is read under the lock so samples are stored in the order they were read.
func (h *history) add(c clock.Clock, lim *flow.Limiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := lim.Limit()
	if !h.empty && v == h.last {
		return
	}
	h.empty, h.last = false, v
	s := LimitSample{At: c.Now(), Limit: v}
	if len(h.buf) < cap(h.buf) {
		h.buf = append(h.buf, s)
		return
	}
	h.buf[h.next] = s
	h.next = (h.next + 1) % len(h.buf)
}

func (h *history) snapshot() []LimitSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]LimitSample, 0, len(h.buf))
	out = append(out, h.buf[h.next:]...)
	return append(out, h.buf[:h.next]...)
}
