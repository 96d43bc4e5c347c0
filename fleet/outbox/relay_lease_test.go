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

// A delivery that outlives its message's lease settles nothing: the store
// hands the message out again, the relay delivers the new lease, and the
// old delivery's late failure must not nack it while that delivery is out
// (it would be handed out a third time, and the ack of the second would
// find nothing leased). The newer delivery's ack settles the message, on
// both ways a relay delivers: a Starter's Finish, and a Deliver call on
// the relay's pool.
func TestRelayLateOutcomeOfRunOutLease(t *testing.T) {
	type held interface {
		outbox.Delivery
		answerNext(t *testing.T, want int, err error) // answers the oldest of want waiting
	}
	ways := []struct {
		name string
		make func(t *testing.T) held
	}{
		{"started", func(t *testing.T) held {
			return &heldStarter{starter: starter{t: t, loopIDs: map[int]bool{}, answer: func(outbox.Message) (error, bool) { return nil, false }}}
		}},
		{"pool", func(*testing.T) held { return &heldPool{} }},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const lease = time.Second
				st := newMemory(t, outbox.Options{Partitions: 1, LeaseTimeout: lease})
				enqueue(t, st, 1, "slow")
				d := w.make(t)
				r, stop := start(t, st, d, outbox.RelayOptions{Interval: 100 * time.Millisecond})
				defer stop()
				synctest.Wait()

				time.Sleep(lease + lease/2) // one lease ran out: the first delivery is still out
				synctest.Wait()
				// Both deliveries are out now; the first answers late.
				d.answerNext(t, 2, errors.New("ask timed out"))
				synctest.Wait()
				if got := st.Stats(); got.Nacked != 0 || got.Leased != 1 {
					t.Fatalf("after the first delivery's late failure, store %+v: want nothing nacked and the message still leased to the second", got)
				}
				d.answerNext(t, 1, nil)
				synctest.Wait()
				if got := st.Stats(); got.Acked != 1 || got.Nacked != 0 || got.Depth != 0 {
					t.Fatalf("after the second delivery's ack, store %+v: want the message acked, never nacked", got)
				}
				tot := r.Stats().Total()
				if tot.Superseded != 1 || tot.Retries != 0 || tot.StoreErrors != 0 {
					t.Fatalf("relay: %d superseded, %d retries, %d store errors; want 1, 0, 0", tot.Superseded, tot.Retries, tot.StoreErrors)
				}
			})
		})
	}
}

// heldStarter is the test's starter with its deliveries answered in the
// order they started.
type heldStarter struct {
	starter
	started []outbox.Finish
}

func (s *heldStarter) answerNext(t *testing.T, want int, err error) {
	t.Helper()
	s.started = append(s.started, s.take()...)
	if len(s.started) != want {
		t.Fatalf("%d deliveries out, want %d", len(s.started), want)
	}
	f := s.started[0]
	s.started = s.started[1:]
	go f.Finish(err) // from a goroutine of the caller's, as an ack comes
}

// heldPool is a Delivery whose calls wait until the test answers them,
// in the order they came, or until their context ends.
type heldPool struct {
	mu    sync.Mutex
	calls []chan error
}

func (d *heldPool) Deliver(ctx context.Context, m outbox.Message) error {
	ch := make(chan error, 1)
	d.mu.Lock()
	d.calls = append(d.calls, ch)
	d.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *heldPool) answerNext(t *testing.T, want int, err error) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.calls) != want {
		t.Fatalf("%d deliveries out, want %d", len(d.calls), want)
	}
	d.calls[0] <- err
	d.calls = d.calls[1:]
}
