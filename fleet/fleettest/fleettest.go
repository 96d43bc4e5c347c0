// Package fleettest starts a whole fleet in one process for tests: the
// embedded broker, a leader on a bbolt outbox in the test's temp dir, and a
// pool of workers over real MQTT sessions (the broker's in-memory
// listener). The leader reads and publishes on the broker inline, as sim
// and leader run do (Options.PahoLeader: over a paho session instead).
// Everything stops when the test ends.
//
//	f := fleettest.StartFleet(t, 1000, fleettest.Options{})
//	f.WaitOnline(t, 1000)
//	f.Leader.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: f.IDs(), WaveSize: 100})
package fleettest

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// Options shapes the fleet. Zero fields take the packages' defaults.
type Options struct {
	// Worker is the template for every worker; ID, Index and Seed are set
	// per worker.
	Worker worker.Config
	// Leader is the leader's config; Link, Store and Clock are set here.
	Leader leader.Config
	// Outbox configures the leader's bbolt store (durability none by
	// default: tests do not need fsync).
	Outbox outbox.Options
	// Clock for everything (default: wall).
	Clock clock.Clock
	// Seed for every worker and the leader.
	Seed uint64
	// Secret, if set, turns on the broker's auth and ACLs.
	Secret []byte
	// MemoryOutbox uses the in-memory store instead of bbolt (benchmarks
	// that separate the store's cost from the rest).
	MemoryOutbox bool
	// OutboxPath reuses a bbolt file (a restart test); default: a new one in
	// t.TempDir().
	OutboxPath string
	// TCPAddr, if set, opens the broker's TCP listener too, for clients of
	// another process's kind (127.0.0.1:0: a free port; Broker.Addr says
	// which). The fleet itself stays on the in-memory listener.
	TCPAddr string
	// WrapDial, if set, wraps the dialer the workers connect with: a test
	// that watches (or disturbs) the workers' sessions.
	WrapDial func(worker.Dialer) worker.Dialer
	// GatewaySize, if positive, puts the workers behind gateways of that
	// many, in order (gw-00000 carries w-0000 to w-<size-1>, …): one MQTT
	// session per gateway instead of one per worker.
	GatewaySize int
	// PahoLeader gives the leader a paho session over the in-memory
	// listener (transport.Connect), as a leader on an external broker
	// has, instead of the inline link on the broker it embeds
	// (transport.NewInline), which sim and leader run use.
	PahoLeader bool
}

// Fleet is a running fleet.
type Fleet struct {
	Broker *broker.Broker
	Leader *leader.Leader
	Pool   *worker.Pool
	Store  outbox.Store
	Path   string // the bbolt file

	cancelLeader context.CancelFunc
	leaderDone   chan error
	cancelPool   context.CancelFunc
	poolDone     chan struct{}
	leaderLink   leaderLink
	once         sync.Once
}

// leaderLink is the leader's link as the fleet holds it: a
// *transport.Session or a *transport.Inline.
type leaderLink interface {
	leader.Link
	Close(clean bool)
}

const leaderPassword = "fleettest-leader-password"

