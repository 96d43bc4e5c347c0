package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract, as a suite every implementation runs (bolt_test.go,
// memory_test.go). Each subtest opens a fresh store on its own fake clock.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// opener opens a fresh, empty store with o. It registers its own cleanup.
type opener func(t *testing.T, o outbox.Options) outbox.Store

var ctx = context.Background()

// env is one subtest's store and clock.
type env struct {
	t   *testing.T
	s   outbox.Store
	clk *clock.Fake
}

func newEnv(t *testing.T, open opener, o outbox.Options) *env {
	t.Helper()
	clk := clock.NewFake(t0)
	o.Clock = clk
	return &env{t: t, s: open(t, o), clk: clk}
}

func msg(receiver, payload string) outbox.Message {
	return outbox.Message{Receiver: receiver, Kind: "cmd", Payload: []byte(payload)}
}

func over(receiver, key string, seq uint64, payload string) outbox.Message {
	return outbox.Message{Receiver: receiver, Kind: "status", Payload: []byte(payload),
		Key: key, Seq: seq, Conflict: outbox.Overwrite}
}

func (e *env) enq(msgs ...outbox.Message) []outbox.Receipt {
	e.t.Helper()
	rs, err := e.s.Enqueue(ctx, msgs...)
	if err != nil {
		e.t.Fatalf("Enqueue: %v", err)
	}
	if len(rs) != len(msgs) {
		e.t.Fatalf("Enqueue: %d receipts for %d messages", len(rs), len(msgs))
	}
	return rs
}

func (e *env) deq(partition, max int) []outbox.Message {
	e.t.Helper()
	ms, err := e.s.Dequeue(ctx, partition, max)
	if err != nil {
		e.t.Fatalf("Dequeue(%d, %d): %v", partition, max, err)
	}
	return ms
}

// payloads of ms, in order.
func payloads(ms []outbox.Message) []string {
	var ps []string
	for _, m := range ms {
		ps = append(ps, string(m.Payload))
	}
	return ps
}

// want checks that the next Dequeue of partition 0 returns exactly these
// payloads, in this order.
func (e *env) want(max int, ps ...string) []outbox.Message {
	e.t.Helper()
	ms := e.deq(0, max)
	if got := payloads(ms); !slices.Equal(got, ps) {
		e.t.Fatalf("Dequeue = %q, want %q", got, ps)
	}
	return ms
}

// balanced checks the identity documented on Stats, for a store opened
// empty: every message enqueued or replayed is queued or was counted
// leaving exactly once.
func (e *env) balanced() outbox.Stats {
	e.t.Helper()
	st := e.s.Stats()
	in := st.Enqueued + st.Replayed
	out := st.Acked + st.Overwritten + st.Stale + st.Expired + st.DeadLettered + uint64(st.Depth)
	if in != out {
		e.t.Fatalf("Stats do not balance: enqueued %d + replayed %d = %d, but acked %d + overwritten %d + stale %d + expired %d + dead-lettered %d + depth %d = %d",
			st.Enqueued, st.Replayed, in, st.Acked, st.Overwritten, st.Stale, st.Expired, st.DeadLettered, st.Depth, out)
	}
	if dl := st.DeadLettered - st.Replayed - st.Purged; uint64(st.DeadLetters) != dl {
		e.t.Fatalf("dead letters %d, but dead-lettered %d - replayed %d - purged %d = %d", st.DeadLetters, st.DeadLettered, st.Replayed, st.Purged, dl)
	}
	return st
}

func (e *env) ack(ms ...outbox.Message) {
	e.t.Helper()
	for _, m := range ms {
		if err := e.s.Ack(ctx, m.ID); err != nil {
			e.t.Fatalf("Ack(%d %q): %v", m.ID, m.Payload, err)
		}
	}
}

func runContract(t *testing.T, open opener) {
	runOverwriteContract(t, open)
	runParkContract(t, open)

	t.Run("per-receiver order, one in flight", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"))
		e.enq(msg("a", "a3"))
		m := e.want(10, "a1")
		e.want(10) // a1 in flight: a2 must wait
		e.ack(m...)
		m = e.want(10, "a2")
		e.ack(m...)
		e.ack(e.want(10, "a3")...)
		e.want(10)
	})

	t.Run("receipts and ids in enqueue order", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		rs := e.enq(msg("a", "1"), msg("b", "2"), msg("a", "3"))
		rs = append(rs, e.enq(msg("c", "4"))...)
		for i, r := range rs {
			if r.Outcome != outbox.Appended {
				t.Fatalf("receipt %d = %v, want appended", i, r.Outcome)
			}
			if i > 0 && r.ID <= rs[i-1].ID {
				t.Fatalf("ids %d then %d: not increasing", rs[i-1].ID, r.ID)
			}
		}
		ms := e.deq(0, 10)
		if len(ms) != 3 || ms[0].ID != rs[0].ID || ms[1].ID != rs[1].ID || ms[2].ID != rs[3].ID {
			t.Fatalf("Dequeue ids %v, receipts %v", ms, rs)
		}
		if m := ms[0]; m.Receiver != "a" || m.Kind != "cmd" || !m.CreatedAt.Equal(t0) || m.Attempts != 0 {
			t.Fatalf("message = %+v", m)
		}
	})

	t.Run("backing-off head holds its receiver only", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"), msg("b", "b1"), msg("b", "b2"))
		ms := e.want(10, "a1", "b1")
		if res, err := e.s.Nack(ctx, ms[0].ID, time.Minute, "offline"); err != nil || res != outbox.Requeued {
			t.Fatalf("Nack = %v, %v", res, err)
		}
		e.ack(ms[1])
		e.ack(e.want(10, "b2")...) // a1 backs off, b goes on
		e.want(10)                 // a2 waits behind a1
		e.clk.Advance(time.Minute - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		m := e.want(10, "a1")[0]
		if m.Attempts != 1 || m.LastError != "offline" || !m.SendAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after nack: attempts %d, last error %q, send at %v", m.Attempts, m.LastError, m.SendAt)
		}
		e.ack(m)
		e.want(10, "a2")
	})

	t.Run("due only, oldest SendAt first, at most max", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		at := func(r, p string, d time.Duration) outbox.Message {
			m := msg(r, p)
			m.SendAt = t0.Add(d)
			return m
		}
		e.enq(at("a", "a+3", 3*time.Second), at("b", "b+1", time.Second), at("c", "c+2", 2*time.Second),
			at("d", "d+10", 10*time.Second), at("e", "e-1", -time.Second))
		e.want(10, "e-1")
		e.clk.Advance(3 * time.Second)
		e.want(2, "b+1", "c+2")
		e.want(10, "a+3")
		e.clk.Advance(6 * time.Second)
		e.want(10)
	})

	t.Run("partitions", func(t *testing.T) {
		const n = 4
		e := newEnv(t, open, outbox.Options{Partitions: n})
		if e.s.Partitions() != n {
			t.Fatalf("Partitions = %d, want %d", e.s.Partitions(), n)
		}
		var all []outbox.Message
		for i := range 40 {
			all = append(all, msg(fmt.Sprintf("w-%d", i), fmt.Sprint(i)))
		}
		e.enq(all...)
		seen := 0
		for p := range n {
			for _, m := range e.deq(p, 100) {
				if got := outbox.PartitionOf(m.Receiver, n); got != p {
					t.Fatalf("partition %d returned %s, which is in partition %d", p, m.Receiver, got)
				}
				seen++
			}
		}
		if seen != len(all) {
			t.Fatalf("partitions returned %d messages, want %d", seen, len(all))
		}
	})

	t.Run("lease expires and the message is handed out again", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{LeaseTimeout: 10 * time.Second})
		e.enq(msg("a", "a1"), msg("a", "a2"))
		first := e.want(10, "a1")[0]
		e.clk.Advance(10*time.Second - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		again := e.want(10, "a1")[0]
		if again.ID != first.ID || again.Attempts != 0 {
			t.Fatalf("re-lease: id %d attempts %d, want id %d attempts 0", again.ID, again.Attempts, first.ID)
		}
		if st := e.s.Stats(); st.Leased != 1 || st.Depth != 2 {
			t.Fatalf("Stats: leased %d depth %d, want 1 and 2", st.Leased, st.Depth)
		}
		e.ack(again)
		if err := e.s.Ack(ctx, first.ID); !errors.Is(err, outbox.ErrNotLeased) {
			t.Fatalf("second Ack = %v, want ErrNotLeased", err)
		}
		e.want(10, "a2")
	})

	t.Run("overwrite replaces a queued message in place", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		rs := e.enq(over("a", "hb", 1, "hb1"), msg("a", "cmd"), over("a", "hb", 2, "hb2"))
		if rs[2].Outcome != outbox.Replaced || rs[2].ID != rs[0].ID {
			t.Fatalf("overwrite receipt = %+v, want replaced with id %d", rs[2], rs[0].ID)
		}
		e.clk.Advance(time.Second)
		if r := e.enq(over("a", "hb", 3, "hb3"))[0]; r.Outcome != outbox.Replaced || r.ID != rs[0].ID {
			t.Fatalf("second overwrite = %+v", r)
		}
		// Four messages in, two replaced: hb1 by hb2, hb2 by hb3.
		st := e.balanced()
		if st.Depth != 2 || st.Enqueued != 4 || st.Overwritten != 2 {
			t.Fatalf("Stats: depth %d enqueued %d overwritten %d, want 2 4 2", st.Depth, st.Enqueued, st.Overwritten)
		}
		m := e.want(10, "hb3")[0]
		if m.ID != rs[0].ID || m.Seq != 3 || !m.CreatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("overwritten message: id %d seq %d created %v", m.ID, m.Seq, m.CreatedAt)
		}
		e.ack(m)
		e.want(10, "cmd")
	})

	t.Run("overwrite with a lower seq is stale, equal seq replaces", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		id := e.enq(over("a", "cfg", 5, "v5"))[0].ID
		if r := e.enq(over("a", "cfg", 4, "v4"))[0]; r.Outcome != outbox.Stale {
			t.Fatalf("lower seq: %v, want stale", r.Outcome)
		}
		if r := e.enq(over("a", "cfg", 5, "v5b"))[0]; r.Outcome != outbox.Replaced || r.ID != id {
			t.Fatalf("equal seq: %+v, want replaced id %d", r, id)
		}
		if r := e.enq(over("b", "cfg", 1, "other"))[0]; r.Outcome != outbox.Appended {
			t.Fatalf("same key, other receiver: %v, want appended", r.Outcome)
		}
		if st := e.s.Stats(); st.Stale != 1 || st.Depth != 2 || st.Overwritten != 1 {
			t.Fatalf("Stats: stale %d depth %d overwritten %d, want 1 2 1", st.Stale, st.Depth, st.Overwritten)
		}
		e.want(10, "v5b", "other")
	})

	t.Run("overwrite keeps a backoff in progress, or a later SendAt", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		at := func(m outbox.Message, d time.Duration) outbox.Message { m.SendAt = t0.Add(d); return m }
		e.enq(over("a", "hb", 1, "hb1"), at(over("b", "hb", 1, "b1"), time.Minute))
		m := e.want(10, "hb1")[0]
		if _, err := e.s.Nack(ctx, m.ID, time.Hour, "offline"); err != nil {
			t.Fatal(err)
		}
		e.enq(over("a", "hb", 2, "hb2"), at(over("b", "hb", 2, "b2"), 2*time.Minute))
		e.clk.Advance(time.Minute)
		e.want(10)
		e.clk.Advance(time.Minute)
		e.ack(e.want(10, "b2")...)
		e.clk.Advance(time.Hour - 2*time.Minute - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		e.want(10, "hb2")
	})

	t.Run("overwrite keeps the attempts of the message it replaces", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 3})
		e.enq(over("a", "hb", 1, "hb1"))
		for i := 1; i <= 2; i++ {
			m := e.want(10, fmt.Sprintf("hb%d", i))[0]
			if _, err := e.s.Nack(ctx, m.ID, 0, "offline"); err != nil {
				t.Fatal(err)
			}
			e.enq(over("a", "hb", uint64(i+1), fmt.Sprintf("hb%d", i+1)))
		}
		m := e.want(10, "hb3")[0]
		if m.Attempts != 2 || m.LastError != "offline" {
			t.Fatalf("after 2 nacks and overwrites: attempts %d, last error %q; want 2, offline", m.Attempts, m.LastError)
		}
		if res, _ := e.s.Nack(ctx, m.ID, 0, "offline"); res != outbox.DeadLettered {
			t.Fatalf("third failure = %v, want dead-lettered", res)
		}
	})

	t.Run("overwrite of a message in flight appends the new version", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(over("a", "cfg", 1, "v1"))
		inflight := e.want(10, "v1")[0]
		r := e.enq(over("a", "cfg", 2, "v2"))[0]
		if r.Outcome != outbox.Appended || r.ID == inflight.ID {
			t.Fatalf("overwrite in flight = %+v, want appended with a new id", r)
		}
		if r3 := e.enq(over("a", "cfg", 3, "v3"))[0]; r3.Outcome != outbox.Replaced || r3.ID != r.ID {
			t.Fatalf("next overwrite = %+v, want it to replace %d", r3, r.ID)
		}
		if r0 := e.enq(over("a", "cfg", 1, "v1 again"))[0]; r0.Outcome != outbox.Stale {
			t.Fatalf("older version = %v, want stale", r0.Outcome)
		}
		e.ack(inflight)
		m := e.want(10, "v3")[0]
		e.ack(m)
		e.want(10)
		// v1 and v3 acked, v2 replaced by v3, the second v1 stale.
		if st := e.balanced(); st.Depth != 0 || st.Enqueued != 4 || st.Acked != 2 || st.Overwritten != 1 || st.Stale != 1 {
			t.Fatalf("Stats = %+v, want depth 0, 4 enqueued, 2 acked, 1 overwritten, 1 stale", st)
		}
		// The key is free again: a new version is a new message.
		if r := e.enq(over("a", "cfg", 4, "v4"))[0]; r.Outcome != outbox.Appended {
			t.Fatalf("after ack: %v, want appended", r.Outcome)
		}
	})

	t.Run("expired heads are dropped, counted, and the next considered", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		short := msg("a", "short")
		short.TTL = time.Second
		e.enq(short, msg("a", "keep"), msg("b", "b1"))
		e.clk.Advance(time.Second)
		e.want(10, "keep", "b1")
		st := e.s.Stats()
		if st.Expired != 1 || st.Depth != 2 || st.Leased != 2 {
			t.Fatalf("Stats: expired %d depth %d leased %d, want 1 2 2", st.Expired, st.Depth, st.Leased)
		}
	})

	t.Run("nack past max attempts dead-letters and frees the receiver", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 3})
		e.enq(msg("a", "poison"), msg("a", "next"))
		for i := 1; i <= 3; i++ {
			m := e.want(10, "poison")[0]
			res, err := e.s.Nack(ctx, m.ID, time.Second, fmt.Sprintf("boom %d", i))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]outbox.NackResult{true: outbox.DeadLettered, false: outbox.Requeued}[i == 3]; res != want {
				t.Fatalf("nack %d = %v, want %v", i, res, want)
			}
			e.clk.Advance(time.Second)
		}
		e.want(10, "next")
		dl, err := e.s.DeadLetters(ctx, 0)
		if err != nil || len(dl) != 1 {
			t.Fatalf("DeadLetters = %v, %v", dl, err)
		}
		if d := dl[0]; string(d.Payload) != "poison" || d.Attempts != 3 || d.LastError != "boom 3" || d.Receiver != "a" {
			t.Fatalf("dead letter = %+v", d)
		}
		st := e.s.Stats()
		if st.DeadLetters != 1 || st.DeadLettered != 1 || st.Nacked != 2 || st.Depth != 1 {
			t.Fatalf("Stats = %+v", st)
		}
	})

	t.Run("release returns the lease without an attempt", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"))
		m := e.want(10, "a1")[0]
		if err := e.s.Release(ctx, m.ID, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		e.want(10)
		e.clk.Advance(time.Hour)
		if m := e.want(10, "a1")[0]; m.Attempts != 0 {
			t.Fatalf("attempts after release = %d, want 0", m.Attempts)
		}
		if st := e.s.Stats(); st.Released != 1 || st.Nacked != 0 {
			t.Fatalf("Stats: released %d nacked %d", st.Released, st.Nacked)
		}
	})

	t.Run("dead letter at once", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "bad"), msg("a", "good"))
		m := e.want(10, "bad")[0]
		if err := e.s.DeadLetter(ctx, m.ID, "malformed"); err != nil {
			t.Fatal(err)
		}
		e.want(10, "good")
		dl, _ := e.s.DeadLetters(ctx, 0)
		if len(dl) != 1 || dl[0].LastError != "malformed" || dl[0].ID != m.ID {
			t.Fatalf("DeadLetters = %+v", dl)
		}
	})

	t.Run("replay and purge dead letters", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 1})
		e.enq(msg("a", "x"), msg("b", "y"), msg("c", "z"))
		for _, m := range e.want(10, "x", "y", "z") {
			if res, err := e.s.Nack(ctx, m.ID, time.Hour, "no"); err != nil || res != outbox.DeadLettered {
				t.Fatalf("Nack = %v, %v", res, err)
			}
		}
		dl, _ := e.s.DeadLetters(ctx, 2)
		if got := payloads(dl); !slices.Equal(got, []string{"x", "y"}) {
			t.Fatalf("DeadLetters(2) = %q, want oldest first [x y]", got)
		}
		if n, err := e.s.Replay(ctx, dl[1].ID, 999999); err != nil || n != 1 {
			t.Fatalf("Replay = %d, %v, want 1", n, err)
		}
		m := e.want(10, "y")[0]
		if m.Attempts != 0 {
			t.Fatalf("replayed attempts = %d, want 0", m.Attempts)
		}
		if n, err := e.s.Purge(ctx, dl[0].ID); err != nil || n != 1 {
			t.Fatalf("Purge(x) = %d, %v", n, err)
		}
		if n, err := e.s.Purge(ctx, dl[0].ID); err != nil || n != 0 {
			t.Fatalf("Purge(x) again = %d, %v", n, err)
		}
		e.ack(m)
		if n, err := e.s.Replay(ctx); err != nil || n != 1 { // all: just z
			t.Fatalf("Replay() = %d, %v", n, err)
		}
		e.want(10, "z")
		if dl, _ := e.s.DeadLetters(ctx, 0); len(dl) != 0 {
			t.Fatalf("DeadLetters after replay = %q", payloads(dl))
		}
		st := e.s.Stats()
		if st.Replayed != 2 || st.Purged != 1 || st.DeadLetters != 0 || st.DeadLettered != 3 || st.Depth != 1 {
			t.Fatalf("Stats = %+v", st)
		}
		if n, err := e.s.Purge(ctx); err != nil || n != 0 {
			t.Fatalf("Purge() of none = %d, %v", n, err)
		}
	})

	t.Run("settling what is not leased", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		queued := e.enq(msg("a", "a1"), msg("a", "a2"))[1].ID
		m := e.want(10, "a1")[0]
		calls := map[string]func(id uint64) error{
			"ack":         func(id uint64) error { return e.s.Ack(ctx, id) },
			"nack":        func(id uint64) error { _, err := e.s.Nack(ctx, id, 0, "x"); return err },
			"release":     func(id uint64) error { return e.s.Release(ctx, id, time.Time{}) },
			"dead letter": func(id uint64) error { return e.s.DeadLetter(ctx, id, "x") },
		}
		for name, call := range calls {
			for _, id := range []uint64{queued, 424242} {
				if err := call(id); !errors.Is(err, outbox.ErrNotLeased) {
					t.Errorf("%s(%d) = %v, want ErrNotLeased", name, id, err)
				}
			}
		}
		e.ack(m)
		for name, call := range calls {
			if err := call(m.ID); !errors.Is(err, outbox.ErrNotLeased) {
				t.Errorf("%s after ack = %v, want ErrNotLeased", name, err)
			}
		}
		e.want(10, "a2") // nothing above disturbed the queue
	})

	t.Run("settle a mix in one call, in order", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		rs := e.enq(msg("a", "a1"), msg("a", "a2"), msg("b", "b1"), msg("c", "c1"), msg("d", "d1"), msg("d", "d2"))
		a2 := rs[1].ID
		ms := e.want(10, "a1", "b1", "c1", "d1")
		got, err := e.s.Settle(ctx,
			outbox.Settlement{ID: ms[0].ID, Op: outbox.SettleAck},
			outbox.Settlement{ID: 424242, Op: outbox.SettleAck},
			outbox.Settlement{ID: ms[1].ID, Op: outbox.SettleNack, Delay: time.Minute, Cause: "busy"},
			outbox.Settlement{ID: a2, Op: outbox.SettleNack, Cause: "queued, not leased"},
			outbox.Settlement{ID: ms[2].ID, Op: outbox.SettleRelease, SendAt: t0.Add(time.Hour)},
			outbox.Settlement{ID: ms[3].ID, Op: outbox.SettleDeadLetter, Cause: "malformed"},
			outbox.Settlement{ID: ms[0].ID, Op: outbox.SettleRelease}, // settled above
		)
		if err != nil {
			t.Fatalf("Settle: %v", err)
		}
		want := []struct {
			id       uint64
			leased   bool
			requeued bool
		}{{ms[0].ID, true, false}, {424242, false, false}, {ms[1].ID, true, true}, {a2, false, false},
			{ms[2].ID, true, false}, {ms[3].ID, true, false}, {ms[0].ID, false, false}}
		if len(got) != len(want) {
			t.Fatalf("Settle returned %d results for %d settlements", len(got), len(want))
		}
		for i, w := range want {
			r := got[i]
			if r.ID != w.id {
				t.Errorf("result %d is for id %d, want %d", i, r.ID, w.id)
			}
			if w.leased && r.Err != nil {
				t.Errorf("result %d (id %d): %v, want settled", i, r.ID, r.Err)
			}
			if !w.leased && !errors.Is(r.Err, outbox.ErrNotLeased) {
				t.Errorf("result %d (id %d): %v, want ErrNotLeased", i, r.ID, r.Err)
			}
			if w.requeued && r.Nack != outbox.Requeued {
				t.Errorf("result %d (id %d): nack %v, want requeued", i, r.ID, r.Nack)
			}
		}
		st := e.s.Stats()
		if st.Acked != 1 || st.Nacked != 1 || st.Released != 1 || st.DeadLettered != 1 || st.Leased != 0 || st.Depth != 4 {
			t.Fatalf("Stats after Settle = %+v", st)
		}
		// a's and d's next messages are heads now; b backs off a minute, c
		// waits an hour.
		e.ack(e.want(10, "a2", "d2")...)
		e.clk.Advance(time.Minute)
		m := e.want(10, "b1")[0]
		if m.Attempts != 1 || m.LastError != "busy" {
			t.Fatalf("nacked message: attempts %d, last error %q", m.Attempts, m.LastError)
		}
		e.ack(m)
		e.clk.Advance(time.Hour - time.Minute)
		if m := e.want(10, "c1")[0]; m.Attempts != 0 {
			t.Fatalf("released message: attempts %d, want 0", m.Attempts)
		}
		dl, _ := e.s.DeadLetters(ctx, 0)
		if len(dl) != 1 || dl[0].ID != ms[3].ID || dl[0].LastError != "malformed" || dl[0].Attempts != 0 {
			t.Fatalf("DeadLetters = %+v", dl)
		}
	})

	t.Run("settle nack at max attempts dead-letters", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 2})
		e.enq(msg("a", "a1"), msg("b", "b1"))
		ms := e.want(10, "a1", "b1")
		if _, err := e.s.Nack(ctx, ms[0].ID, 0, "first"); err != nil {
			t.Fatal(err)
		}
		ms = e.want(10, "a1")
		got, err := e.s.Settle(ctx,
			outbox.Settlement{ID: ms[0].ID, Op: outbox.SettleNack, Cause: "second"},
			outbox.Settlement{ID: ms[0].ID + 1, Op: outbox.SettleNack, Delay: -time.Hour, Cause: "b first"})
		if err != nil || got[0].Err != nil || got[1].Err != nil {
			t.Fatalf("Settle = %+v, %v", got, err)
		}
		if got[0].Nack != outbox.DeadLettered || got[1].Nack != outbox.Requeued {
			t.Fatalf("nack results %v, %v; want dead-lettered, requeued", got[0].Nack, got[1].Nack)
		}
		e.want(10, "b1") // a negative delay is due at once
		if dl, _ := e.s.DeadLetters(ctx, 0); len(dl) != 1 || dl[0].Attempts != 2 || dl[0].LastError != "second" {
			t.Fatalf("DeadLetters = %+v", dl)
		}
	})

	t.Run("settle rejecting a bad op settles nothing", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"))
		m := e.want(10, "a1")[0]
		_, err := e.s.Settle(ctx, outbox.Settlement{ID: m.ID, Op: outbox.SettleAck}, outbox.Settlement{ID: m.ID, Op: outbox.SettleOp(9)})
		if !errors.Is(err, outbox.ErrInvalid) {
			t.Fatalf("Settle with op 9 = %v, want ErrInvalid", err)
		}
		if st := e.s.Stats(); st.Acked != 0 || st.Leased != 1 {
			t.Fatalf("Stats after a rejected Settle = %+v, want nothing settled", st)
		}
		if rs, err := e.s.Settle(ctx); err != nil || len(rs) != 0 {
			t.Fatalf("Settle() = %v, %v; want no results", rs, err)
		}
		e.ack(m)
		e.want(10, "a2")
	})

	t.Run("settle and dequeue in one call", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("a", "a2"), msg("b", "b1"), msg("c", "c1"), msg("d", "d1"))
		ms := e.want(3, "a1", "b1", "c1")
		res, got, err := e.s.SettleAndDequeue(ctx, 0, 10,
			outbox.Settlement{ID: ms[0].ID, Op: outbox.SettleAck},
			outbox.Settlement{ID: ms[1].ID, Op: outbox.SettleRelease},
			outbox.Settlement{ID: ms[2].ID, Op: outbox.SettleNack, Delay: time.Second, Cause: "later"},
			outbox.Settlement{ID: 424242, Op: outbox.SettleAck})
		if err != nil {
			t.Fatalf("SettleAndDequeue: %v", err)
		}
		if len(res) != 4 || res[0].Err != nil || res[1].Err != nil || res[2].Err != nil || res[2].Nack != outbox.Requeued || !errors.Is(res[3].Err, outbox.ErrNotLeased) {
			t.Fatalf("settle results %+v: want three settled (a nack requeued), 424242 not leased", res)
		}
		// a's next message and the released b1 are due; c1 backs off.
		if p := payloads(got); !slices.Equal(p, []string{"a2", "b1", "d1"}) {
			t.Fatalf("dequeued %q, want [a2 b1 d1]", p)
		}
		if st := e.s.Stats(); st.Acked != 1 || st.Released != 1 || st.Nacked != 1 || st.Leased != 3 || st.Depth != 4 {
			t.Fatalf("Stats = %+v", st)
		}
		// Nothing to settle: a plain Dequeue.
		e.clk.Advance(time.Second)
		if res, got, err := e.s.SettleAndDequeue(ctx, 0, 10); err != nil || len(res) != 0 || !slices.Equal(payloads(got), []string{"c1"}) {
			t.Fatalf("SettleAndDequeue with nothing to settle = %v, %q, %v; want c1", res, payloads(got), err)
		}
	})

	t.Run("settle and dequeue fails whole", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{Partitions: 2})
		e.enq(msg("a", "a1"), msg("b", "b1"))
		var leased []outbox.Message
		for p := range 2 {
			leased = append(leased, e.deq(p, 10)...)
		}
		ack := outbox.Settlement{ID: leased[0].ID, Op: outbox.SettleAck}
		if _, _, err := e.s.SettleAndDequeue(ctx, 2, 10, ack); !errors.Is(err, outbox.ErrInvalid) {
			t.Fatalf("SettleAndDequeue of partition 2 of 2 = %v, want ErrInvalid", err)
		}
		if _, _, err := e.s.SettleAndDequeue(ctx, 0, 10, ack, outbox.Settlement{Op: -1}); !errors.Is(err, outbox.ErrInvalid) {
			t.Fatalf("SettleAndDequeue with op -1 = %v, want ErrInvalid", err)
		}
		if st := e.s.Stats(); st.Acked != 0 || st.Leased != 2 {
			t.Fatalf("Stats after failed calls = %+v, want nothing settled", st)
		}
		if err := e.s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.s.SettleAndDequeue(ctx, 0, 10, ack); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("SettleAndDequeue after Close = %v, want ErrClosed", err)
		}
	})

	t.Run("max depth", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxDepth: 3})
		e.enq(msg("a", "1"), over("a", "k", 1, "k1"))
		if _, err := e.s.Enqueue(ctx, msg("b", "2"), msg("b", "3")); !errors.Is(err, outbox.ErrFull) {
			t.Fatalf("Enqueue past max depth = %v, want ErrFull", err)
		}
		e.enq(msg("b", "2"))
		if _, err := e.s.Enqueue(ctx, msg("c", "4")); !errors.Is(err, outbox.ErrFull) {
			t.Fatalf("Enqueue at max depth = %v, want ErrFull", err)
		}
		if r := e.enq(over("a", "k", 2, "k2"))[0]; r.Outcome != outbox.Replaced {
			t.Fatalf("overwrite when full = %v, want replaced", r.Outcome)
		}
		if st := e.balanced(); st.Depth != 3 || st.Enqueued != 4 { // the failed calls count nothing
			t.Fatalf("Stats: depth %d enqueued %d, want 3 4", st.Depth, st.Enqueued)
		}
		e.ack(e.want(10, "1", "2")[0])
		e.enq(msg("c", "4"))
	})

	t.Run("invalid messages store nothing", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		bad := []outbox.Message{
			{Kind: "cmd"},
			{Receiver: "a"},
			{Receiver: "a", Kind: "cfg", Conflict: outbox.Overwrite},
			{Receiver: "a", Kind: "cfg", Conflict: outbox.Conflict(7)},
			{Receiver: "a", Kind: "cfg", TTL: -time.Second},
			{Receiver: "a\x00b", Kind: "cfg"},
		}
		for _, m := range bad {
			if _, err := e.s.Enqueue(ctx, msg("a", "ok"), m); !errors.Is(err, outbox.ErrInvalid) {
				t.Errorf("Enqueue(%+v) = %v, want ErrInvalid", m, err)
			}
		}
		if st := e.s.Stats(); st.Depth != 0 || st.Enqueued != 0 {
			t.Fatalf("Stats after invalid enqueues: %+v", st)
		}
		e.want(10)
	})

	t.Run("stats", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{MaxAttempts: 2})
		if st := e.s.Stats(); st != (outbox.Stats{}) {
			t.Fatalf("empty store Stats = %+v", st)
		}
		ttl := msg("c", "ttl")
		ttl.TTL = time.Minute
		e.enq(msg("a", "a1"), msg("a", "a2"), msg("b", "b1"), ttl, over("d", "k", 1, "d1"))
		e.enq(over("d", "k", 0, "stale"), over("d", "k", 2, "d2"))
		e.clk.Advance(time.Minute)
		ms := e.want(10, "a1", "b1", "d2") // ttl expired
		e.ack(ms[0])
		if _, err := e.s.Nack(ctx, ms[1].ID, 0, "x"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Release(ctx, ms[2].ID, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		ms = e.want(10, "a2", "b1", "d2")
		if _, err := e.s.Nack(ctx, ms[1].ID, 0, "x"); err != nil { // second attempt: dead
			t.Fatal(err)
		}
		if _, err := e.s.Replay(ctx); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(5 * time.Second)
		want := outbox.Stats{
			Depth: 3, Leased: 2, DeadLetters: 0, OldestAge: time.Minute + 5*time.Second,
			Enqueued: 7, Overwritten: 1, Stale: 1, Acked: 1, Nacked: 1, Released: 1,
			Expired: 1, DeadLettered: 1, Replayed: 1,
		}
		if st := e.balanced(); st != want {
			t.Fatalf("Stats =\n%+v, want\n%+v", st, want)
		}
	})

	t.Run("closed", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"))
		if err := e.s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Enqueue(ctx, msg("a", "a2")); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("Enqueue after Close = %v", err)
		}
		if _, err := e.s.Dequeue(ctx, 0, 1); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("Dequeue after Close = %v", err)
		}
		if err := e.s.Ack(ctx, 1); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("Ack after Close = %v", err)
		}
		if _, err := e.s.Settle(ctx, outbox.Settlement{ID: 1}); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("Settle after Close = %v", err)
		}
		if _, err := e.s.DeadLetters(ctx, 0); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("DeadLetters after Close = %v", err)
		}
		if err := e.s.Close(); !errors.Is(err, outbox.ErrClosed) {
			t.Errorf("second Close = %v", err)
		}
	})

	t.Run("concurrent producers and consumers lose and duplicate nothing", func(t *testing.T) {
		const producers, each, receivers = 4, 50, 8
		e := newEnv(t, open, outbox.Options{Partitions: 2})
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for i := range each {
					m := msg(fmt.Sprintf("r%d", (p*each+i)%receivers), fmt.Sprintf("%d/%d", p, i))
					if _, err := e.s.Enqueue(ctx, m); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		var mu sync.Mutex
		got := map[string]int{}
		last := map[string]uint64{} // receiver -> last id delivered
		for part := range 2 {
			wg.Go(func() {
				for idle := 0; idle < 1000; {
					ms, err := e.s.Dequeue(ctx, part, 4)
					if err != nil {
						t.Error(err)
						return
					}
					if len(ms) == 0 {
						idle++
						mu.Lock()
						n := len(got)
						mu.Unlock()
						if n == producers*each {
							return
						}
						continue
					}
					for _, m := range ms {
						mu.Lock()
						got[string(m.Payload)]++
						if m.ID <= last[m.Receiver] {
							t.Errorf("receiver %s: id %d after %d", m.Receiver, m.ID, last[m.Receiver])
						}
						last[m.Receiver] = m.ID
						mu.Unlock()
						if err := e.s.Ack(ctx, m.ID); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
		wg.Wait()
		// Consumers may have given up early on a slow machine: drain.
		for p := range 2 {
			for ms := e.deq(p, 100); len(ms) > 0; ms = e.deq(p, 100) {
				for _, m := range ms {
					got[string(m.Payload)]++
					e.ack(m)
				}
			}
		}
		if len(got) != producers*each {
			t.Fatalf("delivered %d distinct messages, want %d", len(got), producers*each)
		}
		for p, n := range got {
			if n != 1 {
				t.Fatalf("%s delivered %d times", p, n)
			}
		}
		if st := e.balanced(); st.Depth != 0 || st.Acked != producers*each || st.Enqueued != producers*each {
			t.Fatalf("Stats = %+v", st)
		}
	})
}
