package outbox_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// TestRelayOfflineReceiver: no attempt is spent on a receiver marked
// offline however long it stays away, others are served meanwhile, and Wake
// delivers its backlog at once, in enqueue order.
func TestRelayOfflineReceiver(t *testing.T) {
	const interval = 50 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		ids := enqueue(t, st, 5, "away", "on-0", "on-1", "on-2")
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, err := outbox.NewRelay(st, rec, outbox.RelayOptions{Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		r.SetOffline("away")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); <-done }()

		// Three and a bit offline rechecks; off the tick grid, so that what
		// Wake does cannot be mistaken for the ticker's work.
		time.Sleep(3*time.Minute + 17*time.Millisecond)
		if n := len(rec.snapshot("away")); n != 0 {
			t.Fatalf("%d Deliver calls for an offline receiver", n)
		}
		if n := len(rec.snapshot("")); n != 15 {
			t.Fatalf("%d deliveries to the online receivers, want 15", n)
		}
		if s := r.Stats().Partitions[0]; s.OfflineSkips != 4 {
			t.Fatalf("offline skips %d, want 4 (at 0, 1, 2 and 3 minutes)", s.OfflineSkips)
		}
		if s := st.Stats(); s.Nacked != 0 || s.Depth != 5 {
			t.Fatalf("store %+v: want the 5 offline messages queued, none charged", s)
		}

		woke := time.Now()
		if err := r.Wake(context.Background(), "away"); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, time.Minute, "the offline backlog", func(cs []call) bool {
			return len(cs) == 15+5
		})
		var got []uint64
		for _, c := range rec.snapshot("away") {
			got = append(got, c.ID)
			if d := c.At.Sub(woke); d >= interval {
				t.Errorf("message %d delivered %v after Wake, want within one interval (%v)", c.ID, d, interval)
			}
		}
		if first := rec.snapshot("away")[0]; !first.At.Equal(woke) {
			t.Errorf("first message delivered %v after Wake: the partition waited for its ticker", first.At.Sub(woke))
		}
		if !slices.Equal(got, ids["away"]) {
			t.Fatalf("delivered %v, want enqueue order %v", got, ids["away"])
		}
	})
}

// TestRelayShutdownChargesNothing cancels the relay while deliveries hang:
// Run returns only once every delivery has, and every message is back in
// the store, unleased, with no attempt charged.
func TestRelayShutdownChargesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{Partitions: 2})
		var names []string
		for i := range 30 {
			names = append(names, fmt.Sprintf("w-%02d", i))
		}
		enqueue(t, st, 2, names...)
		var active atomic.Int64
		hang := outbox.DeliveryFunc(func(ctx context.Context, m outbox.Message) error {
			active.Add(1)
			defer active.Add(-1)
			<-ctx.Done() // the receiver never answers; only shutdown ends the ask
			return flow.Transient(ctx.Err())
		})
		r, err := outbox.NewRelay(st, hang, outbox.RelayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		time.Sleep(time.Second)
		inFlight := r.Stats().Total().InFlight
		if inFlight != 20 || active.Load() != 20 {
			t.Fatalf("in flight %d, in Deliver %d: want 20 (two partitions at limit 10)", inFlight, active.Load())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := active.Load(); n != 0 {
			t.Fatalf("Run returned with %d deliveries still running", n)
		}
		s := st.Stats()
		if s.Leased != 0 || s.Depth != 60 || s.Nacked != 0 || s.Acked != 0 || s.DeadLettered != 0 || s.Released != 20 {
			t.Fatalf("store after shutdown %+v: want 60 queued, 0 leased, 20 released, nothing nacked", s)
		}
		if tot := r.Stats().Total(); tot.Abandoned != 20 || tot.Retries != 0 || tot.Errors != 0 || tot.InFlight != 0 || tot.Limit != 20 {
			t.Fatalf("relay after shutdown %+v: want 20 abandoned, no retries or errors, limits untouched", tot)
		}
		for p := range st.Partitions() {
			heads, err := st.Dequeue(context.Background(), p, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range heads {
				if m.Attempts != 0 || m.LastError != "" {
					t.Errorf("message %d for %s charged by shutdown: attempts %d, last error %q", m.ID, m.Receiver, m.Attempts, m.LastError)
				}
			}
		}
	})
}

// TestRelayShutdownMidPoll stops the relay between a Dequeue and the
// deliveries it leased: the leases go back, nothing is tried or charged.
func TestRelayShutdownMidPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{})
		enqueue(t, mem, 1, "a", "b", "c")
		ctx, cancel := context.WithCancel(context.Background())
		st := &hookedStore{Store: mem, n: 1, hook: cancel}
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, err := outbox.NewRelay(st, rec, outbox.RelayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(ctx); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := len(rec.snapshot("")); n != 0 {
			t.Fatalf("%d deliveries started after shutdown", n)
		}
		if s := mem.Stats(); s.Leased != 0 || s.Released != 3 || s.Depth != 3 || s.Nacked != 0 {
			t.Fatalf("store %+v: want the 3 leased messages released, uncharged", s)
		}
	})
}
