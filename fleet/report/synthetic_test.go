package report

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// The reports the tests render: built here because scenario runs come from
// the runner, and a test of the report must not depend on a run's timing.

// herdReport is a thundering-herd-and-deploy run of 1,000 workers over
// 300 simulated seconds, sampled every second: 40% of the fleet is cut off
// at 60 s and heals at 120 s (the herd fills the leader mailbox to its
// capacity and is answered "full"); a deploy in four waves from 150 s fills
// the outbox, and the relay's four AIMD limits saw-tooth while it drains.
func herdReport() *result.Report {
	const (
		count     = 1000
		capacity  = 500
		parts     = 4
		duration  = 300
		service   = 40.0 // leader requests per second
		waveSize  = 250
		heartbeat = 20.0 // requests per second from the whole fleet
	)
	rng := rand.New(rand.NewPCG(7, 11))
	limits := []int{4, 4, 4, 4}
	ceilings := make([]int, parts)
	for i := range ceilings {
		ceilings[i] = 8 + rng.IntN(8)
	}
	var (
		s                                          result.Sample
		depth, outbox, delivered, atTarget, online float64
		accepted, rejected, backpressure, full     uint64
		retries                                    uint64
		enqueued                                   float64
		oldestSince                                = -1.0
		minLimit, maxLimit, decreases              = 4, 4, 0
		maxDepth, maxOutbox                        int
		oldestMax                                  float64
	)
	online = count
	samples := make([]result.Sample, 0, duration+1)
	for t := 0; t <= duration; t++ {
		// Arrivals at the leader mailbox: heartbeats-paced requests, and
		// the herd of syncs (with retries after "full") once the
		// partition heals.
		arrive := heartbeat * online / count
		switch {
		case t >= 60 && t < 120:
			online = count * 0.6
		case t >= 120 && t < 126:
			online += 400.0 / 6
			arrive += 400.0/6*3 + rng.Float64()*20
		case t >= 126 && t < 150:
			arrive += 30 * float64(150-t) / 24 // retries of the rejected, backing off
		}
		if online > count {
			online = count
		}
		room := capacity - depth
		in := arrive
		if in > room {
			rejected += uint64(in - room)
			in = room
		}
		accepted += uint64(in)
		depth += in
		if int(depth) > maxDepth {
			maxDepth = int(depth)
		}
		sampled := depth // before this second's service: the herd's peak shows
		depth -= min(depth, service)

		// The deploy: four waves of 250, ten seconds apart.
		if t >= 150 && t <= 180 && (t-150)%10 == 0 {
			outbox += waveSize
			enqueued += waveSize
			if oldestSince < 0 {
				oldestSince = float64(t)
			}
		}
		if outbox > 0 {
			sum := 0
			for i := range limits {
				limits[i]++
				if limits[i] > ceilings[i] {
					limits[i] /= 2
					decreases++
					backpressure++
					retries++
					full++
					ceilings[i] = 8 + rng.IntN(8)
				}
				minLimit = min(minLimit, limits[i])
				maxLimit = max(maxLimit, limits[i])
				sum += limits[i]
			}
			d := min(outbox, float64(sum)*0.6)
			outbox -= d
			delivered += d
			atTarget = min(count, delivered)
			if outbox == 0 {
				oldestSince = -1
			}
		}
		if int(outbox) > maxOutbox {
			maxOutbox = int(outbox)
		}
		age := 0.0
		if oldestSince >= 0 {
			age = float64(t) - oldestSince
			// the oldest message of a wave leaves once the wave is half out
			if age > 12 {
				oldestSince += 10
				age = float64(t) - oldestSince
			}
		}
		oldestMax = max(oldestMax, age)

		s = result.Sample{
			T:                result.Seconds(t),
			LeaderDepth:      int(sampled),
			LeaderCapacity:   capacity,
			LeaderWaitP99:    result.Seconds(depth / service),
			LeaderAccepted:   accepted,
			LeaderRejected:   rejected,
			HeartbeatsQueued: int(online / 10),
			Limits:           append([]int(nil), limits...),
			InFlight:         min(int(outbox), limits[0]+limits[1]+limits[2]+limits[3]),
			Delivered:        uint64(delivered),
			Backpressure:     backpressure,
			Retries:          retries,
			DeadLettered:     0,
			OutboxDepth:      int(outbox),
			OutboxOldest:     result.Seconds(age),
			Online:           int(online),
			Busy:             int(online / 20),
			AtTarget:         int(atTarget),
			WorkerDepth:      int(outbox / 10),
			WorkerFull:       full,
			LeaderUp:         true,
		}
		samples = append(samples, s)
	}
	final := 0
	for _, l := range limits {
		final += l
	}

	r := &result.Report{
		Scenario:    "thundering-herd",
		File:        "scenarios/thundering-herd.yaml",
		Description: "Many workers reconnect at once after a partition and all ask the leader.",
		Params:      map[string]string{"fleet.count": "1000"},
		Started:     time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC),
		Result: result.Result{
			Lost: 0,
			Run: result.RunInfo{
				Seed: 42, Speed: 10, SimSeconds: duration + 12, WallSeconds: 31.4,
				LagMax: 0.31, LagP99: 0.08, KeptUp: true, Events: 3,
			},
			Fleet: result.FleetResult{
				Count: count, Groups: map[string]int{"config": 4, "sensors": 996},
				Online: count, LeaderOnline: count,
			},
			Workers: result.WorkersResult{
				AtVersion: map[string]int{"2.1.0": count},
				Applied:   count, Duplicates: 3, AckedOK: uint64(delivered), AckedFull: full,
				MaxAttempt: 3, Connects: 1400, ConnectAttempts: 1688, Reconnects: 400,
				ConnectionsLost: 400, SyncSent: 1400, SyncOK: 1400, SyncFull: rejected,
				Mailbox: result.MailboxResult{
					Capacity: 2 * count, Policy: "reject", Offered: uint64(delivered) + full,
					Taken: uint64(delivered), Rejected: full, MaxDepth: 2,
					Wait: result.Quantiles{P50: 0.004, P90: 0.02, P99: 0.09, Max: 0.21, Mean: 0.011},
				},
			},
			Leader: result.LeaderResult{
				Mailbox: result.MailboxResult{
					Capacity: capacity, Policy: "reject", Offered: accepted + rejected,
					Taken: accepted, Rejected: rejected, MaxDepth: maxDepth,
					Wait: result.Quantiles{P50: 0.012, P90: 3.1, P99: 12.4, Max: 12.5, Mean: 1.9},
				},
				RequestsReceived: accepted + rejected, RequestsServed: accepted,
				TelemetryReceived: 6000, TelemetryServed: 6000, AnsweredFull: rejected,
				AskRTT:   result.Quantiles{P50: 0.002, P90: 0.011, P99: 0.03, Max: 0.08, Mean: 0.004},
				AsksSent: uint64(delivered) + full,
			},
			Heartbeat: result.HeartbeatResult{
				Sent: 60000, Stored: 2400, Received: 60000, Processed: 10000,
				Coalesced: 50000, CoalescedRatio: 50000.0 / 60000, MaxQueued: 1000,
				Age:    result.Quantiles{P50: 15, P90: 27, P99: 29.7, Max: 30, Mean: 15.1},
				Rounds: 10,
			},
			Relay: result.RelayResult{
				Partitions: parts,
				Limit:      result.LimitRange{Initial: 4, Min: minLimit, Max: maxLimit, Final: final, Decreases: decreases},
				Delivered:  uint64(delivered), Backpressure: backpressure, Retries: backpressure,
			},
			Outbox: result.OutboxResult{
				Enqueued: uint64(enqueued), Acked: uint64(delivered), MaxDepth: maxOutbox,
				OldestMax: result.Seconds(oldestMax),
			},
			Commands:  result.CommandResult{Sent: uint64(enqueued)},
			Telemetry: result.TelemetryResult{Generated: 6000, Direct: 5400, Stored: 600, Forwarded: 600},
			Jobs: result.JobsResult{Added: 100, Queued: 100, Done: 100, DoneBy: map[string]int{"default": 100},
				Makespan: 12, HeldMax: map[string]int{"default": 1}, Polls: 400, Drained: 300, Leases: 100},
			Deploys: []result.DeployResult{
				{Version: "2.1.0", Targets: count, Delivered: count, Duration: 58.5},
			},
			Events: map[string]result.EventResult{"away": {At: 60, Workers: 400}},
			Windows: map[string]result.WindowResult{"herd": {
				From: 120, To: 150,
				Leader: result.WindowLeader{
					Mailbox: result.MailboxResult{
						Capacity: capacity, Policy: "reject", Offered: 2400, Taken: 1200, Rejected: 1200, MaxDepth: capacity,
						Wait: result.Quantiles{P50: 6.1, P99: 12.4, Max: 12.5, Mean: 6.3},
					},
					RequestsServed: 1200, AnsweredFull: 1200,
				},
				Relay:   result.WindowRelay{Delivered: 40, OfflineSkips: 12},
				Workers: result.WindowWorkers{Connects: 400, SyncSent: 1600, SyncOK: 400, SyncFull: 1200},
			}},
		},
		Verdicts: []result.Verdict{
			{Name: "nothing lost", Check: "lost == 0", Status: result.Pass},
			{Name: "leader depth bounded", Check: "leader.mailbox.max_depth <= leader.mailbox.capacity", Status: result.Pass},
			{Name: "every worker updated once", Check: `workers.at_version["2.1.0"] == fleet.count && workers.applied_twice == 0`, Status: result.Pass},
			{Name: "relay never stalls", Check: "relay.limit.min >= 5", Status: result.Fail, Detail: fmt.Sprintf("relay.limit.min = %d", minLimit)},
			{Name: "deploy is quick", Check: "deploys[0].duration < 120", Status: result.Pass},
		},
		Records: []result.Record{
			{T: 60, Kind: "event", Text: "partition 40% of workers (0-399)", LagSec: 0.02},
			{T: 120, Kind: "event", Text: "heal: partitioned workers reconnect at once", LagSec: 0.31},
			{T: 150, Kind: "event", Text: "deploy 2.1.0 in waves of 250 every 10s"},
			{T: 211, Kind: "warning", Text: "speed held: lag 0.31s <script>alert('x')</script> & more"},
		},
		Samples: samples,
	}
	return r
}

