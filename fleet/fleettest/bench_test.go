package fleettest_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// BenchmarkAckedDeliveries measures commands delivered leader -> workers and
// acknowledged back, end to end in one process: the bbolt outbox
// (durability none), the partitioned AIMD relay, the embedded broker over
// in-memory connections, 200 workers with roomy mailboxes and no service
// time. One op is one acked delivery.
var benchWorkers = 200

func BenchmarkAckedDeliveries(b *testing.B) {
	b.Run("bbolt", func(b *testing.B) { benchAcked(b, false, 0) })
	b.Run("memory", func(b *testing.B) { benchAcked(b, true, 0) })
	// The memory variant's fleet behind gateways of 20: 10 MQTT sessions
	// carry the 200 workers.
	b.Run("gateway", func(b *testing.B) { benchAcked(b, true, 20) })
}

func benchAcked(b *testing.B, memory bool, gatewaySize int) {
	workers := benchWorkers
	f := fleettest.StartFleet(b, workers, fleettest.Options{
		MemoryOutbox: memory,
		GatewaySize:  gatewaySize,
		// Workers that take a command at once: this measures the delivery
		// path, not a worker's service time.
		Worker: worker.Config{Service: dist.Const(time.Nanosecond), Mailbox: mailbox.Options{Capacity: 1024}},
		Outbox: outbox.Options{Partitions: 4},
		Leader: leader.Config{Relay: outbox.RelayOptions{
			Batch: 100, Limiter: flow.LimiterOptions{Initial: 100, Min: 1, Max: 200},
		}},
	})
	f.WaitOnline(b, workers)
	ctx := context.Background()
	ids := f.IDs()
	msgs := make([]outbox.Message, b.N)
	for i := range msgs {
		msgs[i] = outbox.Message{Receiver: ids[i%workers], Kind: string(wire.KindPing)}
	}
	start := f.Store.Stats().Acked
	b.ResetTimer()
	for i := 0; i < len(msgs); i += 1000 {
		if _, err := f.Store.Enqueue(ctx, msgs[i:min(i+1000, len(msgs))]...); err != nil {
			b.Fatal(err)
		}
	}
	fleettest.Eventually(b, 10*time.Minute, "all acked", func() error {
		acked := f.Store.Stats().Acked - start
		return fleettest.Unless(acked >= uint64(b.N), "%d of %d acked", acked, b.N)
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acked/s")
	rtt := f.Leader.Stats().AskRTT
	b.ReportMetric(float64(rtt.Quantile(0.5).Microseconds()), "ask-p50-µs")
	b.ReportMetric(float64(rtt.Quantile(0.99).Microseconds()), "ask-p99-µs")
	b.ReportMetric(float64(f.Pool.Stats().Total.DeliveriesDropped), "gw-dropped")
}
