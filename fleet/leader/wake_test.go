package leader_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// wakeLog is a Store that records every Wake, and while gate is set makes
// each Wake wait for it (a store whose write is slow: an fsync).
type wakeLog struct {
	outbox.Store
	mu    sync.Mutex
	woken []string
	gate  chan struct{}
}

func (s *wakeLog) Wake(ctx context.Context, receiver string) error {
	s.mu.Lock()
	s.woken = append(s.woken, receiver)
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return s.Store.Wake(ctx, receiver)
}

func (s *wakeLog) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.woken)
}

// startWakeLog starts a leader on a wakeLog store.
func startWakeLog(t *testing.T) (*rig, *wakeLog) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	st := &wakeLog{Store: mem}
	return runLeader(t, leader.Config{}, clk, clk, st), st
}

// wokenAre waits until the store's Wakes are exactly want, in order.
func wokenAre(t *testing.T, st *wakeLog, what string, want ...string) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		got := st.log()
		return fleettest.Unless(slices.Equal(got, want), "woken %q, want %q", got, want)
	})
}

// TestWakeOnlyWhenBackOnline: the leader wakes a worker's queue when the
// worker comes online and it did not see it online (first news in this
// process, or back from offline), not on a retained replay of an online
// it already applied, nor on an online of another connection while it
// sees the worker online (nothing was parked for it).
func TestWakeOnlyWhenBackOnline(t *testing.T) {
	r, st := startWakeLog(t)
	r.status("w-1", "online e1")
	wokenAre(t, st, "a wake for w-1's first online", "w-1")
	r.status("w-1", "online e1") // retained replays
	r.status("w-1", "online e1")
	r.status("w-1", "online e2") // a new connection before e1's will
	r.status("w-1", "offline e1")
	r.status("w-2", "offline e5") // first news: a retained will
	r.status("w-3", "online e7")
	// The waker takes wakes in order: once w-3's is seen, any for w-1's
	// replays would have been too.
	wokenAre(t, st, "wakes for w-1's and w-3's first online", "w-1", "w-3")
	r.status("w-1", "offline e2")
	r.status("w-1", "online e3")
	r.status("w-2", "online e6")
	wokenAre(t, st, "wakes for w-1 and w-2 back online", "w-1", "w-3", "w-1", "w-2")
}

// TestWakeOffDeliveryGoroutine: statuses are handled without waiting for
// the store (here each Wake waits until the test lets it go), and a worker
// whose wake is still pending when it flaps gets one wake, not one per
// online: the queue holds each worker once.
func TestWakeOffDeliveryGoroutine(t *testing.T) {
	r, st := startWakeLog(t)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the leader stops, should the test fail
	st.mu.Lock()
	st.gate = gate
	st.mu.Unlock()
	first := make(chan struct{})
	go func() {
		defer close(first)
		r.status("w-1", "online e1")
	}()
	wokenAre(t, st, "w-1's Wake under way", "w-1")
	fleettest.Receive(t, 10*time.Second, "w-1's online handled while its Wake waits", first, r.seen)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for range 50 {
			r.status("w-2", "online a")
			r.status("w-2", "offline a")
		}
		r.status("w-2", "online b")
		r.status("w-3", "online c")
	}()
	fleettest.Receive(t, 10*time.Second, "the statuses handled while a Wake waits", handled, r.seen)
	release()
	wokenAre(t, st, "one wake per worker", "w-1", "w-2", "w-3")
	if v := r.l.Fleet(); v.Online != 3 {
		t.Fatalf("%d workers online, want 3", v.Online)
	}
}
