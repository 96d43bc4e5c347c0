package fleettest_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// arrivals records, for each worker, when a firmware command for version
// first reached the worker's session. The worker applies it after that,
// so the arrival is a lower bound of the apply: an arrival at or after a
// wave's due time proves the apply was not early.
type arrivals struct {
	version string

	mu sync.Mutex
	at map[string]time.Time
}

func (a *arrivals) wrap(d worker.Dialer) worker.Dialer {
	return worker.DialerFunc(func(ctx context.Context, o worker.DialOptions) (worker.Session, error) {
		s, err := d.Dial(ctx, o)
		if err != nil {
			return nil, err
		}
		return watched{Session: s, a: a, worker: o.ID}, nil
	})
}

func (a *arrivals) saw(worker, topic string, payload []byte) {
	now := time.Now()
	env, err := wire.Decode(topic, payload, wire.Down, 0)
	if err != nil || env.Kind != wire.KindFirmware {
		return
	}
	var ap wire.Apply
	if json.Unmarshal(env.Body, &ap) != nil || ap.Version != a.version {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.at[worker]; !ok {
		a.at[worker] = now
	}
}

func (a *arrivals) of(worker string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.at[worker]
	return at, ok
}

// watched is a session whose subscriptions report to arrivals first.
type watched struct {
	worker.Session
	a      *arrivals
	worker string
}

func (w watched) Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error {
	return w.Session.Subscribe(ctx, filter, qos, func(topic string, payload []byte) {
		w.a.saw(w.worker, topic, payload)
		h(topic, payload)
	})
}

// TestLeaderRestartKeepsWaves: a leader restarted mid-deploy carries on
// with the deploy's waves as planned. The new leader hears every worker's
// retained "online" at once when it subscribes; none of that brings a wave
// forward, so no worker gets the version before its wave is due. (A wake
// that made any waiting command due sent every remaining wave at the
// restart.)
func TestLeaderRestartKeepsWaves(t *testing.T) {
	const n, size, interval = 200, 20, 500 * time.Millisecond
	arr := &arrivals{version: "2.0.0", at: map[string]time.Time{}}
	o := fleettest.Options{WrapDial: arr.wrap}
	f := fleettest.StartFleet(t, n, o)
	f.WaitOnline(t, n)
	ids := f.IDs()
	if _, err := f.Leader.Deploy(context.Background(), leader.DeployPlan{Version: "2.0.0", Workers: ids, WaveSize: size, WaveInterval: interval}); err != nil {
		t.Fatal(err)
	}
	waves := f.Leader.Deploys()[0].Waves // their due times, on the leader's clock
	fleettest.Eventually(t, 30*time.Second, "the first two waves applied", func() error {
		at := f.Pool.Stats().ByVersion["2.0.0"]
		return fleettest.Unless(at >= 2*size, "%d at 2.0.0", at)
	})
	restart := time.Now()
	f.RestartLeader(t, o)
	ahead := 0 // waves not yet due at the restart
	for _, w := range waves {
		if w.Start.After(restart) {
			ahead++
		}
	}
	if ahead == 0 {
		t.Fatalf("every wave was due before the restart (%v after the deploy): the test proves nothing", restart.Sub(waves[0].Start))
	}
	f.WaitVersion(t, 60*time.Second, "2.0.0", n)

	// Wall times, as the outbox compares them (its due times are stored
	// without the monotonic reading).
	earliest, early := time.Duration(1<<62), 0
	for i, id := range ids {
		due := waves[i/size].Start.Round(0)
		at, ok := arr.of(id)
		if !ok {
			t.Fatalf("%s is at 2.0.0, but no command for it reached its session", id)
		}
		d := at.Round(0).Sub(due)
		earliest = min(earliest, d)
		if d < 0 {
			early++
			if early <= 5 {
				t.Errorf("%s (wave %d) got 2.0.0 %v before its wave was due", id, i/size, -d)
			}
		}
	}
	t.Logf("restart %v after the deploy, %d of %d waves still to come; earliest arrival %v after its wave's due time; %d of %d workers early",
		restart.Sub(waves[0].Start).Round(time.Millisecond), ahead, len(waves), earliest.Round(time.Millisecond), early, n)
	if ps := f.Pool.Stats(); ps.Total.AppliedVersions["2.0.0"] != n {
		t.Errorf("2.0.0 applied %d times, want %d (once per worker)", ps.Total.AppliedVersions["2.0.0"], n)
	}
	f.WaitDrained(t)
	s := f.Leader.Stats()
	t.Logf("restarted leader: %d asks, %d timed out, %d offline skips", s.AsksSent, s.AsksTimedOut, s.Relay.Total().OfflineSkips)
}
