package outbox_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract for settling a leased message: ack, nack, release
// and dead-letter one at a time or in a Settle batch, and a relay's turn
// (SettleAndDequeue). Part of runContract.

func runSettleContract(t *testing.T, open opener) {
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
}
