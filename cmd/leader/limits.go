package main

import (
	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// minPacketSize is the least --max-packet-size: a worker message of the
// largest size the leader takes (a 64 KiB envelope) and its topic and
// headers, with room to spare.
const minPacketSize = wire.DefaultMaxSize + 1024

// maxPacketSize is the most MQTT can frame: a 5-byte fixed header and a
// remaining length of up to 256 MiB - 1.
const maxPacketSize = 268_435_455 + 5

// validMaxPacketSize checks --max-packet-size; it only applies to the
// embedded broker (external says whether --broker was given).
func validMaxPacketSize(n int, external bool) error {
	switch {
	case external && n != broker.DefaultMaxPacketSize:
		return cli.Usagef("--max-packet-size: only for the embedded broker; with --broker, set the external broker's limit (Mosquitto: max_packet_size)")
	case n < minPacketSize || n > maxPacketSize:
		return cli.Usagef("--max-packet-size %d: want %d (64 KiB + 1 KiB) to %d bytes, e.g. %d (1 MiB)", n, minPacketSize, maxPacketSize, broker.DefaultMaxPacketSize)
	}
	return nil
}

// brokerRefusals reads the embedded broker's refusal counts for the
// leader's stats; nil without an embedded broker.
func brokerRefusals(b *broker.Broker) func() leader.BrokerRefusals {
	if b == nil {
		return nil
	}
	return func() leader.BrokerRefusals {
		s := b.Stats()
		return leader.BrokerRefusals{Auth: s.AuthDenied, Topic: s.ACLDenied, PacketTooLarge: s.PacketTooLarge}
	}
}
