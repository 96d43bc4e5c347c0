package dash

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/transport"
)

// lossConn is a connection the test can lose; its Redial fails a given
// number of times, then succeeds with a new Lost channel.
type lossConn struct {
	mu      sync.Mutex
	lost    chan struct{}
	fails   int
	redials int
	closed  bool
	asked   int // the dashboard's requests that the fleet announce itself
}

func (c *lossConn) Lost() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

func (c *lossConn) Err() error { return errors.New("EOF") }

func (c *lossConn) Close(bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
}

func (c *lossConn) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *lossConn) Publish(context.Context, string, byte, bool, []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked++
	return nil
}

func (c *lossConn) Redial(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redials++
	if c.fails > 0 {
		c.fails--
		return errors.New("connection refused")
	}
	c.lost = make(chan struct{})
	return nil
}

func (c *lossConn) drop(fails int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fails = fails
	close(c.lost)
}

func (c *lossConn) attempts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.redials
}

// TestRemoteKeepReconnects: a dashboard whose connection to the broker
// is lost shows the leader down and says so in its header and event log,
// once; it dials again with waits within its backoff windows, and once
// back (and the leader's stats with it) it shows the leader up and logs
// the reconnect.
func TestRemoteKeepReconnects(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	b := DefaultRemoteReconnect
	b.Base, b.Cap = 100*time.Millisecond, 400*time.Millisecond
	conn := &lossConn{lost: make(chan struct{})}
	r := newRemote(RemoteOptions{Broker: "tcp://leader.example:1883", Clock: clk, Reconnect: b}, conn, "sim-dash-test")
	report, _ := json.Marshal(leader.StatsReport{Stats: leader.Stats{Mailbox: mailbox.Stats{Capacity: 5}}})
	r.onStats("fleet/_leader/stats", report)
	r.onStatus("fleet/w-001/status", []byte("online e1"))
	if l := r.Snapshot(); !l.Latest.LeaderUp || len(l.Workers) != 1 {
		t.Fatalf("before the loss: leader up %v, %d workers", l.Latest.LeaderUp, len(l.Workers))
	}

	ctx, cancel := context.WithCancel(context.Background())
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		r.Keep(ctx)
	}()
	defer func() { cancel(); <-kept }()

	conn.drop(2)
	fleettest.Eventually(t, 10*time.Second, "the loss in the event log", func() error {
		return fleettest.Unless(hasRecord(r.Snapshot().Records, "lost the connection to the broker: EOF; reconnecting"), "records %+v", r.Snapshot().Records)
	})
	l := r.Snapshot()
	if l.Latest.LeaderUp || !strings.Contains(l.Scenario, "connection lost, reconnecting") {
		t.Errorf("while disconnected: leader up %v, header %q; want the leader down and the header saying so", l.Latest.LeaderUp, l.Scenario)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	for i := range 3 {
		if err := clk.WaitDue(wctx, b.Ceiling(i)); err != nil {
			t.Fatalf("attempt %d to dial again: %v", i+1, err)
		}
		at, _ := clk.NextDeadline()
		clk.Set(at)
		fleettest.Eventually(t, 10*time.Second, "an attempt to dial again", func() error {
			return fleettest.Unless(conn.attempts() == i+1, "%d attempts", conn.attempts())
		})
	}
	fleettest.Eventually(t, 10*time.Second, "the reconnect in the event log", func() error {
		return fleettest.Unless(hasRecord(r.Snapshot().Records, "reconnected to the broker"), "records %+v", r.Snapshot().Records)
	})
	if l := r.Snapshot(); len(l.Workers) != 0 {
		t.Errorf("after the reconnect, before the retained statuses arrive again: %d workers shown, want none (what was known before the outage is not known now)", len(l.Workers))
	}
	// Back, it asks the fleet to announce itself: a broker that replays no
	// retained status to its wildcard subscription would show it no one.
	fleettest.Eventually(t, 10*time.Second, "the dashboard asking the fleet to announce itself", func() error {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return fleettest.Unless(conn.asked == 1, "asked %d times", conn.asked)
	})
	r.onStats("fleet/_leader/stats", report)
	l = r.Snapshot()
	if !l.Latest.LeaderUp || strings.Contains(l.Scenario, "reconnecting") {
		t.Errorf("after the reconnect: leader up %v, header %q", l.Latest.LeaderUp, l.Scenario)
	}
	lost := 0
	for _, rec := range l.Records {
		if strings.Contains(rec.Text, "lost the connection") {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d records of the loss, want 1: %+v", lost, l.Records)
	}
}

// TestRemoteKeepOverBrokerRestart: a dashboard attached to a broker that
// stops and starts again on the same address comes back by itself with
// its subscriptions: the leader's stats published after the restart
// reach it.
func TestRemoteKeepOverBrokerRestart(t *testing.T) {
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := DialRemote(ctx, RemoteOptions{Broker: "tcp://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kctx, stop := context.WithCancel(ctx)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		r.Keep(kctx)
	}()
	defer func() { stop(); <-kept }()

	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 10*time.Second, "the loss seen", func() error {
		return fleettest.Unless(hasRecord(r.Snapshot().Records, "lost the connection"), "records %+v", r.Snapshot().Records)
	})
	b, err = broker.StartBroker(broker.BrokerOptions{TCPAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	fleettest.Eventually(t, 20*time.Second, "the reconnect", func() error {
		return fleettest.Unless(hasRecord(r.Snapshot().Records, "reconnected to the broker"), "records %+v", r.Snapshot().Records)
	})
	pub, err := transport.Connect(ctx, transport.ClientOptions{ID: "stats", Broker: "mem://", CleanSession: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(true)
	report, _ := json.Marshal(leader.StatsReport{Stats: leader.Stats{Mailbox: mailbox.Stats{Capacity: 9}}})
	fleettest.Eventually(t, 10*time.Second, "a report after the restart", func() error {
		if err := pub.Publish(ctx, "fleet/_leader/stats", 0, false, report); err != nil {
			return err
		}
		l := r.Snapshot()
		return fleettest.Unless(l.Latest.LeaderUp && l.Latest.LeaderCapacity == 9, "latest %+v", l.Latest)
	})
}
