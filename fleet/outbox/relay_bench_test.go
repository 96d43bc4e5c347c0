package outbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// BenchmarkRelayThroughput measures how fast the relay drains a backlog
// when the receivers take everything at once: n messages over 1,000
// receivers are enqueued untimed, then the relay runs, on the wall clock,
// until every one is delivered and acked. It reports msgs/s, and
// msgs/turn: messages settled per settling store call (the relay's
// SettleAndDequeue or Settle; on bbolt one commit each, or less when
// partitions share one). The rest of the output is per drain of n
// messages.
//
// The bbolt runs use a fresh file per drain in b.TempDir, with durability
// batch (every settle is on disk before the relay moves on) and none (no
// fsync). All use the default relay options (the seed's: batch 20, AIMD
// limit 10..50 per partition) except "wide", which lets a partition lease
// and hold 200 at once: how far the limits, not the relay, cap a drain.
func BenchmarkRelayThroughput(b *testing.B) {
	for _, parts := range []int{1, 4} {
		b.Run(fmt.Sprintf("memory/partitions=%d", parts), func(b *testing.B) {
			benchDrain(b, outbox.RelayOptions{}, func() outbox.Store {
				st, err := outbox.NewMemory(outbox.Options{Partitions: parts})
				if err != nil {
					b.Fatal(err)
				}
				return st
			})
		})
	}
	wide := outbox.RelayOptions{Batch: 200, Limiter: flow.LimiterOptions{Max: 200}}
	for _, run := range []struct {
		name string
		d    outbox.Durability
		o    outbox.RelayOptions
	}{
		{"bolt-batch", outbox.Batch, outbox.RelayOptions{}},
		{"bolt-none", outbox.None, outbox.RelayOptions{}},
		{"bolt-batch-wide", outbox.Batch, wide},
		{"bolt-none-wide", outbox.None, wide},
	} {
		for _, parts := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/partitions=%d", run.name, parts), func(b *testing.B) {
				dir, n := b.TempDir(), 0
				benchDrain(b, run.o, func() outbox.Store {
					n++
					st, err := outbox.OpenBolt(filepath.Join(dir, fmt.Sprintf("drain-%d.db", n)), outbox.Options{Partitions: parts, Durability: run.d})
					if err != nil {
						b.Fatal(err)
					}
					return st
				})
			})
		}
	}
}

// benchDrain times draining 20,000 messages from a fresh store per
// iteration with a no-op delivery.
func benchDrain(b *testing.B, o outbox.RelayOptions, open func() outbox.Store) {
	const n, receivers = 20_000, 1_000
	var drained time.Duration
	var turns int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st := &turnCounter{Store: open()}
		batch := make([]outbox.Message, 0, n)
		for j := range n {
			batch = append(batch, outbox.Message{Receiver: fmt.Sprintf("w-%04d", j%receivers), Kind: "job", Payload: []byte("x")})
		}
		if _, err := st.Enqueue(context.Background(), batch...); err != nil {
			b.Fatal(err)
		}
		var delivered atomic.Int64
		all := make(chan struct{})
		d := outbox.DeliveryFunc(func(context.Context, outbox.Message) error {
			if delivered.Add(1) == n {
				close(all)
			}
			return nil
		})
		r, err := outbox.NewRelay(st, d, o)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		t0 := time.Now()
		go func() { done <- r.Run(ctx) }()
		<-all
		cancel()
		if err := <-done; err != nil { // Run waits for the last acks
			b.Fatal(err)
		}
		drained += time.Since(t0)
		b.StopTimer()
		if s := st.Stats(); s.Acked != n || s.Depth != 0 {
			b.Fatalf("after the drain: %+v, want %d acked and nothing queued", s, n)
		}
		turns += st.turns.Load()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/drained.Seconds(), "msgs/s")
	b.ReportMetric(float64(n*b.N)/float64(turns), "msgs/turn")
}

// turnCounter counts the store calls that settle something.
type turnCounter struct {
	outbox.Store
	turns atomic.Int64
}

func (c *turnCounter) Settle(ctx context.Context, ss ...outbox.Settlement) ([]outbox.SettleResult, error) {
	c.turns.Add(1)
	return c.Store.Settle(ctx, ss...)
}

func (c *turnCounter) SettleAndDequeue(ctx context.Context, partition, max int, ss ...outbox.Settlement) ([]outbox.SettleResult, []outbox.Message, error) {
	if len(ss) > 0 {
		c.turns.Add(1)
	}
	return c.Store.SettleAndDequeue(ctx, partition, max, ss...)
}
