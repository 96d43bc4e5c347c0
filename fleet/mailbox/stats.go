package mailbox

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/stats"
)

// counters are guarded by Mailbox.mu.
type counters struct {
	offered, taken                                  uint64
	droppedOldest, droppedNewest, droppedCoalesced  uint64
	rejectedFull, rejectedTimeout, rejectedCanceled uint64
	rejectedClosed                                  uint64
	maxDepth                                        int
	peak                                            int // most queued since the last Peak
}

// Stats is a point-in-time view of a Mailbox. The counts are taken together
// under the mailbox's lock, so the accounting identity holds exactly:
//
//	Offered == Taken + Dropped() + Rejected() + Depth
type Stats struct {
	Policy   Policy
	Capacity int
	Depth    int // queued now
	MaxDepth int // most queued at once since New

	Offered uint64
	Taken   uint64

	// Dropped, by reason: the mailbox discarded these by its policy.
	DroppedOldest    uint64 // evicted by DropOldest
	DroppedNewest    uint64 // refused by DropNewest (Offer returned ErrDropped)
	DroppedCoalesced uint64 // superseded in place by a newer message with the same key

	// Rejected, by reason: Offer returned an error and the sender still
	// holds the message.
	RejectedFull     uint64 // *FullError at once (Reject, Coalesce)
	RejectedTimeout  uint64 // *FullError after BlockTimeout (Block)
	RejectedCanceled uint64 // the sender's context ended while blocked
	RejectedClosed   uint64 // ErrClosed

	// ServiceTime is the consumer's measured time per message (EWMA), the
	// basis of RetryAfter.
	ServiceTime time.Duration
	// Wait is the distribution of time from offer to take. If the
	// histogram is shared (Options.Wait), it covers every mailbox sharing it.
	Wait stats.HistogramSnapshot
}

// Dropped is the total dropped for every reason.
func (s Stats) Dropped() uint64 { return s.DroppedOldest + s.DroppedNewest + s.DroppedCoalesced }

// Rejected is the total rejected for every reason.
func (s Stats) Rejected() uint64 {
	return s.RejectedFull + s.RejectedTimeout + s.RejectedCanceled + s.RejectedClosed
}

// Peak returns the most messages queued at once since the previous call
// of Peak (since New, the first time), and starts the next period at the
// depth now. Unlike Stats' MaxDepth, a reader can tell with it what the
// mailbox held between two moments of its own: one reader, since a call
// ends the period for every caller. Safe for concurrent use.
func (m *Mailbox[T]) Peak() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := max(m.counts.peak, m.n)
	m.counts.peak = m.n
	return p
}

// Stats returns the mailbox's counters, depth and wait distribution. It
// holds the lock only to copy the counters.
func (m *Mailbox[T]) Stats() Stats {
	m.mu.Lock()
	c, depth, capacity, service := m.counts, m.n, m.limit, m.service
	m.mu.Unlock()
	return Stats{
		Policy: m.opts.Policy, Capacity: capacity, Depth: depth, MaxDepth: c.maxDepth,
		Offered: c.offered, Taken: c.taken,
		DroppedOldest: c.droppedOldest, DroppedNewest: c.droppedNewest, DroppedCoalesced: c.droppedCoalesced,
		RejectedFull: c.rejectedFull, RejectedTimeout: c.rejectedTimeout,
		RejectedCanceled: c.rejectedCanceled, RejectedClosed: c.rejectedClosed,
		ServiceTime: service,
		Wait:        m.waitHist.Snapshot(),
	}
}
