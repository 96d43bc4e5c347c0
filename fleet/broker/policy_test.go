package broker

import (
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

var testSecret = []byte("0123456789abcdef-test-secret")

func testAuth() *Auth {
	return &Auth{LeaderPassword: "leader-pw", Secret: testSecret}
}

func TestPolicyTopics(t *testing.T) {
	p := newPolicy(&Auth{LeaderPassword: "x", Secret: testSecret, Topics: wire.Topics{Prefix: "fleet"}})
	const A = "w-a"
	for _, tc := range []struct {
		user, topic string
		write, want bool
	}{
		{A, "fleet/w-a/up", true, true},
		{A, "fleet/w-a/status", true, true},
		{A, "fleet/w-a/down", true, false},
		{A, "fleet/w-b/up", true, false},
		{A, "fleet/w-ab/up", true, false},
		{A, "fleet/w-a/up/x", true, false},
		{A, "fleet/w-a/upx", true, false},
		{A, "fleetx/w-a/up", true, false},
		{A, "fleet/+/up", true, false},
		{A, "fleet/_control/pool-1", true, false},
		{A, "fleet/w-a/down", false, true},
		{A, "fleet/w-b/down", false, false},
		{A, "fleet/+/down", false, false},
		{A, "fleet/#", false, false},
		{A, "#", false, false},
		{A, "$SYS/#", false, false},
		{A, "fleet/w-a/up", false, false},
		{A, "fleet/_control/pool-1", false, true},
		{A, "fleet/_control/#", false, true},
		{A, "fleet/_control/+", false, true},
		{A, "fleet/_control", false, true},
		{A, "fleet/_controlx", false, false},
		{A, "fleet/_leader/status", false, false},
		{wire.LeaderUsername, "fleet/w-a/down", true, true},
		{wire.LeaderUsername, "fleet/+/up", false, true},
		{wire.LeaderUsername, "fleet/#", false, true},
		{wire.LeaderUsername, "fleet/_leader/status", true, true},
		{wire.LeaderUsername, "fleet", true, false},
		{wire.LeaderUsername, "fleet/", true, false},
		{wire.LeaderUsername, "fleetx/a", true, false},
		{wire.LeaderUsername, "#", false, false},
		{wire.LeaderUsername, "+/w-a/up", false, false},
		{wire.LeaderUsername, "$SYS/broker/uptime", false, false},
	} {
		if got := p.allowed(tc.user, tc.user, tc.topic, tc.write); got != tc.want {
			t.Errorf("%s write=%v %q: allowed %v, want %v", tc.user, tc.write, tc.topic, got, tc.want)
		}
	}
}

func TestPolicyAllocatesNothing(t *testing.T) {
	p := newPolicy(testAuth())
	allocs := testing.AllocsPerRun(100, func() {
		p.allowed("w-a", "w-a", "fleet/w-a/up", true)
		p.allowed("w-a", "w-a", "fleet/_control/x", false)
		p.allowed(wire.LeaderUsername, "l", "fleet/w-a/down", true)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per check, want 0", allocs)
	}
}
