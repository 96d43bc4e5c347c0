package outbox_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// A state-machine test: random operations on a Store and on a small
// reference model of the contract, compared after every step. The model
// predicts every Dequeue exactly (ids, order, fields), every error, the
// dead letters and every Stats field, so a lost, duplicated, reordered or
// wrongly overwritten message shows up as a difference. Check also holds
// the store's own Stats to the balance documented on Stats.

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

// never is how a store reports a message parked with no recheck: the
// largest time a bbolt record holds.
var never = time.Unix(0, math.MaxInt64)

// machine drives a store and the model with the same operations.
type machine struct {
	s      outbox.Store
	m      *model
	clk    *clock.Fake
	reopen func() outbox.Store // nil: the store cannot be reopened

	// What the store held when last opened, for the balance in Check.
	depth0, dead0 int
}

var receivers = []string{"a", "b", "c", "d", "e"}

func (k *machine) genMessage(t *rapid.T) outbox.Message {
	msg := outbox.Message{
		Receiver: rapid.SampledFrom(receivers).Draw(t, "receiver"),
		Kind:     rapid.SampledFrom([]string{"cmd", "cfg"}).Draw(t, "kind"),
		Payload:  []byte(fmt.Sprint(rapid.IntRange(0, 999).Draw(t, "payload"))),
	}
	if rapid.IntRange(0, 2).Draw(t, "keyed") > 0 {
		msg.Key = rapid.SampledFrom([]string{"k1", "k2"}).Draw(t, "key")
		msg.Seq = uint64(rapid.IntRange(0, 5).Draw(t, "seq"))
		if rapid.IntRange(0, 3).Draw(t, "overwrite") > 0 {
			msg.Conflict = outbox.Overwrite
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "has ttl") == 0 {
		msg.TTL = time.Duration(rapid.IntRange(1, 6).Draw(t, "ttl")) * time.Second
	}
	if rapid.IntRange(0, 3).Draw(t, "has sendAt") == 0 {
		msg.SendAt = k.m.now.Add(time.Duration(rapid.IntRange(-2, 4).Draw(t, "sendAt")) * time.Second)
	}
	return msg
}

func (k *machine) Enqueue(t *rapid.T) {
	n := rapid.IntRange(1, 3).Draw(t, "n")
	var msgs []outbox.Message
	seen := map[[2]string]bool{}
	for range n {
		msg := k.genMessage(t)
		// Two versions of one key in one call: the stores may count the
		// room they need differently (the contract does not say).
		if p := [2]string{msg.Receiver, msg.Key}; msg.Key != "" {
			if seen[p] {
				continue
			}
			seen[p] = true
		}
		msgs = append(msgs, msg)
	}
	mm := k.m.clone()
	want := make([]outbox.Receipt, len(msgs))
	full := false
	for i, msg := range msgs {
		if full {
			break
		}
		var ok bool
		if want[i], ok = mm.enqueue(msg, true); !ok {
			full = true
			break
		}
	}
	got, err := k.s.Enqueue(ctx, msgs...)
	if full {
		if !errors.Is(err, outbox.ErrFull) {
			t.Fatalf("Enqueue past max depth %d (depth %d): %v, want ErrFull", k.m.o.MaxDepth, k.m.depth(), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Enqueue receipts %+v, want %+v", got, want)
	}
	k.m = mm
	k.m.c.Enqueued += uint64(len(msgs))
}

func (k *machine) Dequeue(t *rapid.T) {
	p := rapid.IntRange(0, k.m.o.Partitions-1).Draw(t, "partition")
	max := rapid.IntRange(0, 4).Draw(t, "max")
	got, err := k.s.Dequeue(ctx, p, max)
	if err != nil {
		t.Fatalf("Dequeue: %v", err)
	}
	k.checkDequeue(t, p, max, got)
}

// checkDequeue dequeues from the model and compares.
func (k *machine) checkDequeue(t *rapid.T, p, max int, got []outbox.Message) {
	want := k.m.dequeue(p, max)
	if len(got) != len(want) {
		t.Fatalf("Dequeue(%d, %d) = %s, want %s", p, max, show(got), show(want))
	}
	for i := range got {
		if d := diff(got[i], want[i]); d != "" {
			t.Fatalf("Dequeue(%d, %d)[%d]: %s\ngot  %s\nwant %s", p, max, i, d, show(got), show(want))
		}
	}
}

// pickID is mostly a leased id, sometimes any other.
func (k *machine) pickID(t *rapid.T) uint64 {
	var leased []uint64
	for id, e := range k.m.byID {
		if e.leased {
			leased = append(leased, id)
		}
	}
	slices.Sort(leased)
	if len(leased) > 0 && rapid.IntRange(0, 4).Draw(t, "leased?") > 0 {
		return rapid.SampledFrom(leased).Draw(t, "id")
	}
	return uint64(rapid.IntRange(0, int(k.m.nextID)+1).Draw(t, "id"))
}

// settle checks err against the model: nil iff id is leased there.
func (k *machine) settle(t *rapid.T, op string, id uint64, err error) (*modelMsg, bool) {
	e := k.m.byID[id]
	if e == nil || !e.leased {
		if !errors.Is(err, outbox.ErrNotLeased) {
			t.Fatalf("%s(%d) of a message not leased: %v, want ErrNotLeased", op, id, err)
		}
		return nil, false
	}
	if err != nil {
		t.Fatalf("%s(%d): %v", op, id, err)
	}
	e.leased = false
	return e, true
}

func (k *machine) Ack(t *rapid.T) {
	id := k.pickID(t)
	if e, ok := k.settle(t, "Ack", id, k.s.Ack(ctx, id)); ok {
		k.m.remove(e)
		k.m.c.Acked++
	}
}

func (k *machine) Nack(t *rapid.T) {
	id := k.pickID(t)
	delay := time.Duration(rapid.IntRange(0, 3).Draw(t, "delay")) * time.Second
	res, err := k.s.Nack(ctx, id, delay, "nack "+fmt.Sprint(id))
	e, ok := k.settle(t, "Nack", id, err)
	if !ok {
		return
	}
	e.Attempts++
	e.LastError = "nack " + fmt.Sprint(id)
	want := outbox.Requeued
	switch {
	case e.Attempts >= k.m.o.MaxAttempts:
		want = outbox.DeadLettered
		k.m.bury(e)
	case k.m.handBack(withSendAt(e, k.m.now.Add(delay))):
		want = outbox.Superseded
	default:
		k.m.c.Nacked++
	}
	if res != want {
		t.Fatalf("Nack(%d) = %v, want %v", id, res, want)
	}
}

func (k *machine) Release(t *rapid.T) {
	id := k.pickID(t)
	at := k.m.now.Add(time.Duration(rapid.IntRange(-1, 3).Draw(t, "at")) * time.Second)
	if e, ok := k.settle(t, "Release", id, k.s.Release(ctx, id, at)); ok && !k.m.handBack(withSendAt(e, at)) {
		k.m.c.Released++
	}
}

func (k *machine) Park(t *rapid.T) {
	id := k.pickID(t)
	var recheck time.Time
	if rapid.IntRange(0, 3).Draw(t, "no recheck") > 0 {
		recheck = k.m.now.Add(time.Duration(rapid.IntRange(-1, 3).Draw(t, "recheck")) * time.Second)
	}
	if e, ok := k.settle(t, "Park", id, k.s.Park(ctx, id, recheck)); ok && !k.m.handBack(parkedUntil(e, recheck)) {
		k.m.c.Parked++
	}
}

func (k *machine) DeadLetter(t *rapid.T) {
	id := k.pickID(t)
	if e, ok := k.settle(t, "DeadLetter", id, k.s.DeadLetter(ctx, id, "permanent")); ok {
		e.LastError = "permanent"
		k.m.bury(e)
	}
}

// Settle settles 1-5 messages in one call: a random op for each of
// mostly leased ids, with some not leased and some repeated, so a call
// mixes outcomes. The model applies them one by one, in order.
func (k *machine) Settle(t *rapid.T) {
	ss := k.genSettlements(t)
	got, err := k.s.Settle(ctx, ss...)
	if err != nil {
		t.Fatalf("Settle(%+v): %v", ss, err)
	}
	k.checkSettle(t, ss, got)
}

// SettleAndDequeue is Settle, then Dequeue of the model.
func (k *machine) SettleAndDequeue(t *rapid.T) {
	ss := k.genSettlements(t)
	p := rapid.IntRange(0, k.m.o.Partitions-1).Draw(t, "partition")
	max := rapid.IntRange(0, 4).Draw(t, "max")
	res, got, err := k.s.SettleAndDequeue(ctx, p, max, ss...)
	if err != nil {
		t.Fatalf("SettleAndDequeue(%d, %d, %+v): %v", p, max, ss, err)
	}
	k.checkSettle(t, ss, res)
	k.checkDequeue(t, p, max, got)
}

func (k *machine) genSettlements(t *rapid.T) []outbox.Settlement {
	n := rapid.IntRange(1, 5).Draw(t, "n")
	ss := make([]outbox.Settlement, n)
	for i := range ss {
		s := outbox.Settlement{ID: k.pickID(t), Op: outbox.SettleOp(rapid.IntRange(0, 4).Draw(t, "op"))}
		if i > 0 && rapid.IntRange(0, 5).Draw(t, "repeat") == 0 {
			s.ID = ss[rapid.IntRange(0, i-1).Draw(t, "of")].ID
		}
		switch s.Op {
		case outbox.SettleNack:
			s.Delay = time.Duration(rapid.IntRange(-1, 3).Draw(t, "delay")) * time.Second
			s.Cause = fmt.Sprintf("nack %d/%d", s.ID, i)
		case outbox.SettleRelease, outbox.SettlePark:
			if rapid.IntRange(0, 3).Draw(t, "release now, or park for good") > 0 {
				s.SendAt = k.m.now.Add(time.Duration(rapid.IntRange(-1, 3).Draw(t, "at")) * time.Second)
			}
		case outbox.SettleDeadLetter:
			s.Cause = fmt.Sprintf("dead %d/%d", s.ID, i)
		}
		ss[i] = s
	}
	return ss
}

// checkSettle applies ss to the model in order and checks the store's
// results against it.
func (k *machine) checkSettle(t *rapid.T, ss []outbox.Settlement, got []outbox.SettleResult) {
	if len(got) != len(ss) {
		t.Fatalf("Settle: %d results for %d settlements", len(got), len(ss))
	}
	for i, s := range ss {
		r := got[i]
		if r.ID != s.ID {
			t.Fatalf("Settle result %d is for id %d, want %d", i, r.ID, s.ID)
		}
		e, ok := k.settle(t, fmt.Sprintf("Settle[%d] %v", i, s.Op), s.ID, r.Err)
		if !ok {
			continue
		}
		switch s.Op {
		case outbox.SettleAck:
			k.m.remove(e)
			k.m.c.Acked++
		case outbox.SettleNack:
			e.Attempts++
			e.LastError = s.Cause
			want := outbox.Requeued
			switch {
			case e.Attempts >= k.m.o.MaxAttempts:
				want = outbox.DeadLettered
				k.m.bury(e)
			case k.m.handBack(withSendAt(e, k.m.now.Add(max(s.Delay, 0)))):
				want = outbox.Superseded
			default:
				k.m.c.Nacked++
			}
			if r.Nack != want {
				t.Fatalf("Settle[%d] nack of %d = %v, want %v", i, s.ID, r.Nack, want)
			}
		case outbox.SettleRelease:
			at := s.SendAt
			if at.IsZero() {
				at = k.m.now
			}
			if !k.m.handBack(withSendAt(e, at)) {
				k.m.c.Released++
			}
		case outbox.SettlePark:
			if !k.m.handBack(parkedUntil(e, s.SendAt)) {
				k.m.c.Parked++
			}
		case outbox.SettleDeadLetter:
			e.LastError = s.Cause
			k.m.bury(e)
		}
	}
}

func (k *machine) Wake(t *rapid.T) {
	r := rapid.SampledFrom(receivers).Draw(t, "receiver")
	if err := k.s.Wake(ctx, r); err != nil {
		t.Fatalf("Wake(%s): %v", r, err)
	}
	// Only a parked head is released; one waiting for its SendAt (a
	// wave, a backoff) stays put.
	if q := k.m.queues[r]; len(q) > 0 && q[0].parked {
		q[0].parked = false
		if q[0].SendAt.After(k.m.now) {
			q[0].SendAt = k.m.now
		}
	}
}

func (k *machine) Replay(t *rapid.T) {
	var ids []uint64
	if rapid.Bool().Draw(t, "some") {
		for _, id := range k.m.deadIDs() {
			if rapid.Bool().Draw(t, "pick") {
				ids = append(ids, id)
			}
		}
		ids = append(ids, k.m.nextID+7) // not a dead letter
		ids = rapid.Permutation(ids).Draw(t, "order")
	}
	want := slices.Sorted(func(yield func(uint64) bool) {
		for id := range k.m.dead {
			if (len(ids) == 0 || slices.Contains(ids, id)) && !yield(id) {
				return
			}
		}
	})
	n, err := k.s.Replay(ctx, ids...)
	if err != nil || n != len(want) {
		t.Fatalf("Replay(%v) = %d, %v; want %d", ids, n, err, len(want))
	}
	for _, id := range want {
		msg := k.m.dead[id]
		delete(k.m.dead, id)
		msg.SendAt = time.Time{}
		k.m.enqueue(msg, false) // counted as Replayed, not Enqueued
		k.m.c.Replayed++
	}
}

func (k *machine) Purge(t *rapid.T) {
	var ids []uint64
	for _, id := range k.m.deadIDs() {
		if rapid.Bool().Draw(t, "pick") {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 && rapid.Bool().Draw(t, "all") {
		ids = nil
	} else {
		ids = append(ids, k.m.nextID+3)
	}
	n, err := k.s.Purge(ctx, ids...)
	want := 0
	for id := range k.m.dead {
		if len(ids) == 0 || slices.Contains(ids, id) {
			delete(k.m.dead, id)
			want++
		}
	}
	k.m.c.Purged += uint64(want)
	if err != nil || n != want {
		t.Fatalf("Purge(%v) = %d, %v; want %d", ids, n, err, want)
	}
}

func (k *machine) Advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 4000).Draw(t, "ms")) * time.Millisecond
	k.clk.Advance(d)
	k.m.now = k.m.now.Add(d)
}

// Reopen closes and reopens a bbolt store: everything stays, leases
// expire, counters start again.
func (k *machine) Reopen(t *rapid.T) {
	if k.reopen == nil {
		t.Skip("not reopenable")
	}
	if err := k.s.Close(); err != nil {
		t.Fatal(err)
	}
	k.s = k.reopen()
	for _, e := range k.m.byID {
		if e.leased {
			k.m.handBack(e)
		}
	}
	k.m.c = outbox.Stats{}
	k.depth0, k.dead0 = k.m.depth(), len(k.m.dead)
}

func (k *machine) Check(t *rapid.T) {
	st := k.s.Stats()
	// The balance on Stats, on the store's own numbers: every message
	// enqueued or replayed since the open is queued or left exactly once.
	in := st.Enqueued + st.Replayed + uint64(k.depth0)
	out := st.Acked + st.Overwritten + st.Stale + st.Expired + st.DeadLettered + uint64(st.Depth)
	if in != out {
		t.Fatalf("Stats %+v do not balance (depth at open %d): %d in, %d out", st, k.depth0, in, out)
	}
	if dl := uint64(k.dead0) + st.DeadLettered - st.Replayed - st.Purged; uint64(st.DeadLetters) != dl {
		t.Fatalf("Stats %+v: %d dead letters, want %d (%d at open)", st, st.DeadLetters, dl, k.dead0)
	}
	if want := k.m.stats(); st != want {
		t.Fatalf("Stats =\n%+v, want\n%+v", st, want)
	}
	got, err := k.s.DeadLetters(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.SortedFunc(func(yield func(outbox.Message) bool) {
		for _, msg := range k.m.dead {
			if !yield(msg) {
				return
			}
		}
	}, func(a, b outbox.Message) int { return cmp.Compare(a.ID, b.ID) })
	if len(got) != len(want) {
		t.Fatalf("DeadLetters = %s, want %s", show(got), show(want))
	}
	for i := range got {
		if d := diff(got[i], want[i]); d != "" {
			t.Fatalf("DeadLetters[%d]: %s\ngot  %s\nwant %s", i, d, show(got), show(want))
		}
	}
}

// diff names the first field where a store's message differs from the
// model's ("" if none).
func diff(got, want outbox.Message) string {
	switch {
	case got.ID != want.ID:
		return "ID"
	case got.Receiver != want.Receiver, got.Kind != want.Kind, got.Key != want.Key:
		return "Receiver/Kind/Key"
	case !bytes.Equal(got.Payload, want.Payload):
		return "Payload"
	case got.Seq != want.Seq, got.Conflict != want.Conflict:
		return "Seq/Conflict"
	case got.TTL != want.TTL:
		return "TTL"
	case got.Attempts != want.Attempts, got.LastError != want.LastError:
		return "Attempts/LastError"
	case !got.CreatedAt.Equal(want.CreatedAt):
		return "CreatedAt"
	case !got.SendAt.Equal(want.SendAt):
		return "SendAt"
	}
	return ""
}

func show(ms []outbox.Message) string {
	var b bytes.Buffer
	for _, m := range ms {
		fmt.Fprintf(&b, "[id %d %s/%s key %q seq %d %s att %d sendAt +%v created +%v] ",
			m.ID, m.Receiver, m.Payload, m.Key, m.Seq, m.Conflict, m.Attempts, m.SendAt.Sub(t0), m.CreatedAt.Sub(t0))
	}
	return b.String()
}

func modelOptions(t *rapid.T) outbox.Options {
	o := outbox.Options{
		Partitions:   rapid.IntRange(1, 3).Draw(t, "partitions"),
		MaxAttempts:  rapid.IntRange(1, 3).Draw(t, "max attempts"),
		LeaseTimeout: time.Duration(rapid.IntRange(1, 5).Draw(t, "lease s")) * time.Second,
	}
	if rapid.Bool().Draw(t, "bounded") {
		o.MaxDepth = rapid.IntRange(1, 8).Draw(t, "max depth")
	}
	return o
}

func runModel(t *rapid.T, k *machine) {
	defer func() { k.s.Close() }()
	// rapid's default of about 30 steps rarely reaches the interesting
	// states (a lease running out, an overwrite of a message that backs
	// off): run several rounds on the same store.
	for range 5 {
		t.Repeat(rapid.StateMachineActions(k))
	}
}

func TestModelMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := modelOptions(t)
		clk := clock.NewFake(t0)
		o.Clock = clk
		s, err := outbox.NewMemory(o)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(o)
		runModel(t, &machine{s: s, m: m, clk: clk})
	})
}

func TestModelBolt(t *testing.T) {
	dir := t.TempDir()
	var n atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		o := modelOptions(t)
		clk := clock.NewFake(t0)
		o.Clock = clk
		o.Durability = outbox.None // durability is crash_test.go's business
		path := filepath.Join(dir, fmt.Sprintf("model-%d.db", n.Add(1)))
		open := func() outbox.Store {
			s, err := outbox.OpenBolt(path, o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		runModel(t, &machine{s: open(), m: newModel(o), clk: clk, reopen: open})
	})
}
