package outbox_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract for parking: a message waits either for its due time
// (a wave, a backoff, a retry-after) or, parked, for its receiver to come
// online. Wake releases only what is parked. Part of runContract.

// wake calls Wake for each receiver.
func (e *env) wake(receivers ...string) {
	e.t.Helper()
	for _, r := range receivers {
		if err := e.s.Wake(ctx, r); err != nil {
			e.t.Fatalf("Wake(%s): %v", r, err)
		}
	}
}

func (e *env) park(m outbox.Message, recheck time.Time) {
	e.t.Helper()
	if err := e.s.Park(ctx, m.ID, recheck); err != nil {
		e.t.Fatalf("Park(%d %q): %v", m.ID, m.Payload, err)
	}
}

// wantSet checks that the next Dequeue of partition 0 returns these
// payloads in any order (heads due at the same time go by id).
func (e *env) wantSet(ps ...string) []outbox.Message {
	e.t.Helper()
	ms := e.deq(0, 100)
	got := payloads(ms)
	slices.Sort(got)
	slices.Sort(ps)
	if !slices.Equal(got, ps) {
		e.t.Fatalf("Dequeue = %q, want %q", got, ps)
	}
	return ms
}

func runParkContract(t *testing.T, open opener) {
	t.Run("wake releases a parked head only: not a wave, a backoff, a retry-after or a lease", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{LeaseTimeout: time.Hour})
		wave := msg("wave", "wave")
		wave.SendAt = t0.Add(30 * time.Second)
		e.enq(msg("backoff", "backoff"), msg("retry", "retry"), msg("leased", "leased"), msg("parked", "parked"), wave)
		ms := e.wantSet("backoff", "retry", "leased", "parked")
		by := map[string]outbox.Message{}
		for _, m := range ms {
			by[m.Receiver] = m
		}
		if _, err := e.s.Nack(ctx, by["backoff"].ID, time.Hour, "timeout"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Release(ctx, by["retry"].ID, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		e.park(by["parked"], t0.Add(time.Hour))
		e.want(10)
		e.wake("wave", "backoff", "retry", "leased", "nobody")
		e.want(10) // nothing parked was woken: nothing is due
		e.wake("parked")
		m := e.want(10, "parked")[0]
		if m.Attempts != 0 || !m.SendAt.Equal(t0) {
			t.Fatalf("woken message: attempts %d, due %v; want 0 attempts, due at the wake", m.Attempts, m.SendAt.Sub(t0))
		}
		e.ack(m)
		e.clk.Advance(30 * time.Second)
		e.want(10, "wave") // at its wave's time, not before
		e.ack(by["leased"])
		if st := e.balanced(); st.Parked != 1 || st.Released != 1 || st.Nacked != 1 {
			t.Fatalf("Stats: parked %d released %d nacked %d; want 1 each", st.Parked, st.Released, st.Nacked)
		}
	})

	t.Run("a parked message comes due at its recheck; without one, only a wake releases it", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"), msg("b", "b1"))
		ms := e.want(10, "a1", "b1")
		e.park(ms[0], t0.Add(time.Minute))
		e.park(ms[1], time.Time{})
		e.clk.Advance(time.Minute - time.Nanosecond)
		e.want(10)
		e.clk.Advance(time.Nanosecond)
		a := e.want(10, "a1")[0] // the recheck: the relay looks again
		e.park(a, e.clk.Now().Add(time.Minute))
		e.clk.Advance(1000 * time.Hour)
		e.want(10, "a1")
		e.wake("b")
		if b := e.want(10, "b1")[0]; !b.SendAt.Equal(e.clk.Now()) {
			t.Fatalf("b1 woken: due %v, want now", b.SendAt.Sub(t0))
		}
	})

	t.Run("leasing unparks: a later wake does not bring forward its backoff", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(msg("a", "a1"))
		e.park(e.want(10, "a1")[0], t0.Add(time.Minute))
		e.wake("a")
		m := e.want(10, "a1")[0]
		if _, err := e.s.Nack(ctx, m.ID, time.Hour, "timeout"); err != nil {
			t.Fatal(err)
		}
		e.wake("a", "a")
		e.want(10)
		e.clk.Advance(time.Hour)
		e.want(10, "a1")
	})

	t.Run("the next message behind a parked head waits for its own wave", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		next := msg("a", "a2")
		next.SendAt = t0.Add(time.Hour)
		e.enq(msg("a", "a1"), next)
		e.park(e.want(10, "a1")[0], time.Time{})
		e.wake("a")
		e.ack(e.want(10, "a1")...)
		e.wake("a") // a2 is waiting for its wave, not parked
		e.want(10)
		e.clk.Advance(time.Hour)
		e.want(10, "a2")
	})

	t.Run("an overwrite of a parked message stays parked if due, or waits for its own wave", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(over("a", "cfg", 1, "v1"), over("b", "cfg", 1, "w1"))
		ms := e.want(10, "v1", "w1")
		e.park(ms[0], t0.Add(time.Hour))
		e.park(ms[1], t0.Add(time.Hour))
		if r := e.enq(over("a", "cfg", 2, "v2"))[0]; r.Outcome != outbox.Replaced || r.ID != ms[0].ID {
			t.Fatalf("overwrite of parked v1 = %+v, want replaced in place", r)
		}
		later := over("b", "cfg", 2, "w2")
		later.SendAt = t0.Add(time.Minute) // the next wave
		if r := e.enq(later)[0]; r.Outcome != outbox.Replaced {
			t.Fatalf("overwrite of parked w1 = %+v, want replaced", r)
		}
		e.want(10) // v2 parked, w2 waiting for its wave
		e.wake("a", "b")
		e.ack(e.want(10, "v2")...) // the wake released v2 only
		e.clk.Advance(time.Minute)
		e.want(10, "w2") // w2 at its wave, not held to w1's recheck
		if st := e.balanced(); st.Overwritten != 2 || st.Parked != 2 {
			t.Fatalf("Stats = %+v; want v1 and w1 overwritten, two parks", st)
		}
	})

	t.Run("park of a superseded message: the newest version is parked in its place", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		e.enq(over("a", "cfg", 5, "v5"), over("b", "cfg", 5, "w5"))
		ms := e.want(10, "v5", "w5")
		e.enq(over("a", "cfg", 6, "v6")) // v5 in flight: appended, v5 superseded
		later := over("b", "cfg", 6, "w6")
		later.SendAt = t0.Add(time.Minute) // a wave still to come
		e.enq(later)
		// The relay parks v5 and w5 (a and b are offline): both are dropped.
		rs, err := e.s.Settle(ctx,
			outbox.Settlement{ID: ms[0].ID, Op: outbox.SettlePark, SendAt: t0.Add(time.Hour)},
			outbox.Settlement{ID: ms[1].ID, Op: outbox.SettlePark, SendAt: t0.Add(time.Hour)})
		if err != nil || rs[0].Err != nil || rs[1].Err != nil {
			t.Fatalf("Settle = %+v, %v", rs, err)
		}
		e.want(10) // v6 parked in v5's place; w6 not yet due
		e.wake("a", "b")
		e.ack(e.want(10, "v6")...)
		e.clk.Advance(time.Minute)
		e.want(10, "w6") // the wake did not bring w6's wave forward
		if st := e.balanced(); st.Overwritten != 2 || st.Parked != 0 || st.Released != 0 {
			t.Fatalf("Stats = %+v; want v5 and w5 overwritten, nothing requeued", st)
		}
	})
}
