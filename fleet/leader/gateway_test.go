package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// gwStatus hands the leader gateway gw's own status, as the broker would.
func (r *rig) gwStatus(gw, payload string) {
	r.link.handler(r.tp.AllGatewayStatus())(r.tp.GatewayStatus(gw), []byte(payload))
}

// view returns the leader's view of worker, and whether it has seen it.
func (r *rig) view(worker string) (leader.WorkerView, bool) {
	for _, w := range r.l.Fleet().Workers {
		if w.ID == worker {
			return w, true
		}
	}
	return leader.WorkerView{}, false
}

// onlineSet says which of workers the leader sees online, e.g. "w-1 w-3".
func (r *rig) onlineSet(workers ...string) string {
	s := ""
	for _, w := range workers {
		if v, ok := r.view(w); ok && v.Online {
			if s != "" {
				s += " "
			}
			s += w
		}
	}
	return s
}

// TestGatewayRetainedReplay: a leader that subscribes finds the retained
// statuses of a dead gateway (its will, offline) and of its devices (their
// last online, via it), in either order. Either way the devices end
// offline and the others keep their status.
func TestGatewayRetainedReplay(t *testing.T) {
	devices := func(r *rig) {
		r.status("w-1", "online d1 via gw-1")
		r.status("w-2", "online d1 via gw-1")
		r.status("w-3", "online d1 via gw-2") // behind another gateway
		r.status("w-4", "online d1")          // on its own session
	}
	for _, tc := range []struct {
		name                  string
		replay                func(r *rig)
		online                string
		stale, devicesOffline uint64
		gatewayOfflines, malf uint64
	}{
		{"gateway first", func(r *rig) { r.gwStatus("gw-1", "offline g1"); devices(r) }, "w-3 w-4", 2, 0, 1, 0},
		{"devices first", func(r *rig) { devices(r); r.gwStatus("gw-1", "offline g1") }, "w-3 w-4", 0, 2, 1, 0},
		// A status without an epoch names no session: refused, it takes
		// no device offline.
		{"devices first, epoch-less offline", func(r *rig) { devices(r); r.gwStatus("gw-1", "offline") }, "w-1 w-2 w-3 w-4", 0, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startLeader(t, leader.Config{})
			tc.replay(r)
			if got := r.onlineSet("w-1", "w-2", "w-3", "w-4"); got != tc.online {
				t.Errorf("online: %q, want %q", got, tc.online)
			}
			s := r.l.Stats()
			if s.StatusStale != tc.stale || s.GatewayDevicesOffline != tc.devicesOffline || s.GatewayOfflines != tc.gatewayOfflines || s.GatewaysOnline != 0 || s.Malformed != tc.malf {
				t.Errorf("stale %d, devices taken offline %d, gateway offlines %d, gateways online %d, malformed %d; want %d, %d, %d, 0, %d",
					s.StatusStale, s.GatewayDevicesOffline, s.GatewayOfflines, s.GatewaysOnline, s.Malformed, tc.stale, tc.devicesOffline, tc.gatewayOfflines, tc.malf)
			}
		})
	}
}

// partitionPoker returns a worker id in w's relay partition that is not
// w: bringing it online makes that partition poll its queue at once
// without unparking anything of w's (the relay's interval is an hour).
func (r *rig) partitionPoker(w string) func() {
	n := len(r.l.Stats().Relay.Partitions)
	poker := ""
	for i := 0; poker == ""; i++ {
		if id := fmt.Sprintf("poker-%d", i); outbox.PartitionOf(id, n) == outbox.PartitionOf(w, n) {
			poker = id
		}
	}
	return func() {
		r.status(poker, "offline p")
		r.status(poker, "online p")
	}
}

