package outbox_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract for what a store refuses (past MaxDepth, invalid
// messages, after Close) and for its counts, which balance alone and
// under concurrent producers and consumers. Part of runContract.

func runLimitsContract(t *testing.T, open opener) {
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
		// PeakDepth: the five of the first Enqueue (d2 replaced d1 in
		// place), though no more than three are queued now.
		want := outbox.Stats{
			Depth: 3, PeakDepth: 5, Leased: 2, DeadLetters: 0, OldestAge: time.Minute + 5*time.Second,
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
}

func runConcurrencyContract(t *testing.T, open opener) {
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
