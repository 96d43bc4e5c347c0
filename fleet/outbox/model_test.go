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
	k.m.c = outbox.Stats{PeakDepth: k.m.depth()} // the high-water mark starts at the depth found
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