// TestGatewayDeathParksItsDevices: a gateway's will takes exactly its
// devices offline, and the relay parks their commands, charging no
// attempt; a device on its own session keeps receiving. The gateway
// reconnects, says online and announces its device again: the parked
// command is delivered.
func TestGatewayDeathParksItsDevices(t *testing.T) {
	r := startLeader(t, leader.Config{})
	ctx := context.Background()
	send := func(w string) {
		t.Helper()
		if _, err := r.l.Send(ctx, w, wire.KindJob, nil); err != nil {
			t.Fatal(err)
		}
	}
	ackNext := func(want, what string) {
		t.Helper()
		cmd := fleettest.Receive(t, 10*time.Second, what, r.link.out, r.seen)
		if got := r.link.topic(cmd.ID); got != r.tp.Down(want) {
			t.Fatalf("%s: published on %s, want %s", what, got, r.tp.Down(want))
		}
		b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
		if err != nil {
			t.Fatal(err)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up(want), b)
	}

	r.gwStatus("gw-1", "online g1")
	r.status("w-1", "online d1 via gw-1")
	r.status("w-2", "online d1 via gw-1")
	r.status("w-3", "online d1")
	if s := r.l.Stats(); s.GatewaysOnline != 1 {
		t.Fatalf("gateways online %d, want 1", s.GatewaysOnline)
	}
	if v, _ := r.view("w-1"); v.Gateway != "gw-1" {
		t.Fatalf("w-1's gateway %q, want gw-1", v.Gateway)
	}
	r.gwStatus("gw-1", "offline g1") // its will
	if got := r.onlineSet("w-1", "w-2", "w-3"); got != "w-3" {
		t.Fatalf("online after gw-1's will: %q, want \"w-3\"", got)
	}
	if s := r.l.Stats(); s.GatewaysOnline != 0 || s.GatewayOfflines != 1 || s.GatewayDevicesOffline != 2 {
		t.Fatalf("gateways online %d, offlines %d, devices taken offline %d; want 0, 1, 2",
			s.GatewaysOnline, s.GatewayOfflines, s.GatewayDevicesOffline)
	}

	poll := r.partitionPoker("w-1")
	send("w-1")
	poll()
	fleettest.Eventually(t, 10*time.Second, "the relay parks the job of the device behind the dead gateway", func() error {
		skips := r.l.Stats().Relay.Total().OfflineSkips
		return fleettest.Unless(skips == 1, "%d offline skips; %s", skips, r.seen())
	})
	select {
	case cmd := <-r.link.out:
		t.Fatalf("published %s on %s, to a device whose gateway is dead", cmd.ID, r.link.topic(cmd.ID))
	default:
	}
	send("w-3")
	r.partitionPoker("w-3")()
	ackNext("w-3", "the job of the device on its own session")
	fleettest.Eventually(t, 10*time.Second, "w-3's job acked", r.acked(1))

	r.gwStatus("gw-1", "online g2")
	r.status("w-1", "online d2 via gw-1") // wakes its queue at once
	ackNext("w-1", "the parked job, once the gateway announces the device again")
	fleettest.Eventually(t, 10*time.Second, "both jobs acked", r.acked(2))
	if s := r.l.Stats(); s.GatewaysOnline != 1 || s.AsksSent != 2 || s.Relay.Total().Errors != 0 {
		t.Errorf("gateways online %d, asks sent %d, delivery errors %d; want 1, 2, 0 (parking tried nothing)",
			s.GatewaysOnline, s.AsksSent, s.Relay.Total().Errors)
	}
}

// TestStaleGatewayWill: a gateway reconnects before the broker publishes
// its old session's will. The will (another epoch) is counted as stale
// and leaves the devices the new session announced online.
func TestStaleGatewayWill(t *testing.T) {
	r := startLeader(t, leader.Config{})
	r.gwStatus("gw-1", "online g1")
	r.status("w-1", "online d1 via gw-1")
	r.gwStatus("gw-1", "online g2")
	r.status("w-1", "online d2 via gw-1")
	r.gwStatus("gw-1", "offline g1") // the late will of g1
	if got := r.onlineSet("w-1"); got != "w-1" {
		t.Fatalf("w-1 offline after the late will of its gateway's old session")
	}
	s := r.l.Stats()
	if s.StatusStale != 1 || s.GatewayOfflines != 0 || s.GatewaysOnline != 1 {
		t.Fatalf("stale %d, gateway offlines %d, gateways online %d; want 1, 0, 1", s.StatusStale, s.GatewayOfflines, s.GatewaysOnline)
	}
	r.gwStatus("gw-1", "offline g2")
	if got := r.onlineSet("w-1"); got != "" {
		t.Fatalf("w-1 online after its gateway's current session died")
	}
}

