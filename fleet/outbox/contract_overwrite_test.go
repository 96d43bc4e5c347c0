package outbox_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract for an Overwrite that finds the version it targets in
// flight (leased): the new version is appended behind it, and the one in
// flight is superseded. Delivered (Ack), it stays delivered and the new
// version follows; handed back undelivered (Nack, Release, Park, a lease
// that runs out, in single calls or in a Settle batch), it is dropped as
// overwritten, so the receiver never gets the older version after that.
// Part of runContract.

// handBack is one way a leased message comes back undelivered.
type handBack struct {
	name string
	// back hands m back; it returns what the same call dequeued (only
	// SettleAndDequeue dequeues).
	back func(e *env, m outbox.Message) []outbox.Message
	// due is when the receiver's head is due again, from the moment of
	// the hand-back; attempts and lastErr are what the new version
	// carries on with.
	due      time.Duration
	attempts int
	lastErr  string
	// nacked and released are the Stats counters the hand-back would
	// bump if the message were not superseded.
	nacked, released bool
}

func handBacks() []handBack {
	settle := func(s outbox.Settlement) func(e *env, m outbox.Message) []outbox.Message {
		return func(e *env, m outbox.Message) []outbox.Message {
			e.t.Helper()
			s.ID = m.ID
			rs, err := e.s.Settle(ctx, s)
			if err != nil || rs[0].Err != nil {
				e.t.Fatalf("Settle(%+v) = %+v, %v", s, rs, err)
			}
			if s.Op == outbox.SettleNack && rs[0].Nack != outbox.Superseded {
				e.t.Fatalf("Settle nack of a superseded message: %v, want superseded", rs[0].Nack)
			}
			return nil
		}
	}
	return []handBack{
		{name: "release", due: time.Hour, released: true,
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.t.Helper()
				if err := e.s.Release(ctx, m.ID, e.clk.Now().Add(time.Hour)); err != nil {
					e.t.Fatalf("Release: %v", err)
				}
				return nil
			}},
		{name: "nack", due: time.Minute, attempts: 1, lastErr: "timeout", nacked: true,
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.t.Helper()
				if res, err := e.s.Nack(ctx, m.ID, time.Minute, "timeout"); err != nil || res != outbox.Superseded {
					e.t.Fatalf("Nack = %v, %v; want superseded", res, err)
				}
				return nil
			}},
		{name: "park", due: time.Hour,
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.t.Helper()
				e.park(m, e.clk.Now().Add(time.Hour))
				return nil
			}},
		{name: "settle park", due: time.Hour,
			back: func(e *env, m outbox.Message) []outbox.Message {
				return settle(outbox.Settlement{Op: outbox.SettlePark, SendAt: e.clk.Now().Add(time.Hour)})(e, m)
			}},
		{name: "settle release", due: time.Hour, released: true,
			back: func(e *env, m outbox.Message) []outbox.Message {
				return settle(outbox.Settlement{Op: outbox.SettleRelease, SendAt: e.clk.Now().Add(time.Hour)})(e, m)
			}},
		{name: "settle nack", due: time.Minute, attempts: 1, lastErr: "full", nacked: true,
			back: settle(outbox.Settlement{Op: outbox.SettleNack, Delay: time.Minute, Cause: "full"})},
		{name: "settle and dequeue release now", released: true,
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.t.Helper()
				rs, ms, err := e.s.SettleAndDequeue(ctx, 0, 10, outbox.Settlement{ID: m.ID, Op: outbox.SettleRelease})
				if err != nil || rs[0].Err != nil {
					e.t.Fatalf("SettleAndDequeue = %+v, %v", rs, err)
				}
				return ms
			}},
		{name: "settle and dequeue nack", due: time.Second, attempts: 1, lastErr: "busy", nacked: true,
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.t.Helper()
				rs, ms, err := e.s.SettleAndDequeue(ctx, 0, 10, outbox.Settlement{ID: m.ID, Op: outbox.SettleNack, Delay: time.Second, Cause: "busy"})
				if err != nil || rs[0].Err != nil || rs[0].Nack != outbox.Superseded {
					e.t.Fatalf("SettleAndDequeue = %+v, %v; want v5 superseded", rs, err)
				}
				return ms
			}},
		{name: "lease runs out",
			back: func(e *env, m outbox.Message) []outbox.Message {
				e.clk.Advance(10 * time.Second) // the LeaseTimeout below
				return nil
			}},
	}
}

