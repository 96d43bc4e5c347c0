package scenario

// Live is a running scenario at one moment, for the dashboard and the
// headless progress line. The runner builds it on request (Runner.Snapshot),
// from the same stats the report uses.
type Live struct {
	Scenario string
	Variant  string
	Seed     uint64
	Speed    float64 // the speed now
	Paused   bool
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
	// Workers holds every worker's state, by index.
	Workers []WorkerState
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

// WorkerState is a worker's state for the fleet grid, from the worker's
// own stats.
type WorkerState uint8

const (
	StateOffline WorkerState = iota // not connected
	StateOnline                     // connected, idle
	StateBusy                       // serving a command
	StateFull                       // its mailbox is at capacity
	StateUpdated                    // online and at the target version
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
	}
	return "offline"
}