// behindReport is herdReport from a machine that could not keep up: its
// timing expectation is not judged.
func behindReport() *result.Report {
	r := herdReport()
	r.Scenario = "wave-deploy"
	r.File = "scenarios/wave-deploy.yaml"
	r.Description = "A firmware version to the fleet in waves | through config servers."
	r.Result.Run.KeptUp = false
	r.Result.Run.LagMax = 7.5
	r.Result.Run.LagP99 = 4.1
	r.Verdicts = []result.Verdict{
		{Name: "nothing lost", Check: "lost == 0", Status: result.Pass},
		{Name: "deploy is quick", Check: "deploys[0].duration < 120", Status: result.NotJudged,
			Detail: "machine could not keep up at speed 10 (lag max 7.5s)"},
	}
	return r
}

// brokenReport is a run that could not complete.
func brokenReport() *result.Report {
	return &result.Report{
		Scenario: "leader-crash",
		File:     "scenarios/leader-crash.yaml",
		Started:  time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC),
		Result:   result.Result{Run: result.RunInfo{Seed: 3, Speed: 5, WallSeconds: 2.5}},
		Err:      "restart leader: open /tmp/x/outbox.db: timeout",
	}
}

// stoppedReport is a run stopped from the dashboard before its end: partial,
// not judged.
func stoppedReport() *result.Report {
	return &result.Report{
		Scenario: "slow-consumers",
		File:     "scenarios/slow-consumers.yaml",
		Started:  time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC),
		Result: result.Result{
			Run:   result.RunInfo{Seed: 5, Speed: 10, SimSeconds: 12.3, WallSeconds: 1.3, KeptUp: true},
			Fleet: result.FleetResult{Count: 100, Online: 100, LeaderOnline: 100},
		},
		Stopped: "q on the dashboard at 12.3s of 60s (simulated)",
	}
}

