package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// A worker on the embedded broker answers a command the moment it
// arrives, then applies it once per idempotency key and sequence number,
// however often it is delivered. Here the example plays the leader with a
// session of its own.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	mb, _ := broker.StartBroker(broker.BrokerOptions{}) // the embedded MQTT broker
	var topics wire.Topics                              // the default prefix, "fleet"

	w, _ := worker.New(worker.Config{ID: "w-1", Version: "1.0.0", NoSync: true}, worker.MQTTDialer{Broker: "mem://", Mem: mb})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	leader, _ := transport.Connect(ctx, transport.ClientOptions{ID: "leader", Broker: "mem://", CleanSession: true}, mb)
	acks := make(chan wire.Envelope, 8)
	leader.Subscribe(ctx, topics.Up("w-1"), 1, func(topic string, payload []byte) {
		if env, err := wire.Decode(topic, payload, wire.Up, wire.DefaultMaxSize); err == nil && env.Kind == wire.KindAck {
			acks <- env
		}
	})
	waitUntil(func() bool { return w.State().Online })

	cmd, _ := wire.Encode(wire.Envelope{V: wire.Version, ID: "c-1", Kind: wire.KindConfig, Key: "config", Seq: 1,
		Body: wire.Body(wire.Apply{Version: "2.0.0"})})
	for range 2 { // the second delivery is a duplicate: acked, not applied again
		leader.Publish(ctx, topics.Down("w-1"), 1, false, cmd)
		ack := <-acks
		fmt.Println(ack.Kind, ack.Ref, ack.Result)
	}
	waitUntil(func() bool { return w.Stats().Duplicates == 1 })
	s := w.Stats()
	fmt.Printf("runs %s; applied %d, duplicates %d\n", s.Version, s.Applied, s.Duplicates)

	cancel()
	<-done
	leader.Close(true)
	stop, stopped := context.WithTimeout(context.Background(), 5*time.Second)
	defer stopped()
	mb.Close(stop)
	// Output:
	// ack c-1 ok
	// ack c-1 ok
	// runs 2.0.0; applied 1, duplicates 1
}

// waitUntil polls cond on the wall clock until it holds, for at most 10 s:
// the worker does its work on a goroutine of its own.
func waitUntil(cond func() bool) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); !cond() && time.Now().Before(deadline); {
		<-tick.C
	}
}
