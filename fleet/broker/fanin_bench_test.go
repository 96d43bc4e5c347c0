package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// BenchmarkFanIn: -sessions workers publish one heartbeat each at the same
// moment to the leader's subscription (QoS 0), as after a reconnect storm.
// It reports the share the broker dropped on the way to the leader, with
// the leader's write queue at the broker default and at 65,536. Run it
// with -benchtime=1x.
func BenchmarkFanIn(b *testing.B) {
	n := *benchSessions
	for _, queue := range []int{0, 1 << 16} {
		b.Run(fmt.Sprintf("leader-queue=%d", queue), func(b *testing.B) {
			for b.Loop() {
				fanIn(b, n, queue)
			}
		})
	}
}

func fanIn(b *testing.B, n, queue int) {
	ctx := context.Background()
	br, err := StartBroker(BrokerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer closeBroker(b, br.Close)
	got := newCounter()
	leader, err := transport.NewClient(transport.ClientOptions{ID: "leader", Broker: "mem://", CleanSession: true,
		MemBuffer: 4 << 20, WriteQueue: queue}, br)
	if err != nil {
		b.Fatal(err)
	}
	if err := transport.Wait(ctx, leader.Connect()); err != nil {
		b.Fatal(err)
	}
	defer leader.Disconnect(1000)
	if err := transport.Wait(ctx, leader.Subscribe(testTopics.AllUp(), 0, func(paho.Client, paho.Message) { got.add() })); err != nil {
		b.Fatal(err)
	}
	workers := make([]paho.Client, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := transport.NewClient(transport.ClientOptions{ID: fmt.Sprintf("w%06d", i), Broker: "mem://", CleanSession: true}, br)
			if err == nil {
				err = transport.Wait(ctx, c.Connect())
			}
			if err != nil {
				b.Error(err)
			}
			workers[i] = c
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range workers {
			wg.Go(func() { c.Disconnect(1000) })
		}
		wg.Wait()
	}()

	start := make(chan struct{})
	payload := []byte(`{"v":1,"id":"hb-000001","kind":"heartbeat","sent_ms":1767225600000,"body":{"version":"1.4.2","mailbox_depth":3}}`)
	for i, c := range workers {
		wg.Go(func() {
			<-start
			transport.Wait(ctx, c.Publish(testTopics.Up(fmt.Sprintf("w%06d", i)), 0, false, payload))
			// The broker handles a client's packets in order: at this
			// PUBACK the heartbeat is queued for the leader or dropped.
			transport.Wait(ctx, c.Publish("fence", 1, false, "x"))
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	dropped := br.Stats().PublishDropped
	got.expect(int64(n) - int64(dropped))
	select {
	case <-got.reached:
	case <-time.After(time.Minute):
		b.Fatalf("leader got %d, dropped %d, of %d", got.count(), dropped, n)
	}
	b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "msgs/s")
	b.ReportMetric(100*float64(dropped)/float64(n), "%dropped")
}
