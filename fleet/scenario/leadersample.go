package scenario

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// LeaderSample is a Sample at time t with the fields that come from the
// leader filled in, and the workers' fields left zero. It is the one
// mapping from leader.Stats to a Sample: the runner's sampler and the
// remote dashboard (which reads a leader's stats topic) both use it.
//
// instances are the stats of every leader instance of the run, oldest
// first (one for a remote leader): the counters are summed over them, so
// they keep growing across a restart. serving says the newest instance
// serves now; only then are the gauges (mailbox depth and capacity,
// heartbeats queued, limits, in-flight, the outbox's oldest) set, as a
// leader that is down has none. The outbox depth is the newest instance's
// either way: it is what the file holds. waitP99 is the 99th percentile of
// the leader's mailbox wait.
func LeaderSample(t result.Seconds, instances []leader.Stats, serving bool, waitP99 time.Duration) result.Sample {
	lt := leaderTotals{all: instances}
	n := len(instances)
	if serving && n > 0 {
		lt.cur = &instances[n-1]
	}
	s := result.Sample{T: t, LeaderUp: lt.cur != nil}
	s.LeaderAccepted = lt.sum(func(l *leader.Stats) uint64 {
		return l.Mailbox.Offered - l.Mailbox.Rejected() - l.Mailbox.DroppedNewest
	})
	s.LeaderRejected = lt.sum(func(l *leader.Stats) uint64 { return l.Mailbox.Rejected() })
	s.LeaderDropped = lt.sum(func(l *leader.Stats) uint64 { return l.Mailbox.Dropped() })
	s.Delivered = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Delivered })
	s.Backpressure = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Backpressure })
	s.Retries = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().Retries })
	s.DeadLettered = lt.sum(func(l *leader.Stats) uint64 { return l.Relay.Total().DeadLettered })
	s.LeaderMaxDepth = lt.maxOf(func(l *leader.Stats) int { return l.Mailbox.MaxDepth })
	s.LeaderWaitP99 = simSec(waitP99)
	if n > 0 {
		s.OutboxDepth = instances[n-1].Outbox.Depth
	}
	if c := lt.cur; c != nil {
		s.LeaderDepth, s.LeaderCapacity = c.Mailbox.Depth, c.Mailbox.Capacity
		s.HeartbeatsQueued = c.Heartbeats.Depth
		s.Limits = make([]int, len(c.Relay.Partitions))
		for i, p := range c.Relay.Partitions {
			s.Limits[i] = p.Limit
			s.InFlight += p.InFlight
		}
		s.OutboxDepth, s.OutboxOldest = c.Outbox.Depth, simSec(c.Outbox.OldestAge)
	}
	return s
}
