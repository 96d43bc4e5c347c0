package wire_test

import (
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// The leader encodes a command for a worker's down topic; the worker
// decodes it strictly, reads its body and answers with an ack that names
// the command.
func ExampleEncode() {
	topics := wire.Topics{Prefix: "fleet"}
	cmd := wire.Envelope{
		ID: "c-1", Kind: wire.KindConfig, Key: "config", Seq: 7,
		Body: wire.Body(wire.Apply{Version: "2.0.0"}),
	}
	payload, err := wire.Encode(cmd)
	if err != nil {
		panic(err)
	}
	fmt.Println(topics.Down("w-0001"), string(payload))

	env, err := wire.Decode(topics.Down("w-0001"), payload, wire.Down, wire.DefaultMaxSize)
	if err != nil {
		panic(err)
	}
	var apply wire.Apply
	if err := env.BodyInto(&apply); err != nil {
		panic(err)
	}
	fmt.Println("apply", apply.Version, "seq", env.Seq)

	ack, _ := wire.Encode(wire.Ack(&env, wire.ResultOK))
	fmt.Println(topics.Up("w-0001"), string(ack))
	// Output:
	// fleet/w-0001/down {"v":1,"id":"c-1","kind":"config","key":"config","seq":7,"body":{"version":"2.0.0"}}
	// apply 2.0.0 seq 7
	// fleet/w-0001/up {"v":1,"kind":"ack","ref":"c-1","result":"ok"}
}

// Decode refuses what it does not know, with an error that names the
// topic and what would be valid, and matches a sentinel.
func ExampleDecode() {
	topic := "fleet/w-0001/up"
	for _, payload := range []string{
		`{"v":1,"id":"h-1","kind":"heartbeat","body":{"mailbox_depth":0},"extra":1}`,
		`{"v":1,"id":"c-1","kind":"config","body":{"version":"2.0.0"}}`,
	} {
		_, err := wire.Decode(topic, []byte(payload), wire.Up, 0)
		fmt.Println(err)
		fmt.Println("malformed:", errors.Is(err, wire.ErrMalformed), "wrong topic:", errors.Is(err, wire.ErrWrongTopic))
	}
	// Output:
	// fleet/w-0001/up: malformed envelope: unknown field "extra" (want a JSON envelope, see docs/PROTOCOL.md)
	// malformed: true wrong topic: false
	// fleet/w-0001/up: kind not allowed on this topic: kind "config" travels down (leader to worker), not up (worker to leader)
	// malformed: false wrong topic: true
}
