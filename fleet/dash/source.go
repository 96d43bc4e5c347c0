package dash

import (
	"github.com/fleetsim/fleetsim/fleet/result"
)

// Source gives the dashboard the run's state. Snapshot is called from the
// UI goroutine once per refresh; it must not block for long and must
// return values the caller may keep (the dashboard does not modify them).
type Source interface {
	Snapshot() result.Live
}

// Controls steers a run. Each method records the action in the run's
// report, so a run stays explainable. The dashboard calls them from its UI
// goroutine, in the order the keys were pressed.
type Controls interface {
	Pause()
	Resume()
	SetSpeed(speed float64)
	// Partition cuts percent (0-100) of the workers off the broker.
	Partition(percent float64)
	Heal()
	KillLeader()
	Deploy(version string)
}
