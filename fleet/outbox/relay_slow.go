package outbox

import (
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
)

// slowLane keeps a class of slow receivers from throttling the rest of
// their partition. A receiver that answers "full" joins the class for
// RelayOptions.SlowFor after its latest "full". A delivery to the class
// takes a permit from the lane's own AIMD limiter as well as one from the
// partition's, which stays the ceiling over both classes. The class's
// "full" answers halve the lane's limit (once per window), never the
// partition's, so every other receiver goes on at the partition's pace
// while the class is paced by its own. The first "full" from a receiver
// not (yet) in the class still halves the partition's limit: it is news,
// and when every receiver pushes back, all of them soon sit in the lane
// and its limit does what the partition's did for all.
//
// Memory is one map entry per receiver that answered "full" within
// SlowFor (the receiver's name, shared with its messages, and a time),
// created at its first "full" and dropped by a sweep once it has been
// quiet for SlowFor: nothing for receivers that never push back, and one
// limiter per partition however many do.
//
// The map is owned by the partition's loop goroutine: deliveries report
// their "full" answers through their outcomes, which the loop collects
// before the receiver's next message can be leased (a receiver's next
// message is visible only once this one is settled), so no lock is needed.
type slowLane struct {
	lim   *flow.Limiter
	hist  history
	span  time.Duration
	until map[string]time.Time // receiver: in the class until then
	sweep time.Time            // next sweep of expired entries
	size  atomic.Int64         // len(until), for Stats
}

func newSlowLane(o RelayOptions) *slowLane {
	return &slowLane{lim: flow.NewLimiter(o.Limiter), hist: newHistory(o.History), span: o.SlowFor}
}

// mark puts receiver in the class until SlowFor after now.
func (s *slowLane) mark(receiver string, now time.Time) {
	if s.until == nil {
		s.until = make(map[string]time.Time)
		s.sweep = now.Add(s.span)
	}
	s.until[receiver] = now.Add(s.span)
	s.size.Store(int64(len(s.until)))
}

// has reports whether receiver is in the class at now.
func (s *slowLane) has(receiver string, now time.Time) bool {
	until, ok := s.until[receiver]
	return ok && now.Before(until)
}

// expire drops the receivers quiet for SlowFor, at most once per SlowFor.
// A map does not shrink as entries are deleted, so one left empty is
// dropped whole: after a burst of slow receivers the memory goes back.
func (s *slowLane) expire(now time.Time) {
	if s.until == nil || now.Before(s.sweep) {
		return
	}
	for r, until := range s.until {
		if !now.Before(until) {
			delete(s.until, r)
		}
	}
	s.sweep = now.Add(s.span)
	if len(s.until) == 0 {
		s.until = nil
	}
	s.size.Store(int64(len(s.until)))
}

// permits are the limiter slots one delivery holds: always the
// partition's, and the slow lane's too if its receiver was in the class
// when it was sent.
type permits struct {
	part, lane flow.Permit
	slow       bool
}

// done returns the permits with the limits moved by err. A "full" answer
// halves the lane's limit if the receiver was in the class, and the
// partition's otherwise; a success raises both limits it held.
func (ps permits) done(err error) {
	if !ps.slow {
		ps.part.Done(err)
		return
	}
	ps.lane.Done(err)
	if flow.Classify(err) == flow.Backpressure {
		ps.part.Release()
		return
	}
	ps.part.Done(err)
}

// release returns the permits without moving either limit.
func (ps permits) release() {
	if ps.slow {
		ps.lane.Release()
	}
	ps.part.Release()
}
