package main

import (
	"context"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/transport"
)

// leaderLink is the leader's link as runLeader holds it.
type leaderLink interface {
	leader.Link
	Close(clean bool)
}

// dialLink opens the leader's link: on the embedded broker, inline (no
// MQTT session, packets or client goroutines between: the broker runs in
// this process); with --broker (embedded nil), a paho session with co,
// which redials when the broker drops it (leader.Redialer). Either
// carries co's will.
func dialLink(ctx context.Context, co transport.ClientOptions, embedded *broker.Broker) (leaderLink, error) {
	if embedded != nil {
		return transport.NewInline(embedded, transport.InlineOptions{Will: co.Will})
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return transport.Connect(cctx, co, nil)
}
