package dash

import (
	"sync"

	flowctl "github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// fixedSource returns the same snapshot every time.
type fixedSource struct{ live result.Live }

func (s fixedSource) Snapshot() result.Live { return s.live }

// runSource is a fixedSource that knows its relay's limiter, as a
// runner does.
type runSource struct {
	fixedSource
	lim flowctl.LimiterOptions
}

func (s runSource) Limiter() flowctl.LimiterOptions { return s.lim }

// sourceOf is the source a snapshot comes from: a run's knows its
// limiter (AIMD, the default); a remote leader's does not.
func sourceOf(l result.Live) Source {
	if l.Phase == PhaseRemote {
		return fixedSource{l}
	}
	return runSource{fixedSource{l}, flowctl.DefaultLimiterOptions}
}

// fakeControls records the calls, in order.
type fakeControls struct {
	mu    sync.Mutex
	calls []string
}

func (c *fakeControls) rec(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *fakeControls) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *fakeControls) Pause()                { c.rec("pause") }
func (c *fakeControls) Resume()               { c.rec("resume") }
func (c *fakeControls) SetSpeed(s float64)    { c.rec("speed " + fmtSpeed(s)) }
func (c *fakeControls) Partition(pct float64) { c.rec("partition " + fmtNum(pct)) }
func (c *fakeControls) Heal()                 { c.rec("heal") }
func (c *fakeControls) KillLeader()           { c.rec("kill") }
func (c *fakeControls) Deploy(v string)       { c.rec("deploy " + v) }

// sawtooth is an AIMD limit: +1 a sample up to the partition's ceiling,
// then halved.
func sawtooth(step, part int) int {
	ceil := []int{20, 14, 26, 17}[part]
	limit := 4 + 3*part
	for range step {
		limit++
		if limit > ceil {
			limit /= 2
		}
	}
	return limit
}

// midRun is a run 40 simulated seconds into a 60-second wave deploy:
// 1000 workers, some updated, a partition, four relay partitions.
func midRun() result.Live {
	const n = 120 // samples, every 1/3 s
	l := result.Live{
		Scenario: "wave-deploy",
		Seed:     42,
		Speed:    4, Rate: 3.62,
		Now:      40,
		Duration: 60,
		Phase:    "running",
		Lag:      0.12,
		Next:     "deploy 1.0.2 wave 2/3",
		NextAt:   45,
		Target:   "1.0.1",
	}
	for i := 0; i < n; i++ {
		t := result.Seconds(float64(i) / 3)
		s := result.Sample{
			T:                     t,
			LeaderDepth:           (i * 37) % 900,
			LeaderCapacity:        1000,
			LeaderWaitP99:         result.Seconds(float64((i*13)%50) / 100),
			LeaderWaitP99Interval: result.Seconds(float64((i*7)%30) / 100),
			LeaderAccepted:        uint64(i * 300),
			LeaderRejected:        uint64(i * 4),
			LeaderDropped:         0,
			HeartbeatsQueued:      i % 5,
			InFlight:              30 + i%9,
			Delivered:             uint64(i * 120),
			Backpressure:          uint64(i / 2),
			Retries:               uint64(i / 3),
			OutboxDepth:           200 + (i*17)%300,
			OutboxOldest:          result.Seconds(1.5 + float64(i%10)/10),
			Online:                900,
			Busy:                  40,
			AtTarget:              i * 3,
			WorkerDepth:           12,
			WorkerFull:            uint64(i / 4),
			LeaderUp:              true,
		}
		for p := 0; p < 4; p++ {
			s.Limits = append(s.Limits, sawtooth(i, p))
		}
		l.History = append(l.History, s)
	}
	l.Latest = l.History[n-1]
	l.AtTarget = 357
	l.Workers = make([]result.WorkerState, 1000)
	for i := range l.Workers {
		switch {
		case i < 357:
			l.Workers[i] = result.StateUpdated
		case i >= 900:
			l.Workers[i] = result.StateOffline
		case i%25 == 0:
			l.Workers[i] = result.StateBusy
		case i%97 == 0:
			l.Workers[i] = result.StateFull
		default:
			l.Workers[i] = result.StateOnline
		}
	}
	l.Records = []result.Record{
		{T: 0, Kind: "event", Text: "start: 1000 workers in 2 groups"},
		{T: 10, Kind: "event", Text: "deploy 1.0.1 wave 1/3 to 333 workers"},
		{T: 20, Kind: "event", Text: "deploy 1.0.1 wave 2/3 to 333 workers", LagSec: 0.2},
		{T: 25, Kind: "event", Text: "partition 10% (100 workers)"},
		{T: 31.5, Kind: "warning", Text: "leader mailbox 90% full"},
		{T: 35, Kind: "control", Text: "speed ×4"},
	}
	return l
}

// finished is midRun at its end, with the report.
func finished() result.Live {
	l := midRun()
	l.Now, l.Phase, l.Next, l.Rate = 60, "done", "", 0
	l.Report = &result.Report{
		Scenario: "wave-deploy",
		Result: result.Result{
			Lost:  0,
			Run:   result.RunInfo{Seed: 42, Speed: 4, SimSeconds: 72, WallSeconds: 18.4, KeptUp: true, LeaderRestarts: 1},
			Relay: result.RelayResult{Delivered: 14280, DeadLettered: 0},
		},
		Verdicts: []result.Verdict{
			{Name: "nothing lost", Check: "lost == 0", Status: result.Pass},
			{Name: "deploy converges", Check: "deploys[0].duration < 30", Status: result.Pass},
			{Name: "mailbox bounded", Check: "leader.mailbox.max_depth <= 1000", Status: result.Pass},
			{Name: "few rejections", Check: "leader.mailbox.rejected < 100", Status: result.Fail, Detail: "leader.mailbox.rejected = 476"},
		},
	}
	return l
}
