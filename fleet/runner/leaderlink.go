package runner

import (
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/transport"
)

// leaderLink is the leader's link as the runner holds it: the leader's
// calls, and Close, which a crash makes without a goodbye.
type leaderLink interface {
	leader.Link
	Close(clean bool)
}

// dialLeader opens the leader's link on the run's broker: inline, with
// no MQTT session between (the leader runs in the broker's process), and
// the leader's will, published when a crash closes the link without a
// goodbye as the broker would publish a dropped session's.
func (r *Runner) dialLeader(lc leader.Config) (leaderLink, error) {
	return transport.NewInline(r.broker.Load(), transport.InlineOptions{Will: transport.LeaderWill(lc.Topics)})
}
