package outbox_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The head-of-line class: one partition whose receivers are mostly fast
// (they take everything), sent waves of messages at 94% of what the
// partition's limit can carry (holLimit in flight, each for a round trip),
// with a few slow receivers (mailbox 1, a long service time) that have a
// backlog and so answer "full" again and again. The slow ones are near
// (config servers beside the leader), the fast ones far (devices in the
// field): the slow ones' answers come back ten times sooner.
const (
	holFast        = 600
	holWaves       = 80
	holWave        = 60 // messages per wave, each to another fast receiver
	holEvery       = 100 * time.Millisecond
	holSlow        = 40
	holSlowEach    = 100
	holSlowService = 100 * time.Millisecond
	holRTT         = 50 * time.Millisecond // the fast receivers'
	holSlowRTT     = 5 * time.Millisecond
	holLimit       = 32
)

// byReceiver routes a delivery to slow or fast by its receiver's name.
type byReceiver struct{ slow, fast outbox.Delivery }

func (b byReceiver) Deliver(ctx context.Context, m outbox.Message) error {
	if m.Receiver[0] == 's' {
		return b.slow.Deliver(ctx, m)
	}
	return b.fast.Deliver(ctx, m)
}

// holRun drains the head-of-line class through one partition (AIMD, limit
// up to holLimit, starting there) and returns how long, in simulated time,
// the fast receivers' messages took, and the relay's stats then.
func holRun(t *testing.T, shared bool) (took time.Duration, slowTaken int, stats outbox.PartitionStats) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{Partitions: 1, MaxAttempts: 1000})
		var slow, fast []string
		for i := range holSlow {
			slow = append(slow, fmt.Sprintf("s-%02d", i))
		}
		for i := range holFast {
			fast = append(fast, fmt.Sprintf("f-%03d", i))
		}
		t0 := time.Now()
		enqueue(t, st, holSlowEach, slow...)
		for w := range holWaves {
			for i := range holWave {
				m := outbox.Message{Receiver: fast[(w*holWave+i)%holFast], Kind: "job", SendAt: t0.Add(time.Duration(w) * holEvery)}
				if _, err := st.Enqueue(context.Background(), m); err != nil {
					t.Fatal(err)
				}
			}
		}
		slowMB := newMailboxes(1, holSlowService, holSlow*holSlowEach)
		fastMB := newMailboxes(1<<20, 0, holWaves*holWave)
		r, stop := start(t, st, byReceiver{asked{slowMB, holSlowRTT}, asked{fastMB, holRTT}}, outbox.RelayOptions{
			Limiter:     flow.LimiterOptions{Initial: holLimit, Min: 1, Max: holLimit},
			Backoff:     flow.Backoff{Base: 10 * time.Millisecond, Cap: time.Second},
			Seed:        1,
			SharedLimit: shared,
		})
		defer stop()
		select {
		case <-fastMB.done:
		case <-time.After(10 * time.Minute):
			t.Fatalf("shared %v: the fast receivers' messages not all taken after 10 minutes", shared)
		}
		took = time.Since(t0)
		stats = r.Stats().Partitions[0]
		slowMB.mu.Lock()
		defer slowMB.mu.Unlock()
		slowTaken = len(slowMB.taken)
		if slowMB.rejected == 0 {
			t.Fatal("the slow receivers never answered full: the run shows nothing")
		}
		for _, e := range append(slowMB.early, fastMB.early...) {
			t.Error(e)
		}
	})
	return took, slowTaken, stats
}

// TestRelaySlowReceiversDoNotThrottleOthers: a few receivers that keep
// answering "full" must not slow the deliveries to everyone else in their
// partition. The fast receivers' waves come at 94% of what the partition's
// limit carries, so their last message must be taken within 400 ms (8
// round trips) of its wave. With one limiter shared by all (SharedLimit), every slow
// receiver's "full" halves it for everyone, and the same run must miss
// that bound: else the test shows nothing.
func TestRelaySlowReceiversDoNotThrottleOthers(t *testing.T) {
	last := time.Duration(holWaves-1) * holEvery
	bound := last + 400*time.Millisecond
	lane, laneSlow, ls := holRun(t, false)
	shared, sharedSlow, ss := holRun(t, true)
	t.Logf("fast receivers' last wave due at %v; its last message taken at %v with the slow lane, %v with one shared limit", last, lane, shared)
	t.Logf("by then the slow receivers took %d with the slow lane (%d \"full\", partition limit %d, lane limit %d), %d with one shared limit (%d \"full\", %d decreases)",
		laneSlow, ls.Backpressure, ls.Limit, ls.SlowLimit, sharedSlow, ss.Backpressure, ss.Decreases)
	if lane > bound {
		t.Errorf("with the slow lane the fast receivers' last message was taken at %v, after %v (400 ms after its wave)", lane, bound)
	}
	if shared <= bound {
		t.Errorf("with one shared limiter the fast receivers took %v, within %v: the slow receivers did not hold them up, so this run cannot tell", shared, bound)
	}
	if ls.SlowDecreases == 0 {
		t.Errorf("the slow lane's limit never fell: the slow receivers were not paced by it")
	}
}

// TestRelaySlowReceiversForgotten: a receiver joins the slow class with
// its "full" answer and leaves it, and the relay's memory, once it has
// been quiet for SlowFor; receivers that never push back are never
// remembered.
func TestRelaySlowReceiversForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemory(t, outbox.Options{Partitions: 1})
		enqueue(t, st, 1, "busy", "idle-1", "idle-2")
		rec := newRecorder(func(m outbox.Message, attempt int) error {
			if m.Receiver == "busy" && attempt == 1 {
				return flow.Capacity(time.Second, "mailbox full")
			}
			return nil
		})
		const slowFor = 10 * time.Second
		r, stop := start(t, st, rec, outbox.RelayOptions{SlowFor: slowFor, Seed: 1})
		defer stop()
		time.Sleep(2 * time.Second) // simulated: the retry is taken
		synctest.Wait()
		if n := len(rec.snapshot("")); n != 4 {
			t.Fatalf("%d deliveries, want 4 (busy twice, each idle once)", n)
		}
		if got := r.Stats().Partitions[0].SlowReceivers; got != 1 {
			t.Fatalf("slow receivers after busy's \"full\": %d, want 1", got)
		}
		time.Sleep(2 * slowFor) // past its expiry and the sweep after it
		synctest.Wait()
		if got := r.Stats().Partitions[0].SlowReceivers; got != 0 {
			t.Fatalf("slow receivers %v after the last \"full\": %d, want 0", 2*slowFor, got)
		}
	})
}
