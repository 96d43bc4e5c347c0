package outbox_test

import (
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// model is the reference the state-machine test (model_test.go) holds a
// Store to: the contract, written as plainly as possible.

type modelMsg struct {
	outbox.Message
	leased     bool
	leaseUntil time.Time
	superseded bool // an Overwrite found it leased and appended a newer version
	parked     bool // waits for Wake; its SendAt is only the recheck
}

type model struct {
	o      outbox.Options
	now    time.Time
	nextID uint64
	queues map[string][]*modelMsg // per receiver, [0] is the head
	byID   map[uint64]*modelMsg
	keys   map[[2]string]uint64 // (receiver, key) -> newest queued id
	dead   map[uint64]outbox.Message
	c      outbox.Stats // counters since open

}

func newModel(o outbox.Options) *model {
	return &model{o: o, now: t0, queues: map[string][]*modelMsg{}, byID: map[uint64]*modelMsg{},
		keys: map[[2]string]uint64{}, dead: map[uint64]outbox.Message{}}
}

func (m *model) depth() int { return len(m.byID) }

// enqueue applies one message (already validated) and returns its receipt;
// bounded false skips MaxDepth (Replay). ok false means ErrFull. The
// caller counts Enqueued (every message of a call that succeeds).
func (m *model) enqueue(in outbox.Message, bounded bool) (outbox.Receipt, bool) {
	in.Attempts, in.LastError, in.CreatedAt = 0, "", m.now
	if in.SendAt.IsZero() {
		in.SendAt = m.now
	}
	k := [2]string{in.Receiver, in.Key}
	if id, ok := m.keys[k]; ok && in.Conflict == outbox.Overwrite {
		old := m.byID[id]
		if in.Seq < old.Seq {
			m.c.Stale++
			return outbox.Receipt{ID: id, Outcome: outbox.Stale}, true
		}
		if !old.leased {
			in.ID = id
			switch {
			case !old.parked:
				if in.SendAt.Before(old.SendAt) {
					in.SendAt = old.SendAt
				}
			case in.SendAt.After(m.now): // a later wave: no longer parked
				old.parked = false
			default:
				in.SendAt = old.SendAt
			}
			in.Attempts, in.LastError = old.Attempts, old.LastError
			old.Message = in
			m.c.Overwritten++
			return outbox.Receipt{ID: id, Outcome: outbox.Replaced}, true
		}
		if bounded && m.o.MaxDepth > 0 && m.depth() >= m.o.MaxDepth {
			return outbox.Receipt{}, false
		}
		old.superseded = true
	}
	if bounded && m.o.MaxDepth > 0 && m.depth() >= m.o.MaxDepth {
		return outbox.Receipt{}, false
	}
	m.nextID++
	in.ID = m.nextID
	e := &modelMsg{Message: in}
	m.byID[in.ID] = e
	m.c.PeakDepth = max(m.c.PeakDepth, len(m.byID))
	m.queues[in.Receiver] = append(m.queues[in.Receiver], e)
	if in.Key != "" {
		m.keys[k] = in.ID
	}
	return outbox.Receipt{ID: in.ID, Outcome: outbox.Appended}, true
}

func (m *model) clone() *model {
	c := *m
	c.queues, c.byID, c.keys, c.dead = map[string][]*modelMsg{}, map[uint64]*modelMsg{}, maps(m.keys), maps(m.dead)
	for r, q := range m.queues {
		for _, e := range q {
			ce := *e
			c.byID[e.ID] = &ce
			c.queues[r] = append(c.queues[r], &ce)
		}
	}
	return &c
}

func maps[K comparable, V any](in map[K]V) map[K]V {
	out := make(map[K]V, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// remove drops receiver's head (which e is).
func (m *model) remove(e *modelMsg) {
	q := m.queues[e.Receiver][1:]
	if len(q) == 0 {
		delete(m.queues, e.Receiver)
	} else {
		m.queues[e.Receiver] = q
	}
	delete(m.byID, e.ID)
	if k := [2]string{e.Receiver, e.Key}; e.Key != "" && m.keys[k] == e.ID {
		delete(m.keys, k)
	}
}

// handBack returns the leased e, undelivered and with its settlement
// applied, to the queue; if it was superseded it is dropped instead, as if
// the Overwrite had replaced it in place: the key's newest version takes
// its Attempts and LastError, and the receiver's next head is due no
// sooner than e was, or, if e was being parked, is parked in its place
// if it is due by now. It reports the drop.
func (m *model) handBack(e *modelMsg) bool {
	e.leased = false
	if !e.superseded {
		return false
	}
	if id, ok := m.keys[[2]string{e.Receiver, e.Key}]; ok && id != e.ID {
		n := m.byID[id]
		n.Attempts, n.LastError = e.Attempts, e.LastError
	}
	m.remove(e)
	if q := m.queues[e.Receiver]; len(q) > 0 && (!e.parked || !q[0].SendAt.After(m.now)) {
		q[0].parked = e.parked
		if q[0].SendAt.Before(e.SendAt) {
			q[0].SendAt = e.SendAt
		}
	}
	m.c.Overwritten++
	return true
}

func (m *model) dequeue(partition, max int) []outbox.Message {
	for _, e := range m.byID {
		if e.leased && !m.now.Before(e.leaseUntil) {
			m.handBack(e)
		}
	}
	var out []outbox.Message
	for len(out) < max {
		var best *modelMsg
		for r, q := range m.queues {
			h := q[0]
			if outbox.PartitionOf(r, m.o.Partitions) != partition || h.leased || h.SendAt.After(m.now) {
				continue
			}
			if best == nil || h.SendAt.Before(best.SendAt) || (h.SendAt.Equal(best.SendAt) && h.ID < best.ID) {
				best = h
			}
		}
		if best == nil {
			break
		}
		if best.Expired(m.now) {
			m.c.Expired++
			m.remove(best)
			continue
		}
		best.leased, best.leaseUntil, best.parked = true, m.now.Add(m.o.LeaseTimeout), false
		out = append(out, best.Message)
	}
	return out
}

func (m *model) bury(e *modelMsg) {
	m.remove(e)
	m.dead[e.ID] = e.Message
	m.c.DeadLettered++
}

func (m *model) deadIDs() []uint64 {
	return slices.Sorted(func(yield func(uint64) bool) {
		for id := range m.dead {
			if !yield(id) {
				return
			}
		}
	})
}

func (m *model) stats() outbox.Stats {
	s := m.c
	s.Depth, s.DeadLetters = len(m.byID), len(m.dead)
	var oldest *modelMsg
	for _, e := range m.byID {
		if e.leased {
			s.Leased++
		}
		if oldest == nil || e.ID < oldest.ID {
			oldest = e
		}
	}
	if oldest != nil {
		s.OldestAge = m.now.Sub(oldest.CreatedAt)
	}
	return s
}

func withSendAt(e *modelMsg, at time.Time) *modelMsg {
	e.SendAt = at
	return e
}

// parkedUntil marks e parked with its recheck (zero: none).
func parkedUntil(e *modelMsg, recheck time.Time) *modelMsg {
	if recheck.IsZero() {
		recheck = never
	}
	e.SendAt, e.parked = recheck, true
	return e
}
