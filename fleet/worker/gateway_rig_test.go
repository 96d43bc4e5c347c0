package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

const gatewayID = "gw-00000"

// gwRig is a pool of devices behind one gateway on a fake clock, against
// the embedded broker, and a bare session standing in for the leader: it
// publishes commands and records every device's envelopes and every
// status (devices' and gateways').
type gwRig struct {
	b    *broker.Broker
	pool *worker.Pool
	clk  *clock.Fake
	tp   wire.Topics
	ids  []string
	lead *transport.Session
	up   chan wire.Envelope
	stop func() // stops the pool and waits for it; once

	mu       sync.Mutex
	statuses []status
}

type status struct{ topic, payload string }

// startGatewayRig starts n devices w-0000… behind gateway gw-00000; clk,
// if not nil, gives device i a clock of its own over the rig's fake.
func startGatewayRig(t *testing.T, n int, cfg worker.Config, clk func(i int, f *clock.Fake) clock.Clock) *gwRig {
	t.Helper()
	return startGatewayRigVia(t, n, cfg, clk, nil)
}

// startGatewayRigVia is startGatewayRig with the gateway's sessions
// opened through via, given the broker's own dialer (nil: that dialer).
func startGatewayRigVia(t *testing.T, n int, cfg worker.Config, clk func(i int, f *clock.Fake) clock.Clock, via func(worker.GatewayDialer) worker.GatewayDialer) *gwRig {
	t.Helper()
	// The broker's write queue holds a test's whole flood (200 commands
	// at once): a gateway session that reads it slowly on a loaded
	// machine must not lose part of it in the broker, which is not what
	// these tests look at (a full queue drops silently: Stats.PublishDropped).
	b, err := broker.StartBroker(broker.BrokerOptions{MaxWritesPending: 1024})
	if err != nil {
		t.Fatal(err)
	}
	r := &gwRig{b: b, clk: clock.NewFake(time.Unix(1_700_000_000, 0)), up: make(chan wire.Envelope, 256)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.lead, err = transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true}, b); err != nil {
		t.Fatal(err)
	}
	record := func(topic string, payload []byte) {
		r.mu.Lock()
		r.statuses = append(r.statuses, status{topic, string(payload)})
		r.mu.Unlock()
	}
	for _, s := range []struct {
		filter string
		h      func(string, []byte)
	}{
		{r.tp.AllUp(), func(topic string, payload []byte) {
			if env, err := wire.Decode(topic, payload, wire.Up, 0); err == nil {
				r.up <- env
			}
		}},
		{r.tp.AllStatus(), record},
		{r.tp.AllGatewayStatus(), record},
	} {
		if err := r.lead.Subscribe(ctx, s.filter, 1, s.h); err != nil {
			t.Fatal(err)
		}
	}
	cfgs := make([]worker.Config, n)
	for i := range cfgs {
		c := cfg
		c.ID, c.Index, c.Gateway, c.NoSync, c.Clock = fmt.Sprintf("w-%04d", i), uint64(i), gatewayID, true, r.clk
		if clk != nil {
			c.Clock = clk(i, r.clk)
		}
		cfgs[i] = c
		r.ids = append(r.ids, c.ID)
	}
	dial := worker.MQTTDialer{Broker: "mem://", Mem: b}
	po := worker.PoolOptions{Clock: r.clk}
	if via != nil {
		po.Gateways = via(dial)
	}
	if r.pool, err = worker.NewPool(cfgs, dial, po); err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.pool.Run(runCtx)
	}()
	r.stop = sync.OnceFunc(func() {
		cancelRun()
		<-done
	})
	t.Cleanup(func() {
		r.stop()
		r.lead.Close(true)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(cctx); err != nil {
			t.Errorf("broker close: %v", err)
		}
	})
	r.waitOnline(t, "every device online")
	return r
}

// waitOnline waits until every device is online, advancing the fake clock
// by a step of the devices' backoff while it waits: reconnects are due on
// it.
func (r *gwRig) waitOnline(t *testing.T, what string) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		r.clk.Advance(10 * time.Millisecond)
		ps := r.pool.Stats()
		if err := fleettest.Unless(ps.Online == len(r.ids) && ps.GatewaysOnline == 1, "%d of %d devices online, %d gateways online; gateway %+v",
			ps.Online, len(r.ids), ps.GatewaysOnline, r.pool.Gateway(gatewayID).Stats()); err != nil {
			return err
		}
		// The leader hears a device online after the broker took its
		// subscription: a command sent after that reaches it.
		heard := r.heardOnline()
		return fleettest.Unless(heard == len(r.ids), "the leader heard %d of %d devices online", heard, len(r.ids))
	})
}

// status waits for a status on topic, recorded after the first skip ones,
// that want accepts, and returns its index and parsed form.
func (r *gwRig) status(t *testing.T, skip int, topic, what string, want func(wire.Status) bool) (int, wire.Status) {
	t.Helper()
	var (
		at  int
		got wire.Status
	)
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		var seen []string
		for i := skip; i < len(r.statuses); i++ {
			s := r.statuses[i]
			if s.topic != topic {
				continue
			}
			seen = append(seen, s.payload)
			p, err := wire.ParseStatus(s.topic, []byte(s.payload))
			if err != nil {
				return err
			}
			if want(p) {
				at, got = i, p
				return nil
			}
		}
		return fmt.Errorf("statuses on %s: %q", topic, seen)
	})
	return at, got
}

// heardOnline is how many devices' latest status at the leader is online.
func (r *gwRig) heardOnline() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := map[string]bool{}
	for _, s := range r.statuses {
		if st, err := wire.ParseStatus(s.topic, []byte(s.payload)); err == nil && s.topic != r.tp.GatewayStatus(gatewayID) {
			last[s.topic] = st.Online
		}
	}
	n := 0
	for _, id := range r.ids {
		if last[r.tp.Status(id)] {
			n++
		}
	}
	return n
}

// recorded is how many statuses have been recorded so far.
func (r *gwRig) recorded() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.statuses)
}

// job sends a job to every device and waits for every ack.
func (r *gwRig) jobs(t *testing.T, tag string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := map[string]bool{}
	for _, id := range r.ids {
		ref := tag + "-" + id
		b, err := wire.Encode(wire.Envelope{ID: ref, Kind: wire.KindJob})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(ctx, r.tp.Down(id), 1, false, b); err != nil {
			t.Fatal(err)
		}
		want[ref] = true
	}
	for len(want) > 0 {
		env := fleettest.Receive(t, 10*time.Second, fmt.Sprintf("%d more acks of %s", len(want), tag), r.up, nil)
		if env.Kind == wire.KindAck && want[env.Ref] {
			if env.Result != wire.ResultOK {
				t.Fatalf("%s answered %s", env.Ref, env.Result)
			}
			delete(want, env.Ref)
		}
	}
}
