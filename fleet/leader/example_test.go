package leader_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// A leader on an in-memory outbox and the embedded broker deploys a
// firmware version to one worker, which acks it and applies it.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	mb, _ := broker.StartBroker(broker.BrokerOptions{}) // the embedded MQTT broker
	st, _ := outbox.NewMemory(outbox.Options{})         // outbox.OpenBolt for a real leader

	link, _ := transport.Connect(ctx, transport.ClientOptions{ID: "leader", Broker: "mem://", CleanSession: true,
		Will: transport.LeaderWill(leader.Config{}.Topics)}, mb)
	l, _ := leader.New(leader.Config{Link: link, Store: st})
	leaderDone := make(chan error, 1)
	go func() { leaderDone <- l.Run(ctx) }() // returns after what it started has stopped

	w, _ := worker.New(worker.Config{ID: "w-1", Version: "1.0.0"}, worker.MQTTDialer{Broker: "mem://", Mem: mb})
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(ctx) }()

	// The relay sends nothing to a worker before its "online" arrives.
	waitUntil(func() bool { return l.Fleet().Online == 1 })
	i, err := l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1"}})
	if err != nil {
		fmt.Println(err)
	}
	waitUntil(func() bool { p, _ := l.Progress(i); return p.Delivered() == 1 })
	waitUntil(func() bool { return w.State().Version == "2.0.0" })
	p, _ := l.Progress(i)
	fmt.Printf("deploy %s: %d of %d delivered; w-1 runs %s\n", p.Version, p.Delivered(), p.Targets, w.State().Version)

	cancel()
	<-workerDone
	<-leaderDone
	link.Close(true)
	st.Close()
	stop, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	mb.Close(stop)
	// Output:
	// deploy 2.0.0: 1 of 1 delivered; w-1 runs 2.0.0
}

// waitUntil polls cond on the wall clock until it holds, for at most 10 s:
// the leader and the worker do their work on goroutines of their own.
func waitUntil(cond func() bool) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); !cond() && time.Now().Before(deadline); {
		<-tick.C
	}
}
