package fleettest_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
)

// TestDeployToThousandWorkers: the leader deploys a version to 1,000 workers
// over real MQTT sessions in waves of 100; every worker applies it exactly
// once, and the leader's, the outbox's and the workers' counts agree.
func TestDeployToThousandWorkers(t *testing.T) {
	const n = 1000
	f := fleettest.StartFleet(t, n, fleettest.Options{Seed: 1})
	f.WaitOnline(t, n)
	ctx := context.Background()
	if _, err := f.Leader.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: f.IDs(), WaveSize: 100, WaveInterval: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	f.WaitVersion(t, 60*time.Second, "2.0.0", n)
	f.WaitDrained(t)
	ps := f.Pool.Stats()
	if ps.Total.Applied != n || ps.Total.AppliedVersions["2.0.0"] != n {
		t.Errorf("workers applied %d (2.0.0: %d), want %d each exactly once", ps.Total.Applied, ps.Total.AppliedVersions["2.0.0"], n)
	}
	ls := f.Leader.Stats()
	os := f.Store.Stats()
	if os.Acked != n || os.DeadLettered != 0 || os.Enqueued != n {
		t.Errorf("outbox enqueued %d acked %d dead-lettered %d, want %d %d 0", os.Enqueued, os.Acked, os.DeadLettered, n, n)
	}
	if ls.AcksOK != os.Acked {
		t.Errorf("leader counted %d ok acks, outbox acked %d", ls.AcksOK, os.Acked)
	}
	if ps.Total.AckedOK < ls.AcksOK {
		t.Errorf("workers sent %d ok acks, leader received %d", ps.Total.AckedOK, ls.AcksOK)
	}
	d := f.Leader.Deploys()[0]
	if got := d.Delivered(); got != n || len(d.Waves) != 10 {
		t.Errorf("deploy progress: %d delivered in %d waves, want %d in 10", got, len(d.Waves), n)
	}
	for i, w := range d.Waves {
		if w.Done.IsZero() {
			t.Errorf("wave %d not done: %+v", i, w)
		}
	}
}

// TestDeployViaConfigServers: with Via, each target's download is a job on
// a config server (never the target itself), round robin; every update and
// every download arrives. (The wave-deploy scenario gives the config
// servers tiny mailboxes and slow service to make them push back.)
func TestDeployViaConfigServers(t *testing.T) {
	const n, servers = 40, 2
	f := fleettest.StartFleet(t, n, fleettest.Options{Seed: 1})
	f.WaitOnline(t, n)
	ids := f.IDs()
	via := ids[:servers]
	ctx := context.Background()
	if _, err := f.Leader.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: ids, Via: via}); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 60*time.Second, "every worker at 2.0.0 and the downloads served", func() error {
		ps, depth := f.Pool.Stats(), f.Store.Stats().Depth
		return fleettest.Unless(ps.ByVersion["2.0.0"] == n && ps.Total.Jobs == n && depth == 0,
			"%d at 2.0.0, %d downloads served, outbox depth %d", ps.ByVersion["2.0.0"], ps.Total.Jobs, depth)
	})
	// Each server serves the other targets' downloads: n in all, none for
	// itself.
	jobs := 0
	for _, id := range via {
		jobs += int(f.Pool.Get(id).Stats().Jobs)
	}
	if jobs != n {
		t.Errorf("config servers served %d downloads, want %d", jobs, n)
	}
	if st := f.Store.Stats(); st.Enqueued != 2*n || st.Acked != 2*n {
		t.Errorf("outbox enqueued %d acked %d, want %d each (an update and a download per target)", st.Enqueued, st.Acked, 2*n)
	}
}
