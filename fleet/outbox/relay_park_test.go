package outbox_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// TestRelayWakeKeepsWaves: waking receivers that are online already (a
// restarted leader replaying their retained "online") delivers nothing
// early: each receiver's message, due in its wave, is delivered at its
// wave's time, not at the Wake.
func TestRelayWakeKeepsWaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		t0 := time.Now()
		due := map[string]time.Time{}
		for i := range 5 {
			w := fmt.Sprintf("w-%d", i)
			due[w] = t0.Add(time.Duration(i) * time.Minute)
			if _, err := st.Enqueue(context.Background(), outbox.Message{Receiver: w, Kind: "firmware", Key: "firmware", Conflict: outbox.Overwrite, SendAt: due[w]}); err != nil {
				t.Fatal(err)
			}
		}
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, stop := start(t, st, rec, outbox.RelayOptions{})
		defer stop()
		for w := range due {
			if err := r.Wake(context.Background(), w); err != nil {
				t.Fatal(err)
			}
		}
		rec.wait(t, 10*time.Minute, "every wave delivered", func(cs []call) bool { return len(cs) == len(due) })
		for _, c := range rec.snapshot("") {
			if early := due[c.Receiver].Sub(c.At); early > 0 {
				t.Errorf("%s delivered %v before its wave", c.Receiver, early)
			}
		}
	})
}

// TestRelayAssumeOffline: a relay that assumes receivers offline until
// told otherwise (a leader just restarted) spends no attempt on one it
// has not heard from: its due message is parked in the store, and
// SetOnline plus Unpark deliver it at once. An Unpark that comes after
// the receiver went offline again does nothing.
func TestRelayAssumeOffline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		enqueue(t, st, 2, "unheard", "gone")
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, stop := start(t, st, rec, outbox.RelayOptions{AssumeOffline: true})
		defer stop()
		time.Sleep(2*time.Minute + time.Second) // past two offline rechecks
		synctest.Wait()
		if n := len(rec.snapshot("")); n != 0 {
			t.Fatalf("%d Deliver calls for receivers never seen online", n)
		}
		if s := st.Stats(); s.Parked != 6 || s.Released != 0 || s.Nacked != 0 {
			t.Fatalf("store %+v: want both heads parked 3 times (at 0, 1 and 2 minutes), uncharged", s)
		}

		r.SetOnline("gone")
		r.SetOffline("gone") // gone again before the Unpark ran
		if err := r.Unpark(context.Background(), "gone"); err != nil {
			t.Fatal(err)
		}
		woke := time.Now()
		r.SetOnline("unheard")
		if err := r.Unpark(context.Background(), "unheard"); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, time.Minute, "the parked backlog of unheard", func(cs []call) bool { return len(cs) == 2 })
		if first := rec.snapshot("unheard")[0]; !first.At.Equal(woke) {
			t.Errorf("first message delivered %v after Unpark, want at once", first.At.Sub(woke))
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := len(rec.snapshot("gone")); n != 0 {
			t.Fatalf("%d Deliver calls for a receiver offline again when its Unpark ran", n)
		}
	})
}
