package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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

// versions is a Delivery for one key's versions: it records the payloads
// each receiver was handed and answers with answer(payload).
type versions struct {
	answer func(payload string) error

	mu   sync.Mutex
	got  []string // "payload attempts=n ok|err", in call order
	took []string // payloads answered ok
}

func (v *versions) Deliver(_ context.Context, m outbox.Message) error {
	err := v.answer(string(m.Payload))
	v.mu.Lock()
	defer v.mu.Unlock()
	res := "ok"
	if err != nil {
		res = "err"
	} else {
		v.took = append(v.took, string(m.Payload))
	}
	v.got = append(v.got, fmt.Sprintf("%s attempts=%d %s", m.Payload, m.Attempts, res))
	return err
}

func (v *versions) calls() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.got)
}

func overwrite(t *testing.T, st outbox.Store, receiver string, seq uint64) {
	t.Helper()
	_, err := st.Enqueue(context.Background(), outbox.Message{Receiver: receiver, Kind: "config",
		Payload: fmt.Appendf(nil, "v%d", seq), Key: "config", Seq: seq, Conflict: outbox.Overwrite})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRelayOfflineReceiverGetsOnlyTheLatest: a newer version that arrives
// while the relay holds the old one of an offline receiver (between
// leasing and parking it) replaces it: after Wake the receiver gets the
// newest version only, not the old one first.
func TestRelayOfflineReceiverGetsOnlyTheLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{})
		overwrite(t, mem, "away", 1)
		rec := &versions{answer: func(string) error { return nil }}
		st := &hookedStore{Store: mem, n: 1, hook: func() {
			// v1 is leased, about to be parked.
			overwrite(t, mem, "away", 2)
			overwrite(t, mem, "away", 3)
		}}
		r, err := outbox.NewRelay(st, rec, outbox.RelayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.SetOffline("away")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		synctest.Wait()
		time.Sleep(10 * time.Second) // parked for a minute: nothing to deliver
		synctest.Wait()
		if s := r.Stats().Partitions[0]; s.OfflineSkips != 1 || len(rec.calls()) != 0 {
			t.Fatalf("offline skips %d, calls %q: want v1 parked once, nothing delivered", s.OfflineSkips, rec.calls())
		}
		if err := r.Wake(context.Background(), "away"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := rec.calls(); !slices.Equal(got, []string{"v3 attempts=0 ok"}) {
			t.Fatalf("after Wake the receiver was handed %q, want only v3", got)
		}
		if s := mem.Stats(); s.Overwritten != 2 || s.Acked != 1 || s.Released != 0 || s.Depth != 0 {
			t.Fatalf("store %+v: want v1 dropped when parked, v2 replaced by v3, v3 acked", s)
		}
	})
}

// TestRelayFailedAskThenOnlyTheLatest: a newer version that arrives while
// an ask for the old one is out (the receiver is away and the leader does
// not know yet) replaces it once the ask fails: the retry delivers the
// newest version, carrying the failed attempt.
func TestRelayFailedAskThenOnlyTheLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		overwrite(t, st, "away", 1)
		asked, answer := make(chan struct{}), make(chan error)
		var once sync.Once
		rec := &versions{answer: func(p string) error {
			err := error(nil)
			once.Do(func() { // the first ask, for v1: out until the test answers
				close(asked)
				err = <-answer
			})
			return err
		}}
		r, stop := start(t, st, rec, outbox.RelayOptions{Backoff: flow.Backoff{Base: 100 * time.Millisecond, Cap: time.Second}})
		defer stop()
		<-asked
		overwrite(t, st, "away", 2)
		answer <- flow.Transient(errors.New("ask timed out"))
		time.Sleep(time.Second)
		synctest.Wait()
		if got := rec.calls(); !slices.Equal(got, []string{"v1 attempts=0 err", "v2 attempts=1 ok"}) {
			t.Fatalf("the receiver was handed %q, want v1 (failed), then only v2 with the attempt carried", got)
		}
		if s := st.Stats(); s.Overwritten != 1 || s.Acked != 1 || s.Nacked != 0 || s.Depth != 0 {
			t.Fatalf("store %+v: want v1 dropped at its nack, v2 acked", s)
		}
		if s := r.Stats().Partitions[0]; s.Retries != 1 || s.Delivered != 1 {
			t.Fatalf("relay %+v: want 1 retry (as v2), 1 delivered", s)
		}
	})
}

// TestRelayTryOffline: with TryOffline (a comparison run), SetOffline
// changes nothing: the relay spends attempts on the away receiver.
func TestRelayTryOffline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		enqueue(t, st, 1, "away")
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, err := outbox.NewRelay(st, rec, outbox.RelayOptions{Interval: 50 * time.Millisecond, TryOffline: true})
		if err != nil {
			t.Fatal(err)
		}
		r.SetOffline("away")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		rec.wait(t, time.Minute, "a delivery to the away receiver", func(cs []call) bool { return len(cs) == 1 })
		if s := r.Stats().Partitions[0]; s.OfflineSkips != 0 {
			t.Fatalf("offline skips %d with TryOffline, want 0", s.OfflineSkips)
		}
	})
}
