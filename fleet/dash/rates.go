package dash

import (
	"github.com/fleetsim/fleetsim/fleet/result"
)

// rates are per simulated second, from the two newest samples. Counters
// are cumulative, so a rate is the difference over the time between.
type rates struct {
	ok bool // two samples were there to compare

	Accepted, Rejected, Dropped float64 // leader mailbox
	Delivered, Backpressure     float64 // relay
}

// hasSample reports whether the runner has sampled the fleet yet: before
// the first sample, Latest is the zero Sample.
func hasSample(l result.Live) bool {
	s := l.Latest
	return len(l.History) > 0 || s.T > 0 || s.LeaderCapacity > 0 || len(s.Limits) > 0
}

func ratesOf(l result.Live) rates {
	cur := l.Latest
	var prev *result.Sample
	for i := len(l.History) - 1; i >= 0; i-- {
		if l.History[i].T < cur.T {
			prev = &l.History[i]
			break
		}
	}
	if prev == nil {
		return rates{}
	}
	dt := float64(cur.T - prev.T)
	per := func(now, before uint64) float64 {
		if now < before { // a counter restarted with the leader
			return 0
		}
		return float64(now-before) / dt
	}
	return rates{
		ok:           true,
		Accepted:     per(cur.LeaderAccepted, prev.LeaderAccepted),
		Rejected:     per(cur.LeaderRejected, prev.LeaderRejected),
		Dropped:      per(cur.LeaderDropped, prev.LeaderDropped),
		Delivered:    per(cur.Delivered, prev.Delivered),
		Backpressure: per(cur.Backpressure, prev.Backpressure),
	}
}
