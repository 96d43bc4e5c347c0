package main

import (
	"math"
	"time"

	"github.com/spf13/cobra"

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

// brokerLimits are the flags of 'leader run' that bound what the
// embedded broker's TCP clients may make it hold and send; each is a
// broker.BrokerOptions field, and 0 turns it off.
type brokerLimits struct {
	packetTimeout   time.Duration
	maxConnections  int
	maxPartialBytes int64
	workerRate      float64
	workerBurst     int
	workerBytes     float64
	workerByteBurst int
}

// defaultBrokerLimits are the flags' defaults: the broker's.
func defaultBrokerLimits() brokerLimits {
	d := broker.DefaultRateLimit
	return brokerLimits{packetTimeout: broker.DefaultPacketReadTimeout, maxConnections: broker.DefaultMaxConnections,
		maxPartialBytes: broker.DefaultMaxPartialBytes,
		workerRate:      d.Messages, workerBurst: d.Burst, workerBytes: d.Bytes, workerByteBurst: d.ByteBurst}
}

func (b *brokerLimits) addFlags(c *cobra.Command) {
	d, f := defaultBrokerLimits(), c.Flags()
	f.DurationVar(&b.packetTimeout, "packet-read-timeout", d.packetTimeout, "time a TCP client has to send the rest of a packet it began, whatever its keepalive; a slower one is disconnected (0: no limit)")
	f.IntVar(&b.maxConnections, "max-connections", d.maxConnections, "TCP connections the embedded broker keeps open at once, logged in or in their handshake; one more is closed unread (0: no cap)")
	f.Int64Var(&b.maxPartialBytes, "max-partial-bytes", d.maxPartialBytes, "bytes the embedded broker holds for TCP clients' packets still arriving, all together; a packet that would pass it is refused from its header and the client disconnected (at least --max-packet-size, which it follows when larger; 0: no bound)")
	f.Float64Var(&b.workerRate, "worker-rate", d.workerRate, "messages per second a worker may publish through the embedded broker over TCP, a gateway as many per device in its range (the leader's login: no limit); more are dropped, counted and logged (0: no limit)")
	f.IntVar(&b.workerBurst, "worker-burst", d.workerBurst, "messages a worker may publish at once above --worker-rate (a gateway: per device)")
	f.Float64Var(&b.workerBytes, "worker-byte-rate", d.workerBytes, "bytes (topic and payload) per second a worker may publish through the embedded broker over TCP, a gateway as many per device (0: no limit)")
	f.IntVar(&b.workerByteBurst, "worker-byte-burst", d.workerByteBurst, "bytes a worker may publish at once above --worker-byte-rate (a gateway: per device); one message of any size goes through while the allowance is not in debt")
}

// validate checks the flags (maxPacket: --max-packet-size; external:
// whether --broker was given).
func (b brokerLimits) validate(maxPacket int, external bool) error {
	switch {
	case external && b != defaultBrokerLimits():
		return cli.Usagef("--packet-read-timeout, --max-connections, --max-partial-bytes and --worker-*: only for the embedded broker; with --broker, set the external broker's own limits")
	case b.packetTimeout < 0 || b.packetTimeout > 0 && b.packetTimeout < time.Second:
		return cli.Usagef("--packet-read-timeout %v: want 0 (no limit) or at least 1s, e.g. %v", b.packetTimeout, broker.DefaultPacketReadTimeout)
	case b.maxConnections < 0:
		return cli.Usagef("--max-connections %d: want 0 (no cap) or a positive count, e.g. %d", b.maxConnections, broker.DefaultMaxConnections)
	case b.maxPartialBytes < 0 || b.maxPartialBytes > 0 && b.maxPartialBytes < int64(maxPacket) && b.maxPartialBytes != broker.DefaultMaxPartialBytes:
		return cli.Usagef("--max-partial-bytes %d: want 0 (no bound) or at least --max-packet-size (%d)", b.maxPartialBytes, maxPacket)
	case !(b.workerRate >= 0) || math.IsInf(b.workerRate, 0):
		return cli.Usagef("--worker-rate %v: want 0 (no limit) or a positive number of messages per second, e.g. %v", b.workerRate, broker.DefaultRateLimit.Messages)
	case !(b.workerBytes >= 0) || math.IsInf(b.workerBytes, 0):
		return cli.Usagef("--worker-byte-rate %v: want 0 (no limit) or a positive number of bytes per second, e.g. %v", b.workerBytes, broker.DefaultRateLimit.Bytes)
	case b.workerBurst < 1:
		return cli.Usagef("--worker-burst %d: want at least 1, e.g. %d", b.workerBurst, broker.DefaultRateLimit.Burst)
	case b.workerByteBurst < 1:
		return cli.Usagef("--worker-byte-burst %d: want at least 1, e.g. %d", b.workerByteBurst, broker.DefaultRateLimit.ByteBurst)
	}
	return nil
}

// apply sets the broker's options from the flags. A flag's 0 turns its
// limit off, which the options say with a negative value (their zero is
// the default).
func (b brokerLimits) apply(o *broker.BrokerOptions) {
	o.PacketReadTimeout, o.MaxConnections, o.MaxPartialBytes = b.packetTimeout, b.maxConnections, b.maxPartialBytes
	o.RateLimit = broker.RateLimit{Messages: b.workerRate, Burst: b.workerBurst, Bytes: b.workerBytes, ByteBurst: b.workerByteBurst}
	if b.packetTimeout == 0 {
		o.PacketReadTimeout = -1
	}
	if b.maxConnections == 0 {
		o.MaxConnections = -1
	}
	switch b.maxPartialBytes {
	case 0:
		o.MaxPartialBytes = -1
	case broker.DefaultMaxPartialBytes:
		o.MaxPartialBytes = 0 // the broker's default: --max-packet-size when that is larger
	}
	if b.workerRate == 0 {
		o.RateLimit.Messages = -1
	}
	if b.workerBytes == 0 {
		o.RateLimit.Bytes = -1
	}
}

// brokerRefusals reads the embedded broker's refusal counts for the
// leader's stats; nil without an embedded broker.
func brokerRefusals(b *broker.Broker) func() leader.BrokerRefusals {
	if b == nil {
		return nil
	}
	return func() leader.BrokerRefusals {
		s := b.Stats()
		return leader.BrokerRefusals{Auth: s.AuthDenied, Topic: s.ACLDenied, PacketTooLarge: s.PacketTooLarge,
			PacketTimeout: s.PacketTimeouts, PartialBudget: s.PartialBudget, Connections: s.ConnectionsRefused, RateLimited: s.RateLimited}
	}
}
