package broker

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A bucket outlives its client's connections until it has refilled: a
// client id that leaves in debt is remembered, one that has refilled is
// forgotten at once, and those left behind are swept once there are
// enough of them, so that ever new ids cannot grow the limiter without
// end.
func TestRateBucketsForgotten(t *testing.T) {
	clk := clock.NewFake(t0)
	r := newRateLimiter(clk, RateLimit{Messages: 1, Burst: 2, Bytes: -1}, time.Minute, nil, nil, nil)
	r.minSweep, r.sweepAt = 4, 4

	idle := r.attach("idle", 1)
	r.detach(idle)
	if len(r.byID) != 0 {
		t.Fatalf("a full bucket kept after its last connection: %d buckets", len(r.byID))
	}
	for i := range 4 {
		b := r.attach(fmt.Sprint("busy-", i), 1)
		b.take(clk.Mono(), 1)
		r.detach(b)
	}
	if len(r.byID) != 4 {
		t.Fatalf("%d buckets kept, want the 4 left in debt", len(r.byID))
	}
	clk.Advance(time.Second)   // refilled
	held := r.attach("new", 1) // the fifth: sweeps the four refilled ones
	if len(r.byID) != 1 || r.sweepAt != 4 {
		t.Fatalf("after the sweep: %d buckets, next sweep at %d; want 1, 4", len(r.byID), r.sweepAt)
	}
	if again := r.attach("new", 1); again != held || held.refs != 2 {
		t.Fatalf("a second connection of the same id got another bucket (refs %d)", held.refs)
	}
}

// How many devices a login speaks for, and how its limit scales.
func TestDevicesOfLogin(t *testing.T) {
	for _, tc := range []struct {
		user string
		want float64
	}{
		{wire.LeaderUsername, 0},
		{"", 0},
		{"w-1", 1},
		{wire.GatewayUsername("gw-1", wire.DeviceRange{Prefix: "w-", First: 100, Last: 199}), 100},
		{"gateway/not a username", 1},
	} {
		if got := devices(tc.user); got != tc.want {
			t.Errorf("devices(%q) = %v, want %v", tc.user, got, tc.want)
		}
	}
	l := RateLimit{Messages: 2, Burst: 3, Bytes: -1}.scaled(100)
	if l.msgRate != 200 || l.msgBurst != 300 || !math.IsInf(l.byteRate, 1) || !math.IsInf(l.byteBurst, 1) {
		t.Errorf("scaled = %+v", l)
	}
}
