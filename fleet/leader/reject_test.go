package leader_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestMalformedAnsweredWithReject: a worker message the leader refuses is
// answered with a reject naming its id and saying why, whatever is wrong
// with it: a name given twice (which encoding/json would have read as its
// last value), or telemetry nested past any decoder's limit. An id that a
// reply could not carry back unchanged (not UTF-8) gets no answer; the
// message is counted all the same.
func TestMalformedAnsweredWithReject(t *testing.T) {
	r := startLeader(t, leader.Config{})
	up := func(payload string) { r.link.handler(r.tp.AllUp())(r.tp.Up("w-1"), []byte(payload)) }
	for _, tc := range []struct{ name, payload, ref, reason string }{
		{"kind twice", `{"v":1,"id":"r-1","kind":"heartbeat","kind":"request","body":{"what":"sync"}}`, "r-1", `field "kind" given twice`},
		{"metric twice", `{"v":1,"id":"t-1","kind":"telemetry","body":{"metrics":{"cpu":1,"cpu":2}}}`, "t-1", `field "cpu" given twice`},
		{"nested telemetry", `{"v":1,"id":"t-2","kind":"telemetry","body":{"metrics":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, "t-2", "exceeded max depth"},
	} {
		up(tc.payload)
		env := fleettest.Receive(t, 10*time.Second, tc.name+": the reject", r.link.out, r.seen)
		if env.Kind != wire.KindReply || env.Ref != tc.ref || env.Result != wire.ResultReject || !strings.Contains(env.Reason, tc.reason) {
			t.Fatalf("%s: answered %+v; want a reject of %s saying %q", tc.name, env, tc.ref, tc.reason)
		}
	}
	up("{\"v\":1,\"id\":\"r-\xff\",\"kind\":\"request\",\"body\":{\"what\":\"sync\"}}")
	up(`{"v":1,"id":"r-4","kind":"request","body":{"what":"sync"}}`) // a fence: answered ok
	env := fleettest.Receive(t, 10*time.Second, "the fence's reply", r.link.out, r.seen)
	if env.Ref != "r-4" || env.Result != wire.ResultOK {
		t.Fatalf("answered %+v; want ok for r-4, and nothing for the id that is not UTF-8", env)
	}
	if s := r.l.Stats(); s.Malformed != 4 || s.RejectedMalformed != 3 {
		t.Fatalf("malformed %d, rejected %d; want 4 and 3", s.Malformed, s.RejectedMalformed)
	}
}
