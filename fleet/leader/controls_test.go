package leader_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// fakeLink is an in-process Link: the test calls the leader's handlers
// itself and reads what the leader publishes.
type fakeLink struct {
	mu       sync.Mutex
	handlers map[string]func(topic string, payload []byte)
	to       map[string]string  // envelope id -> the topic it was published on
	out      chan wire.Envelope // what the leader published on down topics
}

func (f *fakeLink) Publish(_ context.Context, topic string, _ byte, _ bool, payload []byte) error {
	if env, err := wire.Decode(topic, payload, wire.Down, 0); err == nil {
		f.mu.Lock()
		f.to[env.ID] = topic
		f.mu.Unlock()
		f.out <- env
	}
	return nil
}

// topic returns the topic envelope id was published on.
func (f *fakeLink) topic(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.to[id]
}

func (f *fakeLink) Send(topic string, qos byte, payload []byte) error {
	return f.Publish(context.Background(), topic, qos, false, payload)
}

func (f *fakeLink) Subscribe(_ context.Context, filter string, _ byte, h func(string, []byte)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[filter] = h
	return nil
}

func (f *fakeLink) handler(filter string) func(string, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handlers[filter]
}

type rig struct {
	l    *leader.Leader
	clk  *clock.Fake
	link *fakeLink
	st   *outbox.Memory
	tp   wire.Topics
	n    int
	stop func() // stops the leader (once; cleanup calls it too)
}

func startLeader(t *testing.T, cfg leader.Config) *rig {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	return startLeaderOn(t, cfg, clk, clk)
}

// startLeaderOn starts a leader that reads the clock c, which runs on
// fake, the clock the rig advances.
func startLeaderOn(t *testing.T, cfg leader.Config, fake *clock.Fake, c clock.Clock) *rig {
	t.Helper()
	return startLeaderWith(t, cfg, fake, c, outbox.Options{}, nil)
}

// startLeaderWith starts a leader on a memory store opened with so (its
// clock the rig's), over the rig's fake link or, if wrap is not nil, over
// what wrap makes of it. A nil fake is a new fake clock, which the leader
// reads. A zero cfg.ProgressEvery is an hour: no progress tick among the
// service timers the tests look for.
func startLeaderWith(t *testing.T, cfg leader.Config, fake *clock.Fake, c clock.Clock, so outbox.Options, wrap func(*fakeLink) leader.Link) *rig {
	t.Helper()
	if fake == nil {
		fake = clock.NewFake(time.Unix(1_700_000_000, 0))
		c = fake
	}
	so.Clock = fake
	st, err := outbox.NewMemory(so)
	if err != nil {
		t.Fatal(err)
	}
	return runLeaderWith(t, cfg, fake, c, st, wrap)
}

// runLeader starts a leader on store st with a new fake link, as
// startLeaderOn does.
func runLeader(t *testing.T, cfg leader.Config, fake *clock.Fake, c clock.Clock, st outbox.Store) *rig {
	t.Helper()
	return runLeaderWith(t, cfg, fake, c, st, nil)
}

// runLeaderWith is runLeader over what wrap makes of the fake link.
func runLeaderWith(t *testing.T, cfg leader.Config, fake *clock.Fake, c clock.Clock, st outbox.Store, wrap func(*fakeLink) leader.Link) *rig {
	t.Helper()
	r := &rig{clk: fake, link: &fakeLink{handlers: map[string]func(string, []byte){}, to: map[string]string{}, out: make(chan wire.Envelope, 64)}}
	if m, ok := st.(*outbox.Memory); ok {
		r.st = m
	}
	cfg.Link, cfg.Store, cfg.Clock = r.link, st, c
	if wrap != nil {
		cfg.Link = wrap(r.link)
	}
	cfg.Relay.Interval = time.Hour // no relay tick among the service timers the tests look for
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = time.Hour
	}
	var err error
	if r.l, err = leader.New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.l.Run(ctx) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("leader: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	fleettest.Eventually(t, 10*time.Second, "leader subscribed", func() error {
		up, status := r.link.handler(r.tp.AllUp()) != nil, r.link.handler(r.tp.AllStatus()) != nil
		return fleettest.Unless(up && status, "subscribed to up topics %v, to statuses %v", up, status)
	})
	return r
}

// seen says what the leader is doing, for a wait's failure message.
func (r *rig) seen() string {
	s := r.l.Stats()
	timer := "no timer armed"
	if next, ok := r.clk.NextDeadline(); ok {
		timer = "next timer in " + next.Sub(r.clk.Now()).String()
	}
	return fmt.Sprintf("leader: mailbox depth %d of %d, served %d, answered full %d, heartbeats processed %d, acked %d; %s",
		s.Mailbox.Depth, s.Mailbox.Capacity, s.RequestsServed, s.AnsweredFull, s.HeartbeatsProcessed, s.Outbox.Acked, timer)
}

// served is a check that n requests have been served.
func (r *rig) served(n uint64) func() error {
	return func() error {
		return fleettest.Unless(r.l.Stats().RequestsServed == n, "%s", r.seen())
	}
}

