package leader

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// WaveProgress is one wave of a deploy, as the leader has seen it. Every
// target ends up in exactly one of Delivered, Rejected, StaleDropped,
// Superseded, Expired and DeadLettered, or is still queued: Pending.
type WaveProgress struct {
	Targets      int
	Delivered    int           // acked ok
	Full         int           // "full" answers (each retried)
	Rejected     int           // refused for good (dead-lettered)
	Start        time.Time     // when the wave became due
	Done         time.Time     // when its last target was delivered or rejected; zero until then
	Duration     time.Duration // Done - Start, once done
	Replaced     int           // targets whose earlier queued update this one overwrote
	StaleDropped int           // targets that already had a newer update queued
	// Superseded counts targets whose update a later deploy replaced
	// before it was delivered (that deploy counts them as Replaced, or
	// delivers its own version after the one in flight).
	Superseded int
	// Expired counts targets whose update the outbox dropped undelivered
	// when its TTL ran out.
	Expired int
	// DeadLettered counts targets whose update ran out of attempts (no
	// ack in time, or "full", every time) and went to the dead letters.
	DeadLettered int
	// Pending counts targets whose update is still queued.
	Pending int
}

// DeployProgress is one deploy and its waves.
type DeployProgress struct {
	// Index is the number Deploy returned, counted on across the leaders
	// that used the same outbox file.
	Index   int
	Version string
	Kind    wire.Kind
	Targets int
	Waves   []WaveProgress
}

// Delivered totals the deploy's delivered targets.
func (d DeployProgress) Delivered() int {
	n := 0
	for _, w := range d.Waves {
		n += w.Delivered
	}
	return n
}

// Rejected totals the deploy's targets that refused it for good.
func (d DeployProgress) Rejected() int {
	n := 0
	for _, w := range d.Waves {
		n += w.Rejected
	}
	return n
}

// Pending totals the deploy's targets whose update is still queued.
func (d DeployProgress) Pending() int {
	n := 0
	for _, w := range d.Waves {
		n += w.Pending
	}
	return n
}
