package main

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
)

// The flags reach the broker's options: their defaults as the broker's
// own, a value as itself, 0 as "off" (a negative option).
func TestBrokerLimitsApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want broker.BrokerOptions
	}{
		{"defaults", nil, broker.BrokerOptions{PacketReadTimeout: broker.DefaultPacketReadTimeout, MaxConnections: broker.DefaultMaxConnections,
			RateLimit: broker.DefaultRateLimit}},
		{"set", []string{"--packet-read-timeout", "3s", "--max-connections", "50000", "--max-partial-bytes", "268435456",
			"--worker-rate", "2.5", "--worker-burst", "30", "--worker-byte-rate", "1000", "--worker-byte-burst", "4096"},
			broker.BrokerOptions{PacketReadTimeout: 3 * time.Second, MaxConnections: 50000, MaxPartialBytes: 256 << 20,
				RateLimit: broker.RateLimit{Messages: 2.5, Burst: 30, Bytes: 1000, ByteBurst: 4096}}},
		{"off", []string{"--packet-read-timeout", "0", "--max-connections", "0", "--max-partial-bytes", "0", "--worker-rate", "0", "--worker-byte-rate", "0"},
			broker.BrokerOptions{PacketReadTimeout: -1, MaxConnections: -1, MaxPartialBytes: -1,
				RateLimit: broker.RateLimit{Messages: -1, Burst: broker.DefaultRateLimit.Burst, Bytes: -1, ByteBurst: broker.DefaultRateLimit.ByteBurst}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := parseRun(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got broker.BrokerOptions
			rc.o.limits.apply(&got)
			if got.PacketReadTimeout != tc.want.PacketReadTimeout || got.MaxConnections != tc.want.MaxConnections ||
				got.MaxPartialBytes != tc.want.MaxPartialBytes || got.RateLimit != tc.want.RateLimit {
				t.Errorf("options %+v %d %d %+v; want %+v %d %d %+v", got.PacketReadTimeout, got.MaxConnections, got.MaxPartialBytes, got.RateLimit,
					tc.want.PacketReadTimeout, tc.want.MaxConnections, tc.want.MaxPartialBytes, tc.want.RateLimit)
			}
		})
	}
}