// request sends a worker request to the leader and returns its answer.
func (r *rig) request(t *testing.T) wire.Result {
	t.Helper()
	r.n++
	id := "s" + string(rune('0'+r.n))
	b, err := wire.Encode(wire.Envelope{ID: id, Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: "sync"})})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up("w-00001"), b)
	env := fleettest.Receive(t, 10*time.Second, "the answer to "+id, r.link.out, r.seen)
	if env.Ref != id {
		t.Fatalf("answer to %q, want to %q", env.Ref, id)
	}
	return env.Result
}

// waitServing waits until the leader is serving a request: its service
// time is a timer on the fake clock, due d from now.
func (r *rig) waitServing(t *testing.T, d time.Duration) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, fmt.Sprintf("the leader sleeping out a service time of %v", d), func() error {
		at, ok := r.clk.NextDeadline()
		return fleettest.Unless(ok && at.Equal(r.clk.Now().Add(d)), "%s", r.seen())
	})
}

// TestSetMailboxCapacity: a leader busy on a request with a mailbox of one
// answers "full"; raised to two, it takes one more.
func TestSetMailboxCapacity(t *testing.T) {
	r := startLeader(t, leader.Config{Mailbox: mailbox.Options{Capacity: 1}, Service: dist.Const(500 * time.Millisecond)})
	if got := r.request(t); got != wire.ResultOK {
		t.Fatalf("first request answered %s", got)
	}
	r.waitServing(t, 500*time.Millisecond)
	for i, want := range []wire.Result{wire.ResultOK, wire.ResultFull} {
		if got := r.request(t); got != want {
			t.Fatalf("request %d answered %s, want %s", i+2, got, want)
		}
	}
	if err := r.l.SetMailboxCapacity(2); err != nil {
		t.Fatal(err)
	}
	for i, want := range []wire.Result{wire.ResultOK, wire.ResultFull} {
		if got := r.request(t); got != want {
			t.Fatalf("after raising the capacity, request %d answered %s, want %s", i+4, got, want)
		}
	}
	s := r.l.Stats()
	if s.Mailbox.Capacity != 2 || s.Mailbox.Depth != 2 || s.AnsweredFull != 2 {
		t.Fatalf("mailbox capacity %d depth %d, answered full %d; want 2 2 2", s.Mailbox.Capacity, s.Mailbox.Depth, s.AnsweredFull)
	}
	if err := r.l.SetMailboxCapacity(0); err == nil {
		t.Fatal("SetMailboxCapacity(0) accepted")
	}
}

// TestSetService: a new service time applies from the next request on.
func TestSetService(t *testing.T) {
	r := startLeader(t, leader.Config{Service: dist.Const(10 * time.Second), HeartbeatInterval: time.Hour})
	r.request(t)
	r.waitServing(t, 10*time.Second) // the first request takes the old 10 s
	r.l.SetService(dist.Const(2 * time.Second))
	r.request(t)
	r.request(t)
	r.clk.Advance(10 * time.Second) // waitServing saw the timer armed
	fleettest.Eventually(t, 10*time.Second, "first request served after 10s", r.served(1))
	for n := uint64(2); n <= 3; n++ {
		r.waitServing(t, 2*time.Second) // not 10 s: the new service time
		r.clk.Advance(2 * time.Second)
		fleettest.Eventually(t, 10*time.Second, "next request served 2s later", r.served(n))
	}
}

// TestSharedHistograms: heartbeat ages go to the histogram the config
// gives, so a runner that restarts the leader keeps one distribution.
func TestSharedHistograms(t *testing.T) {
	var hbWait stats.Histogram
	r := startLeader(t, leader.Config{HeartbeatInterval: 30 * time.Second, HeartbeatWait: &hbWait})
	b, err := wire.Encode(wire.Envelope{ID: "h1", Kind: wire.KindHeartbeat, Seq: 1, Body: wire.Body(wire.Heartbeat{Version: "1.0.0"})})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up("w-00001"), b)
	fleettest.Advance(t, r.clk, 30*time.Second, "the heartbeat processing ticker")
	fleettest.Eventually(t, 10*time.Second, "heartbeat processed", func() error {
		return fleettest.Unless(r.l.Stats().HeartbeatsProcessed == 1, "%s", r.seen())
	})
	if s := hbWait.Snapshot(); s.Count != 1 || s.Max != 30*time.Second {
		t.Fatalf("shared histogram: %d ages, max %v; want 1 of 30s", s.Count, s.Max)
	}
}

// TestServiceRateWithCoarseTimers: the leader's service time is accounted
// from its schedule, not from when its sleep ended. Timers that wake late
// (here the clock moves in 10 ms steps, as a wall timer tick does under a
// scaled clock) must not slow a 2 ms service down to one message a tick:
// after 100 ms, 50 requests are served, 5 per step.
func TestServiceRateWithCoarseTimers(t *testing.T) {
	r := startLeader(t, leader.Config{Service: dist.Const(2 * time.Millisecond), HeartbeatInterval: time.Hour})
	for range 50 {
		if got := r.request(t); got != wire.ResultOK {
			t.Fatalf("request answered %s", got)
		}
	}
	for step := uint64(1); step <= 10; step++ {
		fleettest.Advance(t, r.clk, 10*time.Millisecond, "the end of a service time")
		fleettest.Eventually(t, 10*time.Second, "5 more requests served per 10 ms", r.served(5*step))
	}
}
