package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// failingSettles fails the first n settling calls (Settle, and
// SettleAndDequeue with settlements) as a disk that is briefly full or
// unwritable would: the whole call fails and nothing is settled.
type failingSettles struct {
	outbox.Store
	mu    sync.Mutex
	n     int
	calls int // settling calls seen, failed or not
}

var errDiskFull = errors.New("write outbox.db: no space left on device")

func (s *failingSettles) fail() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return s.calls <= s.n
}

func (s *failingSettles) Settle(ctx context.Context, ss ...outbox.Settlement) ([]outbox.SettleResult, error) {
	if s.fail() {
		return nil, errDiskFull
	}
	return s.Store.Settle(ctx, ss...)
}

func (s *failingSettles) SettleAndDequeue(ctx context.Context, partition, max int, ss ...outbox.Settlement) ([]outbox.SettleResult, []outbox.Message, error) {
	if len(ss) > 0 && s.fail() {
		return nil, nil, errDiskFull
	}
	return s.Store.SettleAndDequeue(ctx, partition, max, ss...)
}

// TestRelayRetriesSettlesAfterStoreError: the store fails the call that
// settles a delivered message three times, then recovers. The relay keeps
// the ack and settles it again after a backoff, so the message is acked
// once, well before its lease runs out, and never delivered again. A relay
// that dropped the settlement would deliver it a second time when the
// lease expired.
func TestRelayRetriesSettlesAfterStoreError(t *testing.T) {
	const failures = 3
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{LeaseTimeout: 30 * time.Second})
		enqueue(t, mem, 1, "w1")
		st := &failingSettles{Store: mem, n: failures}
		rec := newRecorder(func(outbox.Message, int) error { return nil })
		r, stop := start(t, st, rec, outbox.RelayOptions{})
		defer stop()
		rec.wait(t, time.Minute, "the delivery", succeeded(1))
		// Long enough for the retries (at most 1 s apart), and for a lease
		// to run out if the ack had been dropped.
		time.Sleep(time.Minute)
		synctest.Wait()

		if calls := rec.snapshot(""); len(calls) != 1 {
			t.Fatalf("%d deliveries, want 1: the ack was lost and the message redelivered", len(calls))
		}
		if got := mem.Stats(); got.Acked != 1 || got.Depth != 0 {
			t.Fatalf("store %+v: want the message acked", got)
		}
		s := r.Stats().Total()
		if s.SettleRetries != failures || s.StoreErrors != failures || s.Delivered != 1 {
			t.Fatalf("relay stats %+v: want %d settle retries and store errors, 1 delivered", s, failures)
		}
	})
}

// TestRelayGivesUpSettlesOnClosedStore: a closed store will never settle;
// the relay does not retry it, and counts the settlements it gave up.
func TestRelayGivesUpSettlesOnClosedStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{})
		enqueue(t, mem, 1, "w1")
		closed := make(chan struct{})
		rec := newRecorder(func(outbox.Message, int) error {
			mem.Close()
			close(closed)
			return nil
		})
		r, stop := start(t, mem, rec, outbox.RelayOptions{})
		defer stop()
		<-closed
		time.Sleep(time.Second)
		synctest.Wait()
		if s := r.Stats().Total(); s.SettleRetries != 0 || s.StoreErrors == 0 {
			t.Fatalf("relay stats %+v: want no settle retry and the store errors counted", s)
		}
	})
}

// TestRelayOnRunning: OnRunning is called once the partitions have taken
// their first turn, which leased what was due: the delivery of a message
// queued before Run has started by then.
func TestRelayOnRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, outbox.Options{Partitions: 4})
		enqueue(t, mem, 1, "w1")
		running := make(chan int, 1)
		var started sync.WaitGroup
		started.Add(1)
		rec := newRecorder(func(outbox.Message, int) error {
			started.Done()
			return nil
		})
		_, stop := start(t, mem, rec, outbox.RelayOptions{Interval: time.Hour, OnRunning: func() {
			s := mem.Stats()
			running <- s.Leased + int(s.Acked)
		}})
		defer stop()
		if n := <-running; n != 1 {
			t.Fatalf("OnRunning with %d messages leased or acked, want 1: it ran before the first poll", n)
		}
		started.Wait()
	})
}
