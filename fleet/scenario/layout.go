package scenario

import (
	"fmt"
	"math"
	"time"
)

// Scenario-level defaults (docs/SCENARIOS.md). Mechanism defaults (mailbox
// capacities, relay limits, …) are the packages' own and are applied there.
const (
	DefaultSeed        = 1
	DefaultSpeed       = 1.0
	DefaultDrain       = Duration(time.Minute)
	MinSampleEvery     = Duration(100 * time.Millisecond)
	DefaultGroup       = "default"
	samplesPerDuration = 300
)

// ApplyDefaults fills the scenario-level defaults. It is idempotent.
func (s *Scenario) ApplyDefaults() {
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	if s.Speed == 0 {
		s.Speed = DefaultSpeed
	}
	if s.Drain == 0 {
		s.Drain = DefaultDrain
	}
	if s.SampleEvery == 0 {
		s.SampleEvery = max(s.Duration/samplesPerDuration, MinSampleEvery)
	}
}

// WorkerSpec is one worker of the fleet, with its group's profile merged
// over the fleet's.
type WorkerSpec struct {
	ID    string
	Index int
	Group string
	// Gateway is the id of the gateway the worker sits behind, "" when it
	// has a session of its own (worker.Config.Gateway).
	Gateway string
	Profile WorkerProfile
}

// WorkerID is the id of the worker at index i: w-00000, w-00001, …
func WorkerID(i int) string { return fmt.Sprintf("w-%05d", i) }

// GatewayID is the id of the gateway at index i: gw-00000, gw-00001, …
// It is the gateway's MQTT client id; the "gw-" prefix keeps it apart from
// the workers' ids, which share the broker's client ids.
func GatewayID(i int) string { return fmt.Sprintf("gw-%05d", i) }

// groupSizes returns each group's size in order, then the default group's
// (the rest of the fleet), or an error if the groups ask for more than
// Fleet.Count.
func (f Fleet) groupSizes() ([]int, int, error) {
	sizes := make([]int, len(f.Groups))
	used := 0
	for i, g := range f.Groups {
		n := g.Count
		if g.Percent > 0 {
			n = max(int(math.Floor(float64(f.Count)*g.Percent/100)), 1)
		}
		sizes[i] = n
		used += n
	}
	if used > f.Count {
		return nil, 0, fmt.Errorf("the groups hold %d workers but fleet.count is %d: raise fleet.count or shrink the groups", used, f.Count)
	}
	return sizes, f.Count - used, nil
}

// Workers lays out the fleet: the groups in file order, then the default
// group. With a gateway size (the fleet's, or a group's own), each group's
// workers fill gateways gw-00000, gw-00001, … in order, that many to a
// gateway, the group's last gateway taking what is left: a gateway never
// carries workers of two groups, so a group's profile (its keepalive, its
// reconnect policy) is its gateways' too. It fails only on a scenario that
// has not been validated.
func (s *Scenario) Workers() ([]WorkerSpec, error) {
	sizes, rest, err := s.Fleet.groupSizes()
	if err != nil {
		return nil, err
	}
	out := make([]WorkerSpec, 0, s.Fleet.Count)
	gateways := 0
	add := func(name string, n int, gwSize *int, p WorkerProfile) error {
		if gwSize != nil && *gwSize < 1 {
			return fmt.Errorf("group %s: gateway size %d: want at least 1", name, *gwSize)
		}
		for j := range n {
			i := len(out)
			ws := WorkerSpec{ID: WorkerID(i), Index: i, Group: name, Profile: p}
			if gwSize != nil {
				if j%*gwSize == 0 {
					gateways++
				}
				ws.Gateway = GatewayID(gateways - 1)
			}
			out = append(out, ws)
		}
		return nil
	}
	for i, g := range s.Fleet.Groups {
		gw := s.Fleet.GatewaySize
		if g.GatewaySize != nil {
			gw = g.GatewaySize
		}
		if err := add(g.Name, sizes[i], gw, s.Fleet.Worker.merge(g.WorkerProfile)); err != nil {
			return nil, err
		}
	}
	if err := add(DefaultGroup, rest, s.Fleet.GatewaySize, s.Fleet.Worker); err != nil {
		return nil, err
	}
	return out, nil
}

