package outbox_test

// The relay tests run inside testing/synctest bubbles with clock.Real (the
// stores' and relays' default clock). In a bubble the time package is fake:
// it starts at 2000-01-01 UTC and moves only when every goroutine in the
// bubble is blocked, jumping straight to the next timer. So the relay's own
// ticker, its deliveries and the backoff delays all run in simulated time,
// deterministically and without waiting on the wall clock. clock.Fake would
// need the test to step time by hand while delivery goroutines run
// concurrently; the bubble does that stepping for us, and synctest.Test
// fails a test that leaves a goroutine blocked behind it. A time.Sleep in a
// bubble is how a test lets simulated time pass; it takes no wall time.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// call is one Deliver call seen by a recorder.
type call struct {
	ID       uint64
	Receiver string
	At       time.Time
	Attempt  int // 1 for the first call for this ID
	Err      error
}

// recorder is a Delivery that answers with answer(m, attempt) and records
// every call.
type recorder struct {
	answer func(m outbox.Message, attempt int) error

	mu      sync.Mutex
	calls   []call
	perID   map[uint64]int
	changed chan struct{} // closed and replaced on every call
}

func newRecorder(answer func(m outbox.Message, attempt int) error) *recorder {
	return &recorder{answer: answer, perID: make(map[uint64]int), changed: make(chan struct{})}
}

func (rec *recorder) Deliver(ctx context.Context, m outbox.Message) error {
	rec.mu.Lock()
	rec.perID[m.ID]++
	n := rec.perID[m.ID]
	rec.mu.Unlock()
	err := rec.answer(m, n)
	rec.mu.Lock()
	rec.calls = append(rec.calls, call{m.ID, m.Receiver, time.Now(), n, err})
	close(rec.changed)
	rec.changed = make(chan struct{})
	rec.mu.Unlock()
	return err
}

// snapshot returns the calls so far, optionally only those for receiver.
func (rec *recorder) snapshot(receiver string) []call {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []call
	for _, c := range rec.calls {
		if receiver == "" || c.Receiver == receiver {
			out = append(out, c)
		}
	}
	return out
}

// wait blocks until ok holds for the calls so far, failing the test if
// within of simulated time passes first. It then waits for the relay to
// settle what it was doing.
func (rec *recorder) wait(t *testing.T, within time.Duration, what string, ok func([]call) bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		rec.mu.Lock()
		done, ch := ok(rec.calls), rec.changed
		rec.mu.Unlock()
		if done {
			synctest.Wait()
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("still waiting for %s after %v of simulated time", what, within)
		}
	}
}

func succeeded(n int) func([]call) bool {
	return func(cs []call) bool {
		k := 0
		for _, c := range cs {
			if c.Err == nil {
				k++
			}
		}
		return k >= n
	}
}

