package mailbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// Each mailbox benchmark has a buffered-channel twin in the same run: the
// natural baseline (a channel is what a Go actor would use unbounded-free,
// but it has no policies, no stats and no wait measurement).

const benchCap = 1024

// Offer then Take in one goroutine: the cost of the mailbox itself, with no
// scheduler hand-off.
func BenchmarkOfferTake(b *testing.B) {
	ctx := context.Background()
	m, _ := mailbox.New[int](mailbox.Options{Capacity: benchCap})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Offer(ctx, i)
		m.TryTake()
	}
}

// frozenClock reads in a nanosecond: it isolates the mailbox's own cost from
// the two clock reads per message that wait measurement needs (about 32 ns
// each on a kvm-clock VM).
type frozenClock struct{ clock.Real }

func (frozenClock) Mono() time.Duration { return 0 }

func BenchmarkOfferTakeNoClock(b *testing.B) {
	ctx := context.Background()
	m, _ := mailbox.New[int](mailbox.Options{Capacity: benchCap, Clock: frozenClock{}})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Offer(ctx, i)
		m.TryTake()
	}
}

func BenchmarkClockMono(b *testing.B) {
	var c clock.Clock = clock.Real{}
	var sink time.Duration
	for b.Loop() {
		sink += c.Mono()
	}
	_ = sink
}

func BenchmarkChannelSendRecv(b *testing.B) {
	ch := make(chan int, benchCap)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ch <- i
		<-ch
	}
}

// pipeline runs producers goroutines that send b.N messages in all while
// the benchmark goroutine, the actor, receives them. The mailbox and the
// channel run through the same harness, so they pay the same call costs.
func pipeline(b *testing.B, producers int, send func(int) error, recv func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / producers
	for p := range producers {
		n := per
		if p == 0 {
			n += b.N % producers
		}
		wg.Go(func() {
			for i := range n {
				if err := send(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for range b.N {
		if err := recv(); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
}

// benchPipeline uses the block policy, so producers wait as a channel send
// would.
func benchPipeline(b *testing.B, producers int) {
	ctx := context.Background()
	m, _ := mailbox.New[int](mailbox.Options{Capacity: benchCap, Policy: mailbox.Block})
	pipeline(b, producers,
		func(i int) error { return m.Offer(ctx, i) },
		func() error { _, err := m.Take(ctx); return err })
}

func chanPipeline(b *testing.B, producers int) {
	ch := make(chan int, benchCap)
	pipeline(b, producers,
		func(i int) error { ch <- i; return nil },
		func() error { <-ch; return nil })
}

func BenchmarkPipeline1Producer(b *testing.B)  { benchPipeline(b, 1) }
func BenchmarkChannel1Producer(b *testing.B)   { chanPipeline(b, 1) }
func BenchmarkPipeline4Producers(b *testing.B) { benchPipeline(b, 4) }
func BenchmarkChannel4Producers(b *testing.B)  { chanPipeline(b, 4) }
