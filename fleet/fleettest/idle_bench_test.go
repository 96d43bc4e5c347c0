package fleettest_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

var (
	idleWorkers = flag.Int("idle-workers", 10_000, "BenchmarkIdleSessions: how many workers (one MQTT session each)")
	idleDials   = flag.Int("first-dials", 0, "BenchmarkIdleSessions: worker.PoolOptions.FirstDials (0: the pool's default, -1: no limit)")
	idleFor     = flag.Duration("idle", 0, "BenchmarkIdleSessions: also measure the CPU the idle fleet uses over this long")
)

// BenchmarkIdleSessions connects -idle-workers workers, each with its own
// MQTT session, to the embedded broker over its in-memory listener, as
// sim builds them (broker.StartBroker defaults, worker.MQTTDialer,
// worker.NewPool with default worker configs), and reports what one idle
// session costs once all are online: live heap and goroutine stacks (after
// a GC), goroutines, the connect rate and the process's peak RSS. No
// leader runs (the workers send no sync), so the numbers are the
// sessions' and the workers' own. Run it with -benchtime 1x, one fleet
// size per process (a second fleet in the same process reuses the first
// one's memory):
//
//	go test -run '^$' -bench IdleSessions -benchtime 1x ./fleet/fleettest/ -idle-workers 40000
func BenchmarkIdleSessions(b *testing.B) {
	n := *idleWorkers
	for b.Loop() {
		measureIdle(b, n)
	}
}

func measureIdle(b *testing.B, n int) {
	br, err := broker.StartBroker(broker.BrokerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cfgs := make([]worker.Config, n)
	for i := range cfgs {
		cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%06d", i), Index: uint64(i), NoSync: true}
	}
	pool, err := worker.NewPool(cfgs, worker.MQTTDialer{Broker: "mem://", Mem: br}, worker.PoolOptions{FirstDials: *idleDials})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = pool.Run(ctx)
	}()
	waitAllOnline(b, pool, 10*time.Minute)
	elapsed := time.Since(start)

	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) / 1024 }
	b.ReportMetric(elapsed.Seconds(), "connect-s")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "conn/s")
	b.ReportMetric(per(after.HeapAlloc, before.HeapAlloc), "heapKB/session")
	b.ReportMetric(per(after.StackInuse, before.StackInuse), "stackKB/session")
	b.ReportMetric(per(after.HeapAlloc+after.StackInuse, before.HeapAlloc+before.StackInuse), "KB/session")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/session")
	if *idleFor > 0 {
		c0, t0 := cpuTime(), time.Now()
		time.Sleep(*idleFor)
		b.ReportMetric(100*(cpuTime()-c0).Seconds()/time.Since(t0).Seconds(), "idleCPU%")
	}
	b.ReportMetric(peakRSS()/(1<<20), "peakRSS-MB")
	b.ReportMetric(float64(offline(pool)), "offline-at-end")

	cancel()
	<-done
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	defer ccancel()
	if err := br.Close(cctx); err != nil {
		b.Fatal(err)
	}
}

// waitAllOnline polls the workers' state until one pass over them finds
// every one online (a session lost meanwhile, say to a keepalive that ran
// out on a loaded machine, counts against the connect time).
func waitAllOnline(b *testing.B, pool *worker.Pool, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	ws := pool.Workers()
	for {
		online := 0
		for _, w := range ws {
			if w.State().Online {
				online++
			}
		}
		if online == len(ws) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d workers online after %v", online, len(ws), timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// offline counts the workers not online now.
func offline(pool *worker.Pool) int {
	n := 0
	for _, w := range pool.Workers() {
		if !w.State().Online {
			n++
		}
	}
	return n
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, or 0 where
// /proc is not there.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}
