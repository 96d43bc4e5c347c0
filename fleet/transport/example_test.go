package transport_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Two sessions on the embedded broker with the fleet's logins: a worker
// hears what the leader sends it, and a login with the wrong password is
// refused for good.
func ExampleConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret := []byte("an-example-fleet-secret-of-32-bytes")
	b, err := broker.StartBroker(broker.BrokerOptions{Auth: &broker.Auth{LeaderPassword: "leader-pw", Secret: secret}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close(ctx)
	var topics wire.Topics

	w, err := transport.Connect(ctx, transport.ClientOptions{
		ID: "w-1", Username: "w-1", Password: wire.WorkerPassword(secret, "w-1"),
		Broker: "mem://", CleanSession: true,
	}, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close(true)
	got := make(chan string, 1)
	// The handler runs on the client's delivery goroutine: it must not block.
	if err := w.Subscribe(ctx, topics.Down("w-1"), 1, func(_ string, payload []byte) {
		select {
		case got <- string(payload):
		default:
		}
	}); err != nil {
		fmt.Println(err)
		return
	}

	l, err := transport.Connect(ctx, transport.ClientOptions{
		ID: "_leader", Username: wire.LeaderUsername, Password: "leader-pw",
		Broker: "mem://", CleanSession: true,
	}, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close(true)
	if err := l.Publish(ctx, topics.Down("w-1"), 1, false, []byte("hello")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("w-1 got:", <-got)

	_, err = transport.Connect(ctx, transport.ClientOptions{
		ID: "w-2", Username: "w-2", Password: "guessed",
		Broker: "mem://", CleanSession: true,
	}, b)
	fmt.Println("w-2 refused:", errors.Is(err, transport.ErrRefused))
	// Output:
	// w-1 got: hello
	// w-2 refused: true
}
