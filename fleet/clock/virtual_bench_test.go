package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// BenchmarkVirtualStep: one goroutine sleeps a millisecond of simulated
// time, over and over: each op is one step of the clock (a settle, a
// fire, the goroutine woken and waiting again). BenchmarkFakeStep is the
// same loop on a Fake clock advanced by the benchmark itself, the cost of
// the timer alone.
func BenchmarkVirtualStep(b *testing.B) {
	c := clock.NewVirtual(t0, clock.VirtualOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	tm := c.NewTimer(time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		<-tm.C()
		tm.Reset(time.Millisecond)
	}
	b.StopTimer()
	tm.Stop()
}

func BenchmarkFakeStep(b *testing.B) {
	c := clock.NewFake(t0)
	tm := c.NewTimer(time.Millisecond)
	b.ReportAllocs()
	for range b.N {
		c.Advance(time.Millisecond)
		<-tm.C()
		tm.Reset(time.Millisecond)
	}
}