// sweepReports is a mailbox-policies sweep: the same overload (2,000
// offered per second to a leader serving 1,000) under four policies, in the
// shape of the sweep's table.
func sweepReports() []*result.Report {
	type v struct {
		policy                    string
		capacity                  int
		offered, taken, drop, rej uint64
		maxDepth                  int
		p50, p99                  result.Seconds
		pass                      bool
	}
	vs := []v{
		{"unbounded", 0, 8000, 8000, 0, 0, 4338, 2.362, 4.627, false},
		{"block", 200, 3893, 3893, 0, 0, 200, 0.217, 0.220, true},
		{"reject", 200, 8001, 3891, 0, 4110, 200, 0.215, 0.218, true},
		{"drop-oldest", 200, 8000, 3872, 4128, 0, 200, 0.099, 0.193, true},
	}
	var reps []*result.Report
	for i, x := range vs {
		r := &result.Report{
			Scenario:    "mailbox-policies",
			File:        "scenarios/mailbox-policies.yaml",
			Description: "A sweep over mailbox policies under 2x overload.",
			Variant:     "leader.mailbox.policy=" + x.policy,
			Params:      map[string]string{"leader.mailbox.policy": x.policy},
			Started:     time.Date(2026, 3, 14, 10, i, 0, 0, time.UTC),
			Result: result.Result{
				Run:   result.RunInfo{Seed: 1, Speed: 1, SimSeconds: 9, WallSeconds: 9.1, KeptUp: true, Events: 1},
				Fleet: result.FleetResult{Count: 100, Online: 100, LeaderOnline: 100},
				Leader: result.LeaderResult{Mailbox: result.MailboxResult{
					Capacity: x.capacity, Policy: x.policy, Offered: x.offered, Taken: x.taken,
					Dropped: x.drop, Rejected: x.rej, MaxDepth: x.maxDepth,
					Wait: result.Quantiles{P50: x.p50, P99: x.p99, Max: x.p99 + 0.01, Mean: x.p50},
				}},
			},
			Records: []result.Record{{T: 0, Kind: "event", Text: "overload: 2000/s for 4s"}},
		}
		st := result.Fail
		detail := "leader.mailbox.wait.p99 = 4.627"
		if x.pass {
			st, detail = result.Pass, ""
		}
		r.Verdicts = []result.Verdict{{Name: "wait bounded", Check: "leader.mailbox.wait.p99 < 1", Status: st, Detail: detail}}
		for t := 0; t <= 9; t++ {
			d := min(x.maxDepth, t*x.maxDepth/4)
			if t > 4 {
				d = max(0, x.maxDepth-(t-4)*x.maxDepth/4)
			}
			r.Samples = append(r.Samples, result.Sample{
				T: result.Seconds(t), LeaderDepth: d, LeaderCapacity: x.capacity,
				LeaderAccepted: x.taken * uint64(min(t, 8)) / 8,
				LeaderRejected: x.rej * uint64(min(t, 4)) / 4,
				LeaderDropped:  x.drop * uint64(min(t, 4)) / 4,
				Limits:         []int{4}, Online: 100, LeaderUp: true,
			})
		}
		reps = append(reps, r)
	}
	return reps
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}