// newMemory returns an in-memory store for a bubble.
func newMemory(t *testing.T, o outbox.Options) *outbox.Memory {
	t.Helper()
	st, err := outbox.NewMemory(o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// enqueue stores n messages for each receiver, receiver by receiver, and
// returns their ids per receiver in enqueue order.
func enqueue(t *testing.T, st outbox.Store, n int, receivers ...string) map[string][]uint64 {
	t.Helper()
	ids := make(map[string][]uint64)
	for i := range n {
		for _, r := range receivers {
			rs, err := st.Enqueue(context.Background(), outbox.Message{Receiver: r, Kind: "job", Payload: fmt.Appendf(nil, "%s/%d", r, i)})
			if err != nil {
				t.Fatal(err)
			}
			ids[r] = append(ids[r], rs[0].ID)
		}
	}
	return ids
}

// start runs the relay until the returned stop is called; stop waits for
// Run to return and fails the test on an error. Call it with defer, so a
// failing test still stops the relay and its bubble can end.
func start(t *testing.T, st outbox.Store, d outbox.Delivery, o outbox.RelayOptions) (*outbox.Relay, func()) {
	t.Helper()
	r, err := outbox.NewRelay(st, d, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return r, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func TestRelayTransientLeavesLimitAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		ids := enqueue(t, st, 1, "flaky")
		rec := newRecorder(func(m outbox.Message, attempt int) error {
			if attempt <= 3 {
				return flow.Transient(errors.New("ask timed out"))
			}
			return nil
		})
		r, stop := start(t, st, rec, outbox.RelayOptions{Backoff: flow.Backoff{Base: 10 * time.Millisecond, Cap: time.Second}})
		defer stop()
		rec.wait(t, time.Minute, "delivery after three timeouts", succeeded(1))

		s := r.Stats().Partitions[0]
		if s.Errors != 3 || s.Retries != 3 || s.Delivered != 1 || s.Backpressure != 0 || s.DeadLettered != 0 {
			t.Fatalf("stats %+v: want 3 errors, 3 retries, 1 delivered", s)
		}
		// Three transient failures leave 10; the success adds one.
		var seen []int
		for _, h := range s.LimitHistory {
			seen = append(seen, h.Limit)
		}
		if fmt.Sprint(seen) != "[10 11]" || s.Limit != 11 {
			t.Fatalf("limit history %v, limit %d: want [10 11], 11", seen, s.Limit)
		}
		if got := st.Stats(); got.Acked != 1 || got.Nacked != 3 || got.Depth != 0 {
			t.Fatalf("store %+v: want 1 acked after 3 nacks", got)
		}
		calls := rec.snapshot("flaky")
		for i, c := range calls {
			if c.ID != ids["flaky"][0] || c.Attempt != i+1 {
				t.Fatalf("call %d = %+v", i, c)
			}
		}
	})
}

func TestRelayCapacityHalvesAndHonoursRetryAfter(t *testing.T) {
	const interval, retryAfter = 5 * time.Millisecond, time.Second
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		enqueue(t, st, 1, "busy")
		rec := newRecorder(func(_ outbox.Message, attempt int) error {
			if attempt == 1 {
				return flow.Capacity(retryAfter, "mailbox full")
			}
			return nil
		})
		t0 := time.Now()
		// The backoff window (at most 10 ms) is far below the hint: the
		// hint must win.
		r, stop := start(t, st, rec, outbox.RelayOptions{Interval: interval, Backoff: flow.Backoff{Base: 10 * time.Millisecond}})
		defer stop()
		rec.wait(t, time.Minute, "the retry", succeeded(1))

		calls := rec.snapshot("")
		if len(calls) != 2 || !calls[0].At.Equal(t0) {
			t.Fatalf("calls %+v: want a first attempt at start and one retry", calls)
		}
		if d := calls[1].At.Sub(t0); d < retryAfter || d > retryAfter+interval {
			t.Fatalf("retried after %v, want within one interval past the hint %v", d, retryAfter)
		}
		s := r.Stats().Partitions[0]
		var seen []int
		for _, h := range s.LimitHistory {
			seen = append(seen, h.Limit)
		}
		if fmt.Sprint(seen) != "[10 5 6]" || s.Backpressure != 1 || s.Decreases != 1 || s.Retries != 1 || s.Errors != 0 {
			t.Fatalf("limit history %v, stats %+v: want [10 5 6], 1 backpressure, 1 decrease, 1 retry", seen, s)
		}
		if tot := r.Stats().Total(); tot.Decreases != 1 {
			t.Fatalf("total %+v: want the partition's 1 decrease", tot)
		}
	})
}

// hookedStore runs hook after the n-th poll (the relay's
// SettleAndDequeue), before the relay sees its result.
type hookedStore struct {
	outbox.Store
	n, calls int
	hook     func()
}

func (s *hookedStore) SettleAndDequeue(ctx context.Context, partition, max int, ss ...outbox.Settlement) ([]outbox.SettleResult, []outbox.Message, error) {
	res, msgs, err := s.Store.SettleAndDequeue(ctx, partition, max, ss...)
	if s.calls++; s.calls == s.n {
		s.hook()
	}
	return res, msgs, err
}

// TestRelayDefersWithoutPermit lowers the limit between a poll's Dequeue
// and its permits: the message left without a permit goes back due and
// uncharged, and is delivered later.
func TestRelayDefersWithoutPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{})
		enqueue(t, mem, 1, "r0", "r1", "r2", "r3", "r4", "r5")
		gates := map[string]chan error{"r0": make(chan error, 1), "r1": make(chan error, 1), "r2": make(chan error, 1)}
		rec := newRecorder(func(m outbox.Message, attempt int) error {
			if g, ok := gates[m.Receiver]; ok && attempt == 1 {
				return <-g
			}
			return nil
		})
		hooked := make(chan struct{})
		// Limit 4, batches of 2: the first poll leases r0 and r1, which
		// hang; the second leases r2 and r3, and before they get permits r0
		// answers "full", halving the limit to 2 with r1 still out. r2
		// takes the last permit and hangs too, so nothing frees one before
		// r3 asks.
		st := &hookedStore{Store: mem, n: 2, hook: func() {
			gates["r0"] <- flow.Capacity(0, "mailbox full")
			synctest.Wait() // r0 settled: limit 2, one permit out
			close(hooked)
		}}
		r, stop := start(t, st, rec, outbox.RelayOptions{Batch: 2, Limiter: flow.LimiterOptions{Initial: 4}})
		defer stop()
		<-hooked
		synctest.Wait() // the poll has handed r3 back
		gates["r1"] <- nil
		gates["r2"] <- nil
		rec.wait(t, time.Minute, "all six delivered", succeeded(6))

		s := r.Stats().Partitions[0]
		if s.Deferred != 1 {
			t.Fatalf("deferred %d, want 1 (r3 had no permit)", s.Deferred)
		}
		if n := len(rec.snapshot("r3")); n != 1 {
			t.Fatalf("r3 tried %d times, want once: a deferral is not an attempt", n)
		}
		if got := mem.Stats(); got.Released != 1 || got.Nacked != 1 || got.Acked != 6 {
			t.Fatalf("store %+v: want r3 released once, only r0 nacked, all acked", got)
		}
	})
}

