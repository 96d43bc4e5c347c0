package result

// Live is a running scenario at one moment, for the dashboard and the
// headless progress line. The runner builds it on request (runner.Runner.Snapshot),
// from the same stats the report uses.
type Live struct {
	Scenario string
	Variant  string
	Seed     uint64
	// Speed is the ceiling now, simulated seconds per wall second (0:
	// none); Rate the pace the run reached over the last few seconds.
	Speed, Rate float64
	Paused      bool
	// Now and Duration are simulated seconds since the start and the
	// timeline's length (the drain comes after). Once the run is done Now
	// stays at the time it ran, drain included (Result.Run.SimSeconds).
	Now, Duration Seconds
	// Phase is "starting", "running", "draining" or "done".
	Phase string
	// Lag is how far the run is behind its schedule now (simulated
	// seconds): the latest timer lag, or the service or delivery lag's
	// p99 over the latest sample interval, whichever is larger; LagOf
	// names it ("" for the timer lag, "service", "delivery"). Behind is
	// set when it is past the threshold.
	Lag    Seconds
	LagOf  string
	Behind bool
	// Next is the next timeline event ("" when none is left) and when.
	Next   string
	NextAt Seconds

	// Latest is the newest sample; History the recent ones (oldest first,
	// at most a few hundred) for charts.
	Latest  Sample
	History []Sample
	// Workers holds every worker's state, by index. Once the run stops
	// its workers, it is their state just before (the end of the run),
	// not the offline they all turn.
	Workers []WorkerState
	// AtTarget is how many workers run Target now (counted with Workers,
	// so it agrees with Target at once after a deploy, where
	// Latest.AtTarget waits for the next sample).
	AtTarget int
	// Groups names each worker's group, by index (the same slice every
	// time: do not modify).
	Groups []string
	// Records are the timeline events, controls and warnings so far.
	Records []Record
	// Target is the latest deployed version ("" before any deploy).
	Target string
	// Report is set once the run has finished (Phase "done").
	Report *Report
}

// WorkerDetail is one worker as the dashboard's drill-down shows it.
type WorkerDetail struct {
	Index   int
	ID      string
	Group   string
	Version string // applied
	State   WorkerState
	// Depth and Capacity are its command mailbox's.
	Depth, Capacity int
	// ConnectAttempts counts its attempts to connect to the broker;
	// MaxAttempt is the highest delivery attempt seen on a command.
	ConnectAttempts uint64
	MaxAttempt      int
}

// WorkerState is a worker's state for the fleet grid, from the worker's
// own stats.
type WorkerState uint8

const (
	StateOffline WorkerState = iota // not connected
	StateOnline                     // connected, idle
	StateBusy                       // serving a command
	StateFull                       // its mailbox is at capacity
	StateUpdated                    // online and at the target version
	// StatePartitioned is a worker the run has cut off the broker (a
	// partition) and not healed yet. The run knows at once; the worker's
	// session and the leader notice only when the keepalive fails.
	StatePartitioned
)

// String names the state.
func (s WorkerState) String() string {
	switch s {
	case StateOnline:
		return "online"
	case StateBusy:
		return "busy"
	case StateFull:
		return "full"
	case StateUpdated:
		return "updated"
	case StatePartitioned:
		return "partitioned"
	}
	return "offline"
}

// Phases of a run, as Live.Phase reports them.
const (
	PhaseStarting = "starting"
	PhaseRunning  = "running"
	PhaseDraining = "draining"
	PhaseDone     = "done"
)
