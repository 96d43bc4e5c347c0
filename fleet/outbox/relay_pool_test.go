package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// goroutineID is the id the runtime prints for the calling goroutine.
func goroutineID(t *testing.T) int {
	var buf [64]byte
	s := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	id, err := strconv.Atoi(string(s[:bytes.IndexByte(s, ' ')]))
	if err != nil {
		t.Errorf("goroutine id in %q: %v", buf, err)
	}
	return id
}

// The relay runs deliveries on goroutines that outlive them, at most as
// many per partition as its limiter's Max lets be in flight, not on a
// goroutine each. Every delivery still runs, and a second Run starts a
// pool of its own.
func TestRelayReusesDeliveryGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts, max, receivers, each = 2, 4, 20, 10
		st := newMemory(t, outbox.Options{Partitions: parts})
		var mu sync.Mutex
		seen := make(map[int]bool)
		delivered := 0
		d := outbox.DeliveryFunc(func(ctx context.Context, m outbox.Message) error {
			time.Sleep(time.Millisecond) // several in flight at once
			mu.Lock()
			seen[goroutineID(t)] = true
			delivered++
			mu.Unlock()
			return nil
		})
		o := outbox.RelayOptions{Batch: 8, Limiter: flow.LimiterOptions{Initial: max, Max: max}}
		var names []string
		for i := range receivers {
			names = append(names, "w"+strconv.Itoa(i))
		}
		for run := range 2 {
			enqueue(t, st, each, names...)
			r, stop := start(t, st, d, o)
			for st.Stats().Acked < uint64((run+1)*receivers*each) {
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			if got := r.Stats().Partitions[0].InFlight; got != 0 {
				t.Errorf("run %d: %d in flight after Run returned", run, got)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if want := 2 * receivers * each; delivered != want {
			t.Fatalf("%d deliveries, want %d", delivered, want)
		}
		if bound := 2 * parts * max; len(seen) > bound {
			t.Fatalf("%d deliveries ran on %d goroutines; want at most %d (Max %d per partition and Run)", delivered, len(seen), bound, max)
		}
	})
}

// starter is a Starter that finishes its deliveries later, from a
// goroutine of the test's, except those answer finishes inside Start.
type starter struct {
	t       *testing.T
	answer  func(m outbox.Message) (err error, now bool)
	mu      sync.Mutex
	later   []outbox.Finish
	loopIDs map[int]bool // the goroutines Start ran on
}

func (s *starter) Deliver(context.Context, outbox.Message) error {
	panic("a relay over a Starter calls Start, not Deliver")
}

func (s *starter) Start(ctx context.Context, m outbox.Message, f outbox.Finish) {
	s.mu.Lock()
	s.loopIDs[goroutineID(s.t)] = true
	s.mu.Unlock()
	if err, now := s.answer(m); now {
		f.Finish(err)
		return
	}
	s.mu.Lock()
	s.later = append(s.later, f)
	s.mu.Unlock()
}

// take returns the deliveries started and not yet finished.
func (s *starter) take() []outbox.Finish {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.later
	s.later = nil
	return out
}

// A relay over a Starter starts each delivery on its partition's loop,
// with no goroutine of its own, and settles each by the error its
// Finish gives, whenever and wherever that comes: an ok acks, a "full"
// nacks, a permanent error finished inside Start dead-letters. A Run
// ending with deliveries started waits for their Finish.
func TestRelayStarterSettlesByFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{Partitions: 1})
		ids := enqueue(t, st, 1, "ok", "full", "poison", "late")
		s := &starter{t: t, loopIDs: make(map[int]bool), answer: func(m outbox.Message) (error, bool) {
			if m.Receiver == "poison" {
				return flow.Permanent(errors.New("cannot encode")), true
			}
			return nil, false
		}}
		_, stop := start(t, st, s, outbox.RelayOptions{})
		synctest.Wait()
		started := s.take()
		if len(started) != 3 {
			t.Fatalf("%d deliveries waiting for their Finish, want 3 (ok, full, late)", len(started))
		}
		for _, f := range started {
			switch f.Message().Receiver {
			case "ok":
				go f.Finish(nil)
			case "full":
				go f.Finish(flow.Capacity(time.Hour, "mailbox full"))
			}
		}
		synctest.Wait()
		if got := st.Stats(); got.Acked != 1 || got.Nacked != 1 || got.DeadLetters != 1 || got.Leased != 1 {
			t.Fatalf("store %+v: want 1 acked, 1 nacked, 1 dead letter, and the late one still leased", got)
		}
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("Run returned with a started delivery not finished")
		default:
		}
		for _, f := range started {
			if f.Message().Receiver == "late" {
				f.Finish(context.Canceled) // what a Starter gives once ctx has ended
			}
		}
		<-stopped
		msgs, err := st.Dequeue(context.Background(), 0, 10)
		if err != nil || len(msgs) != 1 || msgs[0].ID != ids["late"][0] || msgs[0].Attempts != 0 {
			t.Fatalf("after the stop, due %+v, %v: want the late one handed back uncharged", msgs, err)
		}
		if len(s.loopIDs) != 1 {
			t.Fatalf("Start ran on %d goroutines, want 1: the partition's loop", len(s.loopIDs))
		}
	})
}