// TestGatewayNewSessionDropsOldDevices: a gateway online on a new epoch
// has lost its old session and every device on it, whether or not the
// old will ever counts: the devices it does not announce again go
// offline.
func TestGatewayNewSessionDropsOldDevices(t *testing.T) {
	r := startLeader(t, leader.Config{})
	r.gwStatus("gw-1", "online g1")
	r.status("w-1", "online d1 via gw-1")
	r.status("w-2", "online d1 via gw-1")
	r.gwStatus("gw-1", "online g1") // a replay of the same session: nothing
	if got := r.onlineSet("w-1", "w-2"); got != "w-1 w-2" {
		t.Fatalf("online after a replay of the gateway's online: %q", got)
	}
	r.gwStatus("gw-1", "online g2")
	r.status("w-1", "online d2 via gw-1")
	if got := r.onlineSet("w-1", "w-2"); got != "w-1" {
		t.Fatalf("online after the gateway's new session announced w-1: %q, want \"w-1\"", got)
	}
	if s := r.l.Stats(); s.GatewayDevicesOffline != 2 || s.GatewaysOnline != 1 || s.GatewayOfflines != 0 {
		t.Fatalf("devices taken offline %d, gateways online %d, offlines %d; want 2, 1, 0", s.GatewayDevicesOffline, s.GatewaysOnline, s.GatewayOfflines)
	}
}

// TestDeviceMovesGateway: a device announced via another gateway is
// carried by that one from then on: the old gateway's death leaves it
// online, the new one's takes it offline. A device that went offline on
// its own is not counted again when its gateway dies.
func TestDeviceMovesGateway(t *testing.T) {
	r := startLeader(t, leader.Config{})
	r.gwStatus("gw-1", "online g1")
	r.gwStatus("gw-2", "online g1")
	r.status("w-1", "online d1 via gw-1")
	r.status("w-2", "online d1 via gw-1")
	r.status("w-1", "online d2 via gw-2")
	if v, _ := r.view("w-1"); v.Gateway != "gw-2" {
		t.Fatalf("w-1's gateway %q after its online via gw-2", v.Gateway)
	}
	r.status("w-2", "offline d1 via gw-1") // left cleanly
	r.gwStatus("gw-1", "offline g1")
	if got := r.onlineSet("w-1", "w-2"); got != "w-1" {
		t.Fatalf("online after gw-1 died: %q, want \"w-1\" (moved to gw-2)", got)
	}
	if s := r.l.Stats(); s.GatewayDevicesOffline != 0 {
		t.Fatalf("%d devices taken offline by gw-1, want 0 (w-1 moved, w-2 left)", s.GatewayDevicesOffline)
	}
	r.gwStatus("gw-2", "offline g1")
	if got := r.onlineSet("w-1"); got != "" {
		t.Fatalf("w-1 online after gw-2 died")
	}
	if v, _ := r.view("w-2"); v.Gateway != "gw-1" {
		t.Errorf("w-2's gateway %q, want gw-1 (kept after it went offline)", v.Gateway)
	}
	if s := r.l.Stats(); s.GatewayDevicesOffline != 1 || s.GatewaysOnline != 0 || s.GatewayOfflines != 2 {
		t.Errorf("devices taken offline %d, gateways online %d, offlines %d; want 1, 0, 2", s.GatewayDevicesOffline, s.GatewaysOnline, s.GatewayOfflines)
	}
}

// TestGatewayStatusMalformed: a gateway status with a "via", or garbage,
// is refused and counted, and changes nothing.
func TestGatewayStatusMalformed(t *testing.T) {
	r := startLeader(t, leader.Config{})
	r.gwStatus("gw-1", "online g1")
	r.status("w-1", "online d1 via gw-1")
	for _, p := range []string{"offline g1 via gw-2", "Offline g1", "offline g1\n"} {
		r.gwStatus("gw-1", p)
	}
	r.link.handler(r.tp.AllGatewayStatus())("fleet/_gateway/_x/status", []byte("offline"))
	r.gwStatus("gw-1", "") // a cleared retained message
	if got := r.onlineSet("w-1"); got != "w-1" {
		t.Fatal("w-1 offline after malformed gateway statuses")
	}
	if s := r.l.Stats(); s.Malformed != 4 || s.GatewaysOnline != 1 {
		t.Fatalf("malformed %d, gateways online %d; want 4, 1", s.Malformed, s.GatewaysOnline)
	}
}

// TestGatewayNamesDoNotAccumulate: a status payload may name any gateway;
// one the leader knows only from its devices is forgotten with its last
// device, so names that never come back do not pile up.
func TestGatewayNamesDoNotAccumulate(t *testing.T) {
	r := startLeader(t, leader.Config{})
	for i := range 100 {
		r.status("w-1", fmt.Sprintf("online d%d via gw-%d", i, i))
	}
	r.status("w-1", "online d100") // its own session
	r.gwStatus("gw-real", "online g1")
	if n := r.l.GatewaysKnown(); n != 1 {
		t.Fatalf("%d gateways kept after a device named 100 in turn, want 1 (the one with a status of its own)", n)
	}
}