// settleSpy records how many settlements each of the relay's settling
// store calls carries, and holds the first such call until release is
// closed.
type settleSpy struct {
	outbox.Store
	held, release chan struct{}

	mu    sync.Mutex
	sizes []int
}

func (s *settleSpy) SettleAndDequeue(ctx context.Context, partition, max int, ss ...outbox.Settlement) ([]outbox.SettleResult, []outbox.Message, error) {
	if len(ss) > 0 {
		s.hold(len(ss))
	}
	return s.Store.SettleAndDequeue(ctx, partition, max, ss...)
}

func (s *settleSpy) Settle(ctx context.Context, ss ...outbox.Settlement) ([]outbox.SettleResult, error) {
	s.hold(len(ss))
	return s.Store.Settle(ctx, ss...)
}

func (s *settleSpy) hold(n int) {
	s.mu.Lock()
	s.sizes = append(s.sizes, n)
	first := len(s.sizes) == 1
	s.mu.Unlock()
	if first {
		close(s.held)
		<-s.release
	}
}

// TestRelaySettlesInBatches holds the relay's first settling call while
// every delivery finishes: the limit has already moved on each answer,
// though nothing is settled yet, and what finished meanwhile is settled
// together in the next call, not one call per delivery.
func TestRelaySettlesInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{})
		var names []string
		for i := range 10 { // the initial limit: one poll leases them all
			names = append(names, fmt.Sprintf("w-%d", i))
		}
		enqueue(t, mem, 1, names...)
		spy := &settleSpy{Store: mem, held: make(chan struct{}), release: make(chan struct{})}
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, stop := start(t, spy, rec, outbox.RelayOptions{})
		defer stop()
		<-spy.held
		synctest.Wait() // every delivery has answered; the loop waits in its first settle

		if s := r.Stats().Partitions[0]; s.Limit != 20 || s.Delivered != 10 || s.InFlight != 0 {
			t.Fatalf("while the settles wait: %+v; want limit 10+10, 10 delivered, none in flight", s)
		}
		if st := mem.Stats(); st.Acked != 0 || st.Leased != 10 {
			t.Fatalf("store while the settles wait: %+v; want 10 leased, none acked", st)
		}
		close(spy.release)
		synctest.Wait()

		if st := mem.Stats(); st.Acked != 10 || st.Depth != 0 {
			t.Fatalf("store after: %+v; want all 10 acked", st)
		}
		spy.mu.Lock()
		defer spy.mu.Unlock()
		total := 0
		for _, n := range spy.sizes {
			total += n
		}
		if total != 10 || len(spy.sizes) > 2 {
			t.Fatalf("settling calls carried %v settlements: want 10 in at most 2 calls (the held one, then the rest)", spy.sizes)
		}
	})
}

func TestRelayPermanentDeadLettersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		good := []string{"good-0", "good-1", "good-2", "good-3", "good-4"}
		ids := enqueue(t, st, 2, append([]string{"bad"}, good...)...)
		poison := ids["bad"][0]
		rec := newRecorder(func(m outbox.Message, _ int) error {
			if m.ID == poison {
				return flow.Permanent(errors.New("malformed payload"))
			}
			return nil
		})
		const interval = 5 * time.Millisecond
		t0 := time.Now()
		r, stop := start(t, st, rec, outbox.RelayOptions{Interval: interval})
		defer stop()
		rec.wait(t, time.Minute, "every other message", succeeded(11))

		if n := len(rec.snapshot("")); n != 12 {
			t.Fatalf("%d Deliver calls, want 12: the poison message tried once, the rest once each", n)
		}
		for _, c := range rec.snapshot("") {
			if d := c.At.Sub(t0); d >= interval {
				t.Errorf("message %d (%s) delivered %v after start: held up by the poison message", c.ID, c.Receiver, d)
			}
		}
		dead, err := st.DeadLetters(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0].ID != poison || !strings.Contains(dead[0].LastError, "malformed payload") {
			t.Fatalf("dead letters %+v: want only message %d with its cause", dead, poison)
		}
		if s := r.Stats().Partitions[0]; s.DeadLettered != 1 || s.Retries != 0 || s.Delivered != 11 || s.Limit != 21 {
			t.Fatalf("stats %+v: want 1 dead-lettered, 0 retries, 11 delivered, limit 10+11", s)
		}
	})
}

func TestRelayDeadLettersAtMaxAttempts(t *testing.T) {
	const maxAttempts = 4
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{MaxAttempts: maxAttempts})
		ids := enqueue(t, st, 1, "gone", "here")
		rec := newRecorder(func(m outbox.Message, _ int) error {
			if m.Receiver == "gone" {
				return errors.New("no route to worker") // unclassified: transient
			}
			return nil
		})
		r, stop := start(t, st, rec, outbox.RelayOptions{Backoff: flow.Backoff{Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond}})
		defer stop()
		rec.wait(t, time.Minute, "the last allowed attempt", func(cs []call) bool {
			return len(cs) > 0 && cs[len(cs)-1].Attempt == maxAttempts
		})
		time.Sleep(time.Minute) // long past any backoff: a fifth attempt would show

		if n := len(rec.snapshot("gone")); n != maxAttempts {
			t.Fatalf("%d attempts, want exactly %d", n, maxAttempts)
		}
		dead, _ := st.DeadLetters(context.Background(), 0)
		if len(dead) != 1 || dead[0].ID != ids["gone"][0] || dead[0].Attempts != maxAttempts {
			t.Fatalf("dead letters %+v: want message %d with %d attempts", dead, ids["gone"][0], maxAttempts)
		}
		if s := r.Stats().Partitions[0]; s.DeadLettered != 1 || s.Retries != maxAttempts-1 || s.Errors != maxAttempts || s.Delivered != 1 {
			t.Fatalf("stats %+v: want 1 dead-lettered, %d retries, %d errors", s, maxAttempts-1, maxAttempts)
		}
	})
}

func TestRelayRefusesSecondRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{})
		r, stop := start(t, st, newRecorder(func(outbox.Message, int) error { return nil }), outbox.RelayOptions{})
		defer stop()
		synctest.Wait() // the first Run is in its loop
		if err := r.Run(context.Background()); !errors.Is(err, outbox.ErrRelayRunning) {
			t.Fatalf("second Run = %v, want ErrRelayRunning", err)
		}
	})
}

func TestNewRelayRejectsBadOptions(t *testing.T) {
	st, _ := outbox.NewMemory(outbox.Options{})
	d := outbox.DeliveryFunc(func(context.Context, outbox.Message) error { return nil })
	tests := []struct {
		name string
		st   outbox.Store
		d    outbox.Delivery
		o    outbox.RelayOptions
		want string
	}{
		{"nil store", nil, d, outbox.RelayOptions{}, "needs a store"},
		{"nil delivery", st, nil, outbox.RelayOptions{}, "needs a delivery"},
		{"negative interval", st, d, outbox.RelayOptions{Interval: -time.Second}, "interval"},
		{"negative batch", st, d, outbox.RelayOptions{Batch: -1}, "batch"},
		{"negative recheck", st, d, outbox.RelayOptions{OfflineRecheck: -1}, "offline recheck"},
		{"negative history", st, d, outbox.RelayOptions{History: -1}, "history"},
		{"negative backoff", st, d, outbox.RelayOptions{Backoff: flow.Backoff{Base: -1}}, "backoff"},
		{"limiter min above max", st, d, outbox.RelayOptions{Limiter: flow.LimiterOptions{Min: 8, Max: 4}}, "limiter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := outbox.NewRelay(tc.st, tc.d, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewRelay = %v, want an error naming %q", err, tc.want)
			}
		})
	}
	if _, err := outbox.NewRelay(st, d, outbox.RelayOptions{Limiter: flow.LimiterOptions{Initial: 80}}); err != nil {
		t.Fatalf("initial 80 with max defaulted: %v", err)
	}
}
