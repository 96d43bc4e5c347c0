package worker

import (
	"fmt"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// buildGateways builds one gateway per id the configs name, in the order
// of their first device.
func (p *Pool) buildGateways(cfgs []Config, dial Dialer, o PoolOptions) error {
	type group struct {
		first  Config
		prefix string
		rng    wire.DeviceRange
	}
	groups := map[string]*group{}
	var order []string
	for _, c := range cfgs {
		if c.Gateway == "" {
			continue
		}
		if err := wire.ValidGatewayID(c.Gateway); err != nil {
			return fmt.Errorf("worker pool: worker %q: %w", c.ID, err)
		}
		prefix, n, ok := splitDeviceID(c.ID)
		if !ok {
			return fmt.Errorf("worker pool: worker %q behind gateway %q: a device id must end in a number (<prefix><number>, e.g. w-00042), which the gateway's range claims", c.ID, c.Gateway)
		}
		g := groups[c.Gateway]
		if g == nil {
			g = &group{first: c, rng: wire.DeviceRange{Prefix: prefix, First: n, Last: n}}
			groups[c.Gateway] = g
			order = append(order, c.Gateway)
			continue
		}
		switch {
		case prefix != g.rng.Prefix:
			return fmt.Errorf("worker pool: worker %q behind gateway %q: id prefix %q, but the gateway's device %q has %q; a gateway's devices share one prefix (its range, e.g. w-{0..999})",
				c.ID, c.Gateway, prefix, g.first.ID, g.rng.Prefix)
		case c.Topics.Prefix != g.first.Topics.Prefix:
			return fmt.Errorf("worker pool: worker %q behind gateway %q: topic prefix %q, but the gateway's device %q has %q",
				c.ID, c.Gateway, c.Topics.Prefix, g.first.ID, g.first.Topics.Prefix)
		}
		g.rng.First, g.rng.Last = min(g.rng.First, n), max(g.rng.Last, n)
	}
	if len(order) == 0 {
		return nil
	}
	gd := o.Gateways
	if gd == nil {
		var ok bool
		if gd, ok = dial.(GatewayDialer); !ok {
			return fmt.Errorf("worker pool: worker %q is behind gateway %q, but the pool's dialer %T cannot open gateway sessions; set PoolOptions.Gateways",
				groups[order[0]].first.ID, order[0], dial)
		}
	}
	for _, id := range order {
		g := groups[id]
		clk := g.first.GatewayClock
		if clk == nil {
			clk = g.first.Clock
		}
		if clk == nil {
			clk = o.Clock
		}
		// The top bit keeps the gateway's jitter stream apart from its
		// first device's, PCG(Seed, Index).
		gw, err := NewGateway(GatewayConfig{
			ID: id, Range: g.rng, Topics: g.first.Topics, Clock: clk,
			Seed: g.first.Seed, Index: g.first.Index | 1<<63,
			Backoff: g.first.Reconnect.Backoff, KeepAlive: g.first.KeepAlive, Logger: g.first.Logger,
			Downlink: g.first.GatewayDownlink,
		}, gd)
		if err != nil {
			return fmt.Errorf("worker pool: %w", err)
		}
		p.gateways = append(p.gateways, gw)
		p.gwByID[id] = gw
	}
	return nil
}

// splitDeviceID splits "w-00042" into "w-" and 42: the id's trailing
// decimal digits (at most 19, a uint64) are its number.
func splitDeviceID(id string) (prefix string, n uint64, ok bool) {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	if i == len(id) || len(id)-i > 19 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(id[i:], 10, 64)
	return id[:i], n, err == nil
}
