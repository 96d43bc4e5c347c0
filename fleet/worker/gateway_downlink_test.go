package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestGatewayDownlink: a gateway's radio sends one command at a time,
// each taking its airtime, and holds at most Capacity: of five commands
// sent at once to five devices, three wait and are answered ok as the
// radio gets to them, one airtime apart; the two that find the queue full
// are answered "full" for their devices at once, with the time the queue
// takes to drain as the hint. (That commands of one instant are admitted
// in their devices' order, so that which are refused never depends on
// goroutine scheduling, is shown by gateway-rollout's same result, quiet
// or starved of CPU.)
func TestGatewayDownlink(t *testing.T) {
	const airtime = 100 * time.Millisecond
	r := startGatewayRig(t, 5, worker.Config{GatewayDownlink: worker.Downlink{Capacity: 3, Airtime: airtime}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range r.ids {
		b, err := wire.Encode(wire.Envelope{ID: "j-" + id, Kind: wire.KindJob})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(ctx, r.tp.Down(id), 1, false, b); err != nil {
			t.Fatal(err)
		}
	}
	next := func(what string) wire.Envelope {
		t.Helper()
		for {
			env := fleettest.Receive(t, 10*time.Second, what, r.up, nil)
			if env.Kind == wire.KindAck {
				return env
			}
		}
	}
	// The commands that arrive at one instant are admitted together, in
	// their devices' order, once the process has settled: on the fake
	// clock, when it moves (by nothing).
	fleettest.Eventually(t, 10*time.Second, "the five commands admitted or refused", func() error {
		r.clk.Advance(0)
		st := r.pool.Gateway(gatewayID).Stats()
		return fleettest.Unless(st.DownlinkRefused+uint64(st.DownlinkMaxQueue) == 5, "%+v", st)
	})
	// The two refusals come at once, before any airtime has passed.
	for range 2 {
		env := next("a refusal for a full queue")
		if env.Result != wire.ResultFull {
			t.Fatalf("%s answered %s before any airtime, want full", env.Ref, env.Result)
		}
		if want := (3 * airtime).Milliseconds(); env.RetryAfterMs != want {
			t.Errorf("%s: retry after %d ms, want %d (three commands of %v to send)", env.Ref, env.RetryAfterMs, want, airtime)
		}
	}
	for i := range 3 {
		fleettest.Advance(t, r.clk, airtime, "the radio's airtime")
		env := next("a command through the radio")
		if env.Result != wire.ResultOK {
			t.Fatalf("command %d through the radio: %s answered %s, want ok", i, env.Ref, env.Result)
		}
	}
	st := r.pool.Gateway(gatewayID).Stats()
	if st.DownlinkForwarded != 3 || st.DownlinkRefused != 2 || st.DownlinkMaxQueue != 3 || st.DownlinkDropped != 0 {
		t.Errorf("forwarded %d, refused %d, max queue %d, dropped %d; want 3, 2, 3, 0", st.DownlinkForwarded, st.DownlinkRefused, st.DownlinkMaxQueue, st.DownlinkDropped)
	}
}

// TestGatewayDownlinkRefusesBadConfig: a negative capacity, or a queue
// with no airtime, is refused by NewGateway.
func TestGatewayDownlinkRefusesBadConfig(t *testing.T) {
	for _, d := range []worker.Downlink{{Capacity: -1}, {Capacity: 4}} {
		_, err := worker.NewGateway(worker.GatewayConfig{ID: gatewayID, Range: wire.DeviceRange{Prefix: "w-", First: 0, Last: 3}, Downlink: d}, worker.MQTTDialer{})
		if err == nil {
			t.Errorf("downlink %+v: no error", d)
		}
	}
}
