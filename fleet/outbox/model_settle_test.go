package outbox_test

import (
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The state machine's settling actions (model_test.go): one message at a
// time, a Settle batch, and a relay's turn (SettleAndDequeue).

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
