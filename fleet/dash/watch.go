package dash

import (
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// watch derives from the samples the events a person waits for that the
// run does not record itself: the leader going down and coming back,
// and the first request its mailbox turned away.
type watch struct {
	// noLeader: the source records the leader's ups and downs itself
	// (a Remote, from the leader's status).
	noLeader bool
	started  bool
	up       bool
	downAt   result.Seconds
	rejected bool
}

// observe returns the events sample s shows, in the order they happened.
func (w *watch) observe(s result.Sample) []string {
	var out []string
	if w.noLeader {
		// Nothing to say of the leader here.
	} else if !w.started {
		w.started, w.up = true, s.LeaderUp
		if !s.LeaderUp {
			w.downAt = s.T
			out = append(out, "leader down")
		}
	} else if s.LeaderUp != w.up {
		w.up = s.LeaderUp
		if s.LeaderUp {
			out = append(out, fmt.Sprintf("leader up again after %s down", fmtSec(s.T-w.downAt)))
		} else {
			w.downAt = s.T
			out = append(out, "leader down")
		}
	}
	if !w.rejected && s.LeaderRejected+s.LeaderDropped > 0 {
		w.rejected = true
		out = append(out, fmt.Sprintf("first rejection: the leader's mailbox turned %d requests away (depth %d of %d)",
			s.LeaderRejected+s.LeaderDropped, s.LeaderDepth, s.LeaderCapacity))
	}
	return out
}
