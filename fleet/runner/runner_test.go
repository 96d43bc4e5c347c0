package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestRunDeployInWaves: a deploy in waves reaches every worker exactly
// once, the balances hold, and the time series covers the run.
func TestRunDeployInWaves(t *testing.T) {
	sc := rtFleet(50, 10)
	sc.Timeline = []scenario.Event{{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 10, WaveInterval: rtSec(1)}}}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	if r.Workers.AtVersion["2.0.0"] != 50 || r.Workers.Applied != 50 {
		t.Errorf("at 2.0.0: %d, applied %d; want 50 each", r.Workers.AtVersion["2.0.0"], r.Workers.Applied)
	}
	if len(r.Deploys) != 1 || r.Deploys[0].Delivered != 50 || r.Deploys[0].Duration < 4 {
		t.Errorf("deploys %+v: want one, 50 delivered, over at least 4s (5 waves 1s apart)", r.Deploys)
	}
	if r.Outbox.Enqueued != 50 || r.Outbox.Acked != 50 || r.Commands.Sent != 50 || r.Outbox.Depth != 0 {
		t.Errorf("outbox %+v", r.Outbox)
	}
	if r.Run.Events != 1 || r.Run.SimSeconds < 10 {
		t.Errorf("run %+v", r.Run)
	}
	// One a tick, on the virtual clock.
	if want := int(10*time.Second/sc.SampleEvery.D()) + 1; len(rep.Samples) < want {
		t.Errorf("%d samples, want one per %v over 10s (%d)", len(rep.Samples), sc.SampleEvery, want)
	}
	for i := 1; i < len(rep.Samples); i++ {
		if rep.Samples[i].T <= rep.Samples[i-1].T {
			t.Fatalf("sample %d at %v after one at %v", i, rep.Samples[i].T, rep.Samples[i-1].T)
		}
	}
	if r.Fleet.Online != 50 || r.Fleet.LeaderOnline != 50 {
		t.Errorf("fleet %+v", r.Fleet)
	}
	if r.Heartbeat.Sent == 0 || r.Heartbeat.Processed == 0 {
		t.Errorf("heartbeats %+v", r.Heartbeat)
	}
}

// TestRunUnfinishedDeploy: a deploy whose waves outlast the run and its
// drain did not finish, and says so: its duration is result.Never (+Inf,
// null in the JSON report), not 0, which an expectation such as
// "deploys[0].duration <= 10" would have passed.
func TestRunUnfinishedDeploy(t *testing.T) {
	sc := rtFleet(40, 3)
	sc.Drain = rtSec(1)
	sc.Timeline = []scenario.Event{{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 10, WaveInterval: rtSec(10)}}}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	d := rep.Result.Deploys
	if len(d) != 1 || d[0].Delivered == d[0].Targets || d[0].Duration != result.Never {
		t.Fatalf("deploys %+v: want one, not delivered to all 40, duration Never", d)
	}
	b, err := json.Marshal(d[0])
	if err != nil || !strings.Contains(string(b), `"duration":null`) {
		t.Errorf("JSON %s (%v): want duration null", b, err)
	}
	var back result.DeployResult
	if err := json.Unmarshal(b, &back); err != nil || back.Duration != result.Never {
		t.Errorf("read back: %+v (%v), want duration Never", back, err)
	}
}
