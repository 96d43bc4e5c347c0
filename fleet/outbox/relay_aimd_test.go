package outbox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// mailboxes simulates receivers that each work through a bounded mailbox
// at a fixed service time, by accounting: a receiver's mailbox holds the
// finish times of the messages it has taken, and a message is done once the
// clock passes its finish time. A full mailbox answers flow.Capacity with
// the time until its first message is done. It also checks, on every call,
// that a rejected message does not come back before its RetryAfter.
type mailboxes struct {
	capacity int
	service  time.Duration
	want     int
	done     chan struct{} // closed when want messages have been taken

	mu        sync.Mutex
	busy      map[string][]time.Time // per receiver: finish times, oldest first
	taken     map[uint64]int
	notBefore map[uint64]time.Time // per rejected id: its RetryAfter deadline
	early     []string
	rejected  int
}

func newMailboxes(capacity int, service time.Duration, want int) *mailboxes {
	return &mailboxes{
		capacity: capacity, service: service, want: want, done: make(chan struct{}),
		busy: make(map[string][]time.Time), taken: make(map[uint64]int), notBefore: make(map[uint64]time.Time),
	}
}

func (mb *mailboxes) Deliver(_ context.Context, m outbox.Message) error {
	now := time.Now()
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if nb, ok := mb.notBefore[m.ID]; ok && now.Before(nb) {
		mb.early = append(mb.early, fmt.Sprintf("message %d retried %v before its RetryAfter", m.ID, nb.Sub(now)))
	}
	q := mb.busy[m.Receiver]
	for len(q) > 0 && !q[0].After(now) {
		q = q[1:]
	}
	if len(q) >= mb.capacity {
		mb.busy[m.Receiver] = q
		retryAfter := q[0].Sub(now)
		mb.notBefore[m.ID] = now.Add(retryAfter)
		mb.rejected++
		return flow.Capacity(retryAfter, "mailbox full")
	}
	from := now
	if len(q) > 0 {
		from = q[len(q)-1]
	}
	mb.busy[m.Receiver] = append(q, from.Add(mb.service))
	mb.taken[m.ID]++
	if len(mb.taken) == mb.want && mb.taken[m.ID] == 1 {
		close(mb.done)
	}
	return nil
}

// TestRelayAIMDSawtooth sends a burst of 2,000 messages to 50 receivers
// whose mailboxes hold 4 and take 20 ms each. The relay must find their
// pace: all of them answer "full", so all of them go to the slow lane,
// whose limit falls on capacity answers and climbs again on successes,
// every message arrives exactly once, none is retried before the receiver's
// RetryAfter, and none is dead-lettered.
func TestRelayAIMDSawtooth(t *testing.T) {
	const receivers, perReceiver = 50, 40
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{Partitions: 2, MaxAttempts: 1000})
		var names []string
		for i := range receivers {
			names = append(names, fmt.Sprintf("w-%02d", i))
		}
		ids := enqueue(t, st, perReceiver, names...)
		mb := newMailboxes(4, 20*time.Millisecond, receivers*perReceiver)
		r, stop := start(t, st, mb, outbox.RelayOptions{
			Backoff: flow.Backoff{Base: 10 * time.Millisecond, Cap: time.Second},
			Seed:    1,
		})
		defer stop()
		select {
		case <-mb.done:
		case <-time.After(time.Hour):
			t.Fatalf("after an hour of simulated time %d of %d messages taken", len(mb.taken), mb.want)
		}
		synctest.Wait()

		mb.mu.Lock()
		defer mb.mu.Unlock()
		for _, l := range ids {
			for _, id := range l {
				if n := mb.taken[id]; n != 1 {
					t.Errorf("message %d taken %d times, want once", id, n)
				}
			}
		}
		for _, e := range mb.early {
			t.Error(e)
		}
		if mb.rejected == 0 {
			t.Fatal("no capacity answers: the burst did not fill any mailbox")
		}
		if got := st.Stats(); got.Acked != uint64(mb.want) || got.DeadLettered != 0 || got.Depth != 0 {
			t.Fatalf("store %+v: want %d acked, none dead-lettered", got, mb.want)
		}
		s := r.Stats()
		if tot := s.Total(); tot.Backpressure != uint64(mb.rejected) || tot.Retries != uint64(mb.rejected) || tot.DeadLettered != 0 {
			t.Fatalf("relay %+v: want %d backpressure and retries, nothing dead-lettered", tot, mb.rejected)
		}
		for i, p := range s.Partitions {
			// Every receiver pushes back, so after its first "full" each
			// sits in the slow lane, whose limit finds their pace.
			if !fellThenRose(p.SlowHistory) {
				t.Errorf("partition %d: slow lane's limit history %v shows no fall below the initial 10 followed by a rise", i, p.SlowHistory)
			}
			if n := len(p.LimitHistory); n > outbox.DefaultRelayOptions.History {
				t.Errorf("partition %d keeps %d limit samples, more than the default bound %d", i, n, outbox.DefaultRelayOptions.History)
			}
		}
	})
}

// fellThenRose reports whether h falls below the initial limit (10) and
// later rises from a low.
func fellThenRose(h []outbox.LimitSample) bool {
	fell := false
	for i := 1; i < len(h); i++ {
		if h[i].Limit < h[i-1].Limit && h[i].Limit < outbox.DefaultRelayOptions.Limiter.Initial {
			fell = true
		}
		if fell && h[i].Limit > h[i-1].Limit {
			return true
		}
	}
	return false
}
