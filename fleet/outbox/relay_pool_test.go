package outbox_test

import (
	"bytes"
	"context"
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
