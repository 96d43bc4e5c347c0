package outbox_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The Store contract for dead letters: how a message gets there (attempts
// used up, or at once), and replay and purge. Part of runContract.

func runDeadContract(t *testing.T, open opener) {
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
}