func runOverwriteContract(t *testing.T, open opener) {
	for _, hb := range handBacks() {
		t.Run("overwrite in flight, then "+hb.name+": only the new version is delivered", func(t *testing.T) {
			e := newEnv(t, open, outbox.Options{LeaseTimeout: 10 * time.Second})
			e.enq(over("a", "cfg", 5, "v5"), msg("b", "b1"))
			inflight := e.want(1, "v5")[0]
			if r := e.enq(over("a", "cfg", 4, "v4"))[0]; r.Outcome != outbox.Stale {
				t.Fatalf("lower seq while v5 is in flight = %v, want stale", r.Outcome)
			}
			r := e.enq(over("a", "cfg", 6, "v6"))[0]
			if r.Outcome != outbox.Appended || r.ID == inflight.ID {
				t.Fatalf("overwrite in flight = %+v, want appended with a new id", r)
			}
			if r7 := e.enq(over("a", "cfg", 7, "v7"))[0]; r7.Outcome != outbox.Replaced || r7.ID != r.ID {
				t.Fatalf("next overwrite = %+v, want it to replace %d", r7, r.ID)
			}
			back := hb.back(e, inflight)
			var got []outbox.Message
			for _, m := range back {
				if m.Receiver == "a" {
					got = append(got, m)
				}
			}
			e.clk.Advance(hb.due)
			for _, m := range e.deq(0, 10) {
				if m.Receiver == "a" {
					got = append(got, m)
				}
			}
			if p := payloads(got); !slices.Equal(p, []string{"v7"}) {
				t.Fatalf("after v5 came back (%s), a got %q, want only [v7]", hb.name, p)
			}
			v7 := got[0]
			if v7.ID != r.ID || v7.Attempts != hb.attempts || v7.LastError != hb.lastErr {
				t.Fatalf("v7: id %d attempts %d last error %q; want id %d, attempts %d, %q carried over from v5",
					v7.ID, v7.Attempts, v7.LastError, r.ID, hb.attempts, hb.lastErr)
			}
			e.ack(v7)
			e.clk.Advance(time.Hour)
			for _, m := range e.deq(0, 10) {
				if m.Receiver == "a" {
					t.Fatalf("a got %q after v7 was acked", m.Payload)
				}
			}
			st := e.balanced()
			if st.Overwritten != 2 || st.Stale != 1 || st.Acked != 1 || st.Depth != 1 || st.DeadLettered != 0 {
				t.Fatalf("Stats = %+v; want v5 and v6 overwritten, v4 stale, v7 acked, b1 queued", st)
			}
			if st.Nacked != 0 || st.Released != 0 || st.Parked != 0 {
				t.Fatalf("Stats: nacked %d released %d parked %d; a superseded message is dropped, not requeued", st.Nacked, st.Released, st.Parked)
			}
		})
	}

	t.Run("overwrite in flight: the due time of a superseded message holds its receiver", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(over("a", "cfg", 1, "v1"), msg("a", "cmd"))
		m := e.want(10, "v1")[0]
		if _, err := e.s.Nack(ctx, m.ID, time.Minute, "busy"); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
		m = e.want(10, "v1")[0]
		e.enq(over("a", "cfg", 2, "v2")) // behind cmd
		if err := e.s.Release(ctx, m.ID, e.clk.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		// v1 is gone; cmd, now the head, waits for v1's hour as the
		// receiver would have behind v1.
		e.clk.Advance(time.Hour - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		e.ack(e.want(10, "cmd")...)
		v2 := e.want(10, "v2")[0]
		if v2.Attempts != 1 || v2.LastError != "busy" {
			t.Fatalf("v2: attempts %d last error %q; want v1's 1, busy", v2.Attempts, v2.LastError)
		}
		if st := e.balanced(); st.Overwritten != 1 || st.Nacked != 1 || st.Released != 0 {
			t.Fatalf("Stats = %+v; want v1 nacked once, then dropped on release", st)
		}
	})

	t.Run("overwrite in flight, then ack: the new version follows", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(over("a", "cfg", 1, "v1"))
		m := e.want(10, "v1")[0]
		e.enq(over("a", "cfg", 2, "v2"))
		e.ack(m)
		v2 := e.want(10, "v2")[0]
		if v2.Attempts != 0 {
			t.Fatalf("v2 attempts %d, want 0", v2.Attempts)
		}
		if st := e.balanced(); st.Acked != 1 || st.Overwritten != 0 || st.Depth != 1 {
			t.Fatalf("Stats = %+v; want v1 acked, v2 queued, nothing overwritten", st)
		}
	})

	t.Run("overwrite in flight, then dead letter: v1 to the dead letters, the new version follows", func(t *testing.T) {
		for _, nack := range []bool{false, true} {
			e := newEnv(t, open, outbox.Options{MaxAttempts: 1})
			e.enq(over("a", "cfg", 1, "v1"))
			m := e.want(10, "v1")[0]
			e.enq(over("a", "cfg", 2, "v2"))
			if nack {
				if res, err := e.s.Nack(ctx, m.ID, time.Hour, "no"); err != nil || res != outbox.DeadLettered {
					t.Fatalf("Nack at max attempts = %v, %v; want dead-lettered", res, err)
				}
			} else if err := e.s.DeadLetter(ctx, m.ID, "no"); err != nil {
				t.Fatal(err)
			}
			v2 := e.want(10, "v2")[0]
			if v2.Attempts != 0 || v2.LastError != "" {
				t.Fatalf("v2 attempts %d last error %q, want a fresh start", v2.Attempts, v2.LastError)
			}
			if dl, _ := e.s.DeadLetters(ctx, 0); len(dl) != 1 || dl[0].ID != m.ID {
				t.Fatalf("dead letters = %s, want v1", show(dl))
			}
			if st := e.balanced(); st.DeadLettered != 1 || st.Overwritten != 0 || st.Depth != 1 {
				t.Fatalf("Stats = %+v", st)
			}
			// Replayed once v2 is delivered, v1 is a new message that no
			// Overwrite has superseded: handed back, it stays.
			e.ack(v2)
			if n, err := e.s.Replay(ctx); err != nil || n != 1 {
				t.Fatalf("Replay = %d, %v", n, err)
			}
			m = e.want(10, "v1")[0]
			if err := e.s.Release(ctx, m.ID, time.Time{}); err != nil {
				t.Fatal(err)
			}
			e.want(10, "v1")
			e.balanced()
		}
	})

	t.Run("an overwrite of another queued version does not supersede the one in flight", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		job := func(seq uint64, p string) outbox.Message {
			m := msg("a", p)
			m.Key, m.Seq = "k", seq
			return m
		}
		e.enq(job(1, "j1"), job(2, "j2")) // Append: both are delivered
		m := e.want(10, "j1")[0]
		if r := e.enq(over("a", "k", 3, "o3"))[0]; r.Outcome != outbox.Replaced {
			t.Fatalf("overwrite of queued j2 = %v, want replaced", r.Outcome)
		}
		if err := e.s.Release(ctx, m.ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
		e.ack(e.want(10, "j1")...)
		e.want(10, "o3")
		if st := e.balanced(); st.Released != 1 || st.Overwritten != 1 {
			t.Fatalf("Stats = %+v; want j1 released, j2 overwritten", st)
		}
	})
}

// runOverwriteQueuedContract: an Overwrite of a version still queued
// replaces it in place, unless it is stale.
func runOverwriteQueuedContract(t *testing.T, open opener) {
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
}
