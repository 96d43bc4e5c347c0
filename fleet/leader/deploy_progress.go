package leader

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// WaveProgress is one wave of a deploy, as the leader has seen it. Every
// target ends up in exactly one of Delivered, Rejected, StaleDropped,
// Superseded, Expired, DeadLettered and Cancelled, or is still queued:
// Pending.
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
	// Cancelled counts targets whose update Cancel withdrew before it was
	// sent, or that was out for delivery then and came back undelivered.
	Cancelled int
	// Pending counts targets whose update is still queued.
	Pending int
}

// add adds w's counts to p's (not its times).
func (p *WaveProgress) add(w WaveProgress) {
	p.Targets += w.Targets
	p.Delivered += w.Delivered
	p.Full += w.Full
	p.Rejected += w.Rejected
	p.Replaced += w.Replaced
	p.StaleDropped += w.StaleDropped
	p.Superseded += w.Superseded
	p.Expired += w.Expired
	p.DeadLettered += w.DeadLettered
	p.Cancelled += w.Cancelled
	p.Pending += w.Pending
}

// DeployProgress is one deploy and its waves.
type DeployProgress struct {
	// Index is the number Deploy returned, counted on across the leaders
	// that used the same outbox file.
	Index   int
	Version string
	Kind    wire.Kind
	Targets int
	// Request is DeployPlan.Request: the id of the request that asked for
	// the deploy, if it came with one.
	Request string `json:",omitempty"`
	// Cancelled: Cancel withdrew the deploy's updates still queued.
	Cancelled bool `json:",omitempty"`
	Waves     []WaveProgress
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

// DeploySummary is a deploy in a few numbers, whatever its number of
// waves and targets: what the stats message and /metrics carry (a deploy
// of 80,000 waves of one is 80,000 WaveProgress, about 18 MB of JSON; its
// summary is one).
type DeploySummary struct {
	Index     int
	Version   string
	Kind      wire.Kind
	Targets   int
	Request   string `json:",omitempty"`
	Cancelled bool   `json:",omitempty"`
	// Waves is how many waves the deploy has, and WavesDone how many of
	// them are done (their every target delivered, rejected or dropped
	// stale).
	Waves, WavesDone int
	// Totals sums the counts of every wave. Its Start is the first
	// wave's; once every wave is done, its Done is when the last one
	// finished and Duration the time from Start to then (zero until).
	Totals WaveProgress
}

// Summary sums d's waves.
func (d DeployProgress) Summary() DeploySummary {
	s := DeploySummary{Index: d.Index, Version: d.Version, Kind: d.Kind, Targets: d.Targets,
		Request: d.Request, Cancelled: d.Cancelled, Waves: len(d.Waves)}
	var last time.Time
	for _, w := range d.Waves {
		s.Totals.add(w)
		if !w.Done.IsZero() {
			s.WavesDone++
			if w.Done.After(last) {
				last = w.Done
			}
		}
	}
	if n := len(d.Waves); n > 0 {
		s.Totals.Start = d.Waves[0].Start
		if s.WavesDone == n {
			s.Totals.Done, s.Totals.Duration = last, last.Sub(s.Totals.Start)
		}
	}
	return s
}
