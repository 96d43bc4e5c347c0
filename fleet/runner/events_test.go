package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

func rtRange(from, to int) scenario.Selector {
	return scenario.Selector{Range: true, From: from, To: to, Text: "range"}
}

// sampleAt returns the first sample at or after t (simulated seconds).
func rtSampleAt(t *testing.T, rep *result.Report, at float64) result.Sample {
	t.Helper()
	for _, s := range rep.Samples {
		if float64(s.T) >= at {
			return s
		}
	}
	t.Fatalf("no sample at %gs", at)
	return result.Sample{}
}

// TestRunWorkerEvents: partition and heal, disconnect and reconnect, and
// crash, each on its own ten workers, do what they say: the workers go
// away (as the samples and their counters show) and all come back.
func TestRunWorkerEvents(t *testing.T) {
	sc := rtFleet(40, 30)
	sc.Speed = 5 // a partition is noticed at the keepalive, in wall time
	sc.Fleet.Worker.KeepAlive = rtPtr(rtSec(1))
	sc.Timeline = []scenario.Event{
		{At: rtSec(1), Partition: &scenario.Targets{Workers: rtRange(0, 9)}},
		{At: rtSec(1), Disconnect: &scenario.Targets{Workers: rtRange(10, 19)}},
		{At: rtSec(2), Crash: &scenario.Targets{Workers: rtRange(20, 29)}},
		{At: rtSec(6), Reconnect: &scenario.Targets{Workers: rtRange(10, 19)}},
		{At: rtSec(20), Heal: &scenario.Targets{Workers: rtRange(0, 9)}},
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	if rtKeptUp(t, rep) {
		if s := rtSampleAt(t, rep, 5); s.Online > 30 {
			t.Errorf("at 5s %d workers online, want at most 30 (10 disconnected at 1s)", s.Online)
		}
		if s := rtSampleAt(t, rep, 18); s.Online != 30 {
			t.Errorf("at 18s %d workers online, want 30 (the partitioned 10 away, the others back)", s.Online)
		}
	}
	w := r.Workers
	if w.Crashes != 10 || w.ConnectionsLost < 10 || w.Reconnects < 30 {
		t.Errorf("crashes %d, connections lost %d, reconnects %d; want 10, >= 10, >= 30", w.Crashes, w.ConnectionsLost, w.Reconnects)
	}
	if r.Fleet.Online != 40 || rtKeptUp(t, rep) && r.Fleet.LeaderOnline != 40 {
		t.Errorf("at the end: %d online (leader sees %d), want 40", r.Fleet.Online, r.Fleet.LeaderOnline)
	}
	if r.Run.Events != 5 {
		t.Errorf("%d events fired, want 5", r.Run.Events)
	}
}

// TestRunLeaderCrashMidDeploy: the leader is killed in the middle of a
// deploy in waves — deliveries in flight (to workers silently cut off, so
// their asks wait for the ask timeout), waves still due in the outbox —
// and restarted from its bbolt file; the deploy completes, nothing is
// lost, no worker applies the version twice, and the leader's counters are
// summed over both instances.
func TestRunLeaderCrashMidDeploy(t *testing.T) {
	sc := rtFleet(100, 12)
	sc.Fleet.Worker.Service = rtPtr(dist.Const(50 * time.Millisecond))
	sc.Fleet.Worker.KeepAlive = rtPtr(rtSec(1))
	sc.Timeline = []scenario.Event{
		{At: rtSec(0.5), Partition: &scenario.Targets{Workers: rtRange(0, 9)}},
		{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0", WaveSize: 20, WaveInterval: rtSec(1)}},
		{At: rtSec(2.5), LeaderCrash: &scenario.LeaderCrash{RestartAfter: rtSec(2)}},
		{At: rtSec(6), Heal: &scenario.Targets{Workers: rtRange(0, 9)}},
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	if r.Run.LeaderRestarts != 1 || r.Outbox.Enqueued != 100 {
		t.Errorf("restarts %d, enqueued %d; want 1, 100", r.Run.LeaderRestarts, r.Outbox.Enqueued)
	}
	if rtKeptUp(t, rep) {
		if r.Workers.AtVersion["2.0.0"] != 100 || r.Deploys[0].Delivered != 100 || r.Outbox.Acked != 100 {
			t.Errorf("at 2.0.0 %d, delivered %d, acked %d over both leaders; want 100 each", r.Workers.AtVersion["2.0.0"], r.Deploys[0].Delivered, r.Outbox.Acked)
		}
		if s := rtSampleAt(t, rep, 2.3); s.InFlight < 10 {
			t.Errorf("%d deliveries in flight just before the crash, want the 10 to the cut-off workers", s.InFlight)
		}
		if s := rtSampleAt(t, rep, 3.5); s.LeaderUp {
			t.Error("the leader is up at 3.5s, between its crash at 2.5s and its restart at 4.5s")
		}
		if s := rtSampleAt(t, rep, 3.5); s.OutboxDepth == 0 {
			t.Error("while the leader is down the samples show an empty outbox; the file holds the later waves")
		}
	}
	if rtKeptUp(t, rep) && r.Deploys[0].Duration < 4 {
		t.Errorf("deploy took %gs, want at least its 4 wave intervals", r.Deploys[0].Duration)
	}
}

// TestRunWaitForWave: each wave starts only once the previous one is
// delivered: a worker of the first wave is away until 6s, so the second
// wave cannot start before it is back.
func TestRunWaitForWave(t *testing.T) {
	sc := rtFleet(60, 15)
	sc.Timeline = []scenario.Event{
		{At: rtSec(0.5), Disconnect: &scenario.Targets{Workers: scenario.Selector{IDs: []string{"w-00003"}}}},
		{At: rtSec(1), Deploy: &scenario.Deploy{Version: "3.0.0", WaveSize: 20, WaveInterval: rtSec(1), WaitForWave: true}},
		{At: rtSec(6), Reconnect: &scenario.Targets{Workers: scenario.Selector{IDs: []string{"w-00003"}}}},
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	var waves []float64
	for _, rec := range rep.Records {
		// A wave's start, not its delivery ("… delivered in …").
		if strings.Contains(rec.Text, "deploy 3.0.0: wave") && !strings.Contains(rec.Text, "delivered") {
			waves = append(waves, float64(rec.T))
		}
	}
	if len(waves) != 2 || waves[0] < 7 || waves[1]-waves[0] < 1 {
		t.Errorf("waves 2 and 3 started at %v, want two, the first after 7s (the away worker back at 6s, plus 1s), then 1s or more apart", waves)
	}
	if s := rtSampleAt(t, rep, 5); rtKeptUp(t, rep) && s.AtTarget != 19 {
		t.Errorf("at 5s %d workers at 3.0.0, want 19: the first wave but the away worker, none of the second", s.AtTarget)
	}
	r := rep.Result
	if r.Workers.AtVersion["3.0.0"] != 60 || r.Outbox.Enqueued != 60 || r.Deploys[0].Delivered != 60 {
		t.Errorf("at 3.0.0 %d, enqueued %d, delivered %d; want 60 each", r.Workers.AtVersion["3.0.0"], r.Outbox.Enqueued, r.Deploys[0].Delivered)
	}
}

// TestRunPoison: poison commands are refused by their workers and reach
// the dead letters at their first attempt, without holding up a deploy to
// the same workers.
func TestRunPoison(t *testing.T) {
	sc := rtFleet(20, 8)
	sc.Timeline = []scenario.Event{
		{At: rtSec(1), Poison: &scenario.Poison{Workers: rtRange(0, 9), Count: 2}},
		{At: rtSec(1), Deploy: &scenario.Deploy{Version: "2.0.0"}},
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	if r.Outbox.DeadLettered != 20 || r.Outbox.DeadLetters != 20 || r.Relay.DeadLettered != 20 || r.Workers.Refused != 20 {
		t.Errorf("dead-lettered %d (relay %d), dead letters %d, refused by workers %d; want 20 each",
			r.Outbox.DeadLettered, r.Relay.DeadLettered, r.Outbox.DeadLetters, r.Workers.Refused)
	}
	if r.Workers.MaxAttempt != 1 {
		t.Errorf("max attempt %d: poison was retried", r.Workers.MaxAttempt)
	}
	if r.Workers.AtVersion["2.0.0"] != 20 || r.Deploys[0].Rejected != 0 {
		t.Errorf("deploy: %d at 2.0.0, %d rejected; want 20 and 0", r.Workers.AtVersion["2.0.0"], r.Deploys[0].Rejected)
	}
}

// TestRunHeartbeatStorm: the storm's workers heartbeat ten times as often
// for its length, then go back to their interval.
func TestRunHeartbeatStorm(t *testing.T) {
	base := rtFleet(20, 10)
	sc := rtFleet(20, 10)
	sc.Timeline = []scenario.Event{{At: rtSec(2), HeartbeatStorm: &scenario.HeartbeatStorm{Workers: rtRange(0, 9), Interval: rtSec(0.2), For: rtSec(4)}}}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	// 10 workers, 4s at 0.2s instead of 2s: 10 × (20 - 2) more heartbeats.
	quietRep := rtRun(t, base)
	extra := int(rep.Result.Heartbeat.Sent) - int(quietRep.Result.Heartbeat.Sent)
	// A run that falls behind misses ticks: then only the bound above holds.
	if extra > 210 || extra < 150 && rtKeptUp(t, rep, quietRep) {
		t.Errorf("the storm added %d heartbeats (%d with, %d without), want about 180", extra, rep.Result.Heartbeat.Sent, quietRep.Result.Heartbeat.Sent)
	}
	if !slices.ContainsFunc(rep.Records, func(r result.Record) bool { return strings.HasPrefix(r.Text, "heartbeat storm over") && r.T >= 6 }) {
		t.Error("no record of the storm ending at 6s")
	}
}

// TestRunSetCapacityAndLeader: set_capacity changes the workers'
// mailboxes, set_leader the leader's: a leader cut to 5 slots and 100 ms a
// request answers "full" to a reconnecting fleet's sync requests.
func TestRunSetCapacityAndLeader(t *testing.T) {
	sc := rtFleet(40, 10)
	sc.Timeline = []scenario.Event{
		{At: rtSec(1), SetCapacity: &scenario.SetCapacity{Workers: rtRange(0, 9), Capacity: 4}},
		{At: rtSec(1), SetLeader: &scenario.SetLeader{Capacity: rtPtr(5), Service: rtPtr(dist.Const(100 * time.Millisecond))}},
		{At: rtSec(2), Crash: &scenario.Targets{Workers: scenario.Selector{All: true}}},
	}
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	r := rep.Result
	if r.Workers.Mailbox.Capacity != 10*4+30*16 {
		t.Errorf("worker mailboxes hold %d in all, want %d", r.Workers.Mailbox.Capacity, 10*4+30*16)
	}
	if r.Leader.Mailbox.Capacity != 5 {
		t.Errorf("leader mailbox capacity %d, want 5", r.Leader.Mailbox.Capacity)
	}
	for _, s := range rep.Samples {
		if s.T >= 1.5 && s.LeaderDepth > 5 {
			t.Errorf("at %.1fs the leader's mailbox holds %d, capacity 5", s.T, s.LeaderDepth)
		}
	}
	if r.Leader.AnsweredFull == 0 {
		t.Error("the leader answered no sync request full: want the herd refused")
	}
	if !rtKeptUp(t, rep) {
		return // answers late past the workers' ask timeout are not "full" to them
	}
	if r.Workers.SyncFull == 0 {
		t.Errorf("no worker was told full (leader answered full %d)", r.Leader.AnsweredFull)
	}
	if before, after := rtSampleAt(t, rep, 0.5), rtSampleAt(t, rep, 1.5); before.LeaderCapacity != 1000 || after.LeaderCapacity != 5 {
		t.Errorf("leader capacity %d before, %d after set_leader; want 1000, 5", before.LeaderCapacity, after.LeaderCapacity)
	}
}

// TestRunSpeedAndOffline: the speed event changes the clock; workers with
// an offline profile go away and come back at random, keep their
// telemetry meanwhile and deliver it after.
func TestRunSpeedAndOffline(t *testing.T) {
	sc := rtFleet(30, 20)
	sc.Fleet.Worker.Telemetry = rtPtr(rtSec(1))
	sc.Fleet.Worker.Offline = &scenario.OfflineProfile{Every: rtSec(5), For: dist.Const(3 * time.Second), Mode: "disconnect"}
	sc.Timeline = []scenario.Event{{At: rtSec(10), Speed: rtPtr(40.0)}}
	r, err := NewRunner(sc, RunOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rtDump(t, rep)
	rtNoLoss(t, rep)
	res := rep.Result
	if got := r.Snapshot().Speed; got != 40 {
		t.Errorf("speed after the run %g, want 40", got)
	}
	if res.Workers.Reconnects < 30 || res.Telemetry.Stored == 0 || res.Telemetry.Forwarded == 0 && rtKeptUp(t, rep) {
		t.Errorf("reconnects %d, telemetry stored %d forwarded %d: want workers away and back, telemetry kept and sent after",
			res.Workers.Reconnects, res.Telemetry.Stored, res.Telemetry.Forwarded)
	}
	fewest := 30
	for _, s := range rep.Samples {
		fewest = min(fewest, s.Online)
	}
	if fewest == 30 {
		t.Error("no sample shows a worker offline")
	}
}