// GatewayShape is how a laid-out fleet uses its MQTT sessions: how many
// gateways carry workers, and the most workers one of them carries (both
// 0 when every worker has a session of its own).
func GatewayShape(ws []WorkerSpec) (gateways, largest int) {
	count := 0
	for i, w := range ws {
		if w.Gateway == "" {
			continue
		}
		// A gateway's workers are consecutive (Workers).
		if i == 0 || ws[i-1].Gateway != w.Gateway {
			gateways++
			count = 0
		}
		count++
		largest = max(largest, count)
	}
	return gateways, largest
}

// merge returns p with o's set fields over it.
func (p WorkerProfile) merge(o WorkerProfile) WorkerProfile {
	if o.Mailbox != nil {
		p.Mailbox = o.Mailbox
	}
	if o.Service != nil {
		p.Service = o.Service
	}
	if o.RTT != nil {
		p.RTT = o.RTT
	}
	if o.Loss != nil {
		p.Loss = o.Loss
	}
	if o.Heartbeat != nil {
		p.Heartbeat = o.Heartbeat
	}
	if o.Telemetry != nil {
		p.Telemetry = o.Telemetry
	}
	if o.Reconnect != nil {
		p.Reconnect = o.Reconnect
	}
	if o.KeepAlive != nil {
		p.KeepAlive = o.KeepAlive
	}
	if o.AskTimeout != nil {
		p.AskTimeout = o.AskTimeout
	}
	if o.Version != nil {
		p.Version = o.Version
	}
	if o.Delivery != nil {
		p.Delivery = o.Delivery
	}
	if o.Poll != nil {
		p.Poll = o.Poll
	}
	if o.LocalOutbox != nil {
		p.LocalOutbox = o.LocalOutbox
	}
	if o.Offline != nil {
		p.Offline = o.Offline
	}
	return p
}

// percentOf is how many of n workers a percentage p selects: at least
// one, at most all.
func percentOf(n int, p float64) int {
	return min(max(int(math.Round(float64(n)*p/100)), 1), n)
}

// Select returns the indexes of the workers sel picks, in index order.
// An unknown group or id is an error (Validate catches these at load time).
func (sel Selector) Select(ws []WorkerSpec) ([]int, error) {
	var out []int
	switch {
	case sel.All:
		out = make([]int, len(ws))
		for i := range ws {
			out[i] = i
		}
	case sel.Percent > 0:
		// Spread evenly over the fleet (every k-th worker), so a percentage
		// hits every group in proportion rather than the first group only.
		n := percentOf(len(ws), sel.Percent)
		for j := range n {
			out = append(out, j*len(ws)/n)
		}
	case sel.Range:
		if sel.From < 0 || sel.To >= len(ws) || sel.From > sel.To {
			return nil, fmt.Errorf("workers %q: the fleet has indexes 0-%d", sel.Text, len(ws)-1)
		}
		for i := sel.From; i <= sel.To; i++ {
			out = append(out, i)
		}
	case sel.Group != "":
		for i, w := range ws {
			if w.Group == sel.Group {
				out = append(out, i)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("workers %q: no group %q with workers in this fleet", sel.Text, sel.Group)
		}
	case len(sel.IDs) > 0:
		byID := make(map[string]int, len(ws))
		for i, w := range ws {
			byID[w.ID] = i
		}
		for _, id := range sel.IDs {
			i, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("workers: no worker %q in this fleet (ids run %s to %s)", id, ws[0].ID, ws[len(ws)-1].ID)
			}
			out = append(out, i)
		}
	default: // an unset selector means every worker
		return Selector{All: true}.Select(ws)
	}
	return out, nil
}