// StartFleet starts a broker, a leader and n workers named w-0000, w-0001,
// … and stops them all (in that reverse order) when t ends.
func StartFleet(t testing.TB, n int, o Options) *Fleet {
	t.Helper()
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	bo := broker.BrokerOptions{TCPAddr: o.TCPAddr}
	if o.Secret != nil {
		bo.Auth = &broker.Auth{LeaderPassword: leaderPassword, Secret: o.Secret}
	}
	b, err := broker.StartBroker(bo)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fleet{Broker: b}
	t.Cleanup(func() {
		f.Stop(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("broker close: %v", err)
		}
	})
	f.Path = o.OutboxPath
	if f.Path == "" {
		f.Path = filepath.Join(t.TempDir(), "outbox.db")
	}
	f.startLeader(t, o)
	cfgs := make([]worker.Config, n)
	for i := range cfgs {
		c := o.Worker
		c.ID, c.Index, c.Seed, c.Clock = fmt.Sprintf("w-%04d", i), uint64(i), o.Seed, o.Clock
		if o.GatewaySize > 0 {
			c.Gateway = fmt.Sprintf("gw-%05d", i/o.GatewaySize)
		}
		cfgs[i] = c
	}
	mqtt := worker.MQTTDialer{Broker: "mem://", Mem: b, Secret: o.Secret}
	var dial worker.Dialer = mqtt
	if o.WrapDial != nil {
		dial = o.WrapDial(dial)
	}
	if f.Pool, err = worker.NewPool(cfgs, dial, worker.PoolOptions{Clock: o.Clock, Gateways: mqtt}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancelPool, f.poolDone = cancel, make(chan struct{})
	go func() {
		defer close(f.poolDone)
		_ = f.Pool.Run(ctx)
	}()
	return f
}

func (f *Fleet) startLeader(t testing.TB, o Options) {
	t.Helper()
	oo := o.Outbox
	oo.Clock = o.Clock
	if oo.Durability == outbox.Sync {
		oo.Durability = outbox.None
	}
	var st outbox.Store
	var err error
	if o.MemoryOutbox {
		st, err = outbox.NewMemory(oo)
	} else {
		st, err = outbox.OpenBolt(f.Path, oo)
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Store = st
	link, err := f.dialLeader(o)
	if err != nil {
		t.Fatal(err)
	}
	lc := o.Leader
	lc.Link, lc.Store, lc.Clock, lc.Seed = link, st, o.Clock, o.Seed
	l, err := leader.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	f.Leader, f.leaderLink = l, link
	lctx, lcancel := context.WithCancel(context.Background())
	f.cancelLeader, f.leaderDone = lcancel, make(chan error, 1)
	go func() { f.leaderDone <- l.Run(lctx) }()
}

// dialLeader opens the leader's link: inline on the fleet's broker, or a
// paho session over its in-memory listener (Options.PahoLeader). Either
// carries the leader's will.
func (f *Fleet) dialLeader(o Options) (leaderLink, error) {
	will := transport.LeaderWill(o.Leader.Topics)
	if !o.PahoLeader {
		return transport.NewInline(f.Broker, transport.InlineOptions{Will: will})
	}
	co := transport.ClientOptions{ID: "leader", Broker: "mem://", CleanSession: true, MemBuffer: 8 << 20, WriteQueue: 1 << 16, Will: will}
	if o.Secret != nil {
		co.Username, co.Password = wire.LeaderUsername, leaderPassword
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return transport.Connect(ctx, co, f.Broker)
}

// RestartLeader stops the leader as a crash would (no goodbye, outbox
// closed under it) and starts a new one on the same bbolt file.
func (f *Fleet) RestartLeader(t testing.TB, o Options) {
	t.Helper()
	f.stopLeader(t, false)
	o.OutboxPath = f.Path
	f.startLeader(t, o)
}

// CutLeader kills the leader's link as a kill -9 or a lost network does:
// the last will says offline for it (the broker publishes a session's
// when its connection drops; the inline link publishes its own). The
// leader runs on without a link until the fleet stops.
func (f *Fleet) CutLeader() { f.leaderLink.Close(false) }

func (f *Fleet) stopLeader(t testing.TB, clean bool) {
	f.cancelLeader()
	if err := <-f.leaderDone; err != nil {
		t.Errorf("leader: %v", err)
	}
	f.leaderLink.Close(clean)
	if err := f.Store.Close(); err != nil {
		t.Errorf("outbox close: %v", err)
	}
}

// Stop stops the workers, then the leader. The broker stops at cleanup.
func (f *Fleet) Stop(t testing.TB) {
	f.once.Do(func() {
		f.cancelPool()
		<-f.poolDone
		f.stopLeader(t, true)
	})
}

// IDs returns the workers' ids in order.
func (f *Fleet) IDs() []string {
	ws := f.Pool.Workers()
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID()
	}
	return ids
}

// WaitVersion waits until n workers run version v.
func (f *Fleet) WaitVersion(t testing.TB, timeout time.Duration, v string, n int) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("%d workers at %s", n, v), func() error {
		ps := f.Pool.Stats()
		return Unless(ps.ByVersion[v] == n, "%d at %s (by version %v), outbox depth %d", ps.ByVersion[v], v, ps.ByVersion, f.Store.Stats().Depth)
	})
}

// WaitDrained waits until the leader's outbox holds nothing.
func (f *Fleet) WaitDrained(t testing.TB) {
	t.Helper()
	Eventually(t, 10*time.Second, "the outbox drained", func() error {
		s := f.Store.Stats()
		return Unless(s.Depth == 0, "outbox depth %d, acked %d, leased %d", s.Depth, s.Acked, s.Leased)
	})
}

// WaitOnline waits until the leader sees n workers online.
func (f *Fleet) WaitOnline(t testing.TB, n int) {
	t.Helper()
	Eventually(t, 60*time.Second, fmt.Sprintf("%d workers online", n), func() error {
		v := f.Leader.Fleet()
		return Unless(v.Online >= n, "the leader sees %d online, %d offline", v.Online, v.Offline)
	})
}
