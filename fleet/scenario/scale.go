package scenario

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
)

// Clone returns a deep copy of s: changing the copy (its fleet, its
// timeline, its selectors) leaves s as it was. The compiled expectations
// are shared; they are read-only.
func (s *Scenario) Clone() *Scenario {
	c := &Scenario{}
	deepCopy(reflect.ValueOf(c).Elem(), reflect.ValueOf(s).Elem())
	return c
}

// deepCopy copies src into dst, following pointers, slices and maps.
// Unexported fields are copied as they are (they hold read-only state).
func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		deepCopy(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Struct:
		dst.Set(src)
		t := src.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(n.Index(i), src.Index(i))
		}
		dst.Set(n)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(it.Value().Type()).Elem()
			deepCopy(v, it.Value())
			n.SetMapIndex(it.Key(), v)
		}
		dst.Set(n)
	default:
		dst.Set(src)
	}
}

// Scale returns a copy of s for a fleet of n workers (sim run --workers):
// fleet.count becomes n, and what counts workers follows in proportion:
// group counts (at least 1 each; percent groups already follow), index
// range selectors, and deploy wave sizes (at least 1). Percentages and
// group selectors need no change. A gateway size is kept, as a kind of
// gateway carries so many devices whatever the fleet's size: a larger
// fleet has more gateways, not larger ones. It is only clamped to what it
// divides (fleet.gateway_size to n, a group's own to the group's scaled
// size), so a fleet scaled below it is one gateway. Expectations are
// unchanged: write them relative to fleet.count. A selector listing a
// worker id that the smaller fleet does not have, or groups that no longer
// fit, is an error.
//
// The scenario's scale key bounds n: a size outside scale.min to
// scale.max, the fleets its expectations hold at, is an error placed at
// the bound it passes. With scale.leader proportional the leader grows
// with the fleet: its mailbox capacity (set_leader's too) is multiplied
// by n/fleet.count (rounded, at least 1) and its service time
// (set_leader's too) divided by it, so the load is the same multiple of
// what the leader serves at any size.
func (s *Scenario) Scale(n int) (*Scenario, error) {
	if n < 1 || n > MaxWorkers {
		return nil, fmt.Errorf("--workers %d: want 1 to %d", n, MaxWorkers)
	}
	old := s.Fleet.Count
	if old < 1 {
		return nil, fmt.Errorf("--workers %d: the scenario has no valid fleet.count to scale from", n)
	}
	src := s.src
	if src == nil {
		src = sourceOf(s)
	}
	if r := s.Scaling; !r.supports(n) {
		key := "scale.max"
		if n < r.Min {
			key = "scale.min"
		}
		return nil, Errors{src.at(key, "the scenario holds at %s, not %d (--workers): run it at a size in that range, or widen the range once its expectations hold there", r, n)}
	}
	c := s.Clone()
	c.Fleet.Count = n
	scale := func(x int) int {
		return max(1, int(math.Round(float64(x)*float64(n)/float64(old))))
	}
	for i := range c.Fleet.Groups {
		if g := &c.Fleet.Groups[i]; g.Percent == 0 {
			g.Count = scale(g.Count)
		}
	}
	clampGateways(&c.Fleet)
	for i := range c.Timeline {
		ev := &c.Timeline[i]
		for _, sel := range ev.selectors() {
			if sel.Range {
				sel.From = int(int64(sel.From) * int64(n) / int64(old))
				sel.To = max(sel.From, int((int64(sel.To)+1)*int64(n)/int64(old))-1)
				sel.Text = fmt.Sprintf("%d-%d", sel.From, sel.To)
			}
		}
		if d := ev.Deploy; d != nil && d.WaveSize > 0 {
			d.WaveSize = scale(d.WaveSize)
		}
	}
	if r := s.Scaling; r != nil && r.Leader == LeaderProportional {
		g := float64(n) / float64(old)
		c.Leader.growCapacity(g)
		c.Leader.growService(g)
		for i := range c.Timeline {
			if sl := c.Timeline[i].SetLeader; sl != nil {
				sl.grow(g)
			}
		}
		c.leaderGrowth = cmp.Or(s.leaderGrowth, 1) * g
	}
	note := *src
	note.note = fmt.Sprintf(" (with --workers %d)", n)
	if errs := validate(c, &note); len(errs) > 0 {
		return nil, errs.sorted()
	}
	return c, nil
}

// growCapacity multiplies the leader's mailbox capacity by g (rounded, at
// least 1).
func (l *LeaderSpec) growCapacity(g float64) {
	l.Mailbox.Capacity = grown(l.Mailbox.Capacity, g)
}

// growService divides the leader's service time by g: a leader g times as
// fast.
func (l *LeaderSpec) growService(g float64) {
	if l.Service != nil {
		l.Service = ptr(shrunk(*l.Service, g))
	}
}

// grow applies a proportional leader's growth g to what the event sets.
func (sl *SetLeader) grow(g float64) {
	if sl.Capacity != nil {
		sl.Capacity = ptr(grown(*sl.Capacity, g))
	}
	if sl.Service != nil {
		sl.Service = ptr(shrunk(*sl.Service, g))
	}
}

// grown is a capacity multiplied by g: rounded, at least 1 (validation
// names one grown past the largest).
func grown(capacity int, g float64) int {
	return int(max(1, math.Round(float64(capacity)*g)))
}

// shrunk is a service time distribution divided by g: its durations
// shrink, its shape stays.
func shrunk(d dist.Dist, g float64) dist.Dist {
	div := func(t time.Duration) time.Duration { return time.Duration(math.Round(float64(t) / g)) }
	d.Mean, d.Min, d.Max = div(d.Mean), div(d.Min), div(d.Max)
	return d
}

// clampGateways lowers each gateway size to the size of what it divides.
// Groups that do not fit are left for validate to report.
func clampGateways(f *Fleet) {
	if g := f.GatewaySize; g != nil {
		*g = min(*g, f.Count)
	}
	sizes, _, err := f.groupSizes()
	if err != nil {
		return
	}
	for i := range f.Groups {
		if g := f.Groups[i].GatewaySize; g != nil {
			*g = min(*g, sizes[i])
		}
	}
}

// selectors returns the event's selectors, to change them in place.
func (ev *Event) selectors() []*Selector {
	var out []*Selector
	for _, t := range []*Targets{ev.Partition, ev.Heal, ev.PartitionGateways, ev.HealGateways, ev.Disconnect, ev.Reconnect, ev.Crash, ev.Reboot, ev.ReplayDeadLetters} {
		if t != nil {
			out = append(out, &t.Workers)
		}
	}
	if ev.Deploy != nil {
		out = append(out, &ev.Deploy.Workers)
		if ev.Deploy.Via != nil {
			out = append(out, ev.Deploy.Via)
		}
	}
	if ev.HeartbeatStorm != nil {
		out = append(out, &ev.HeartbeatStorm.Workers)
	}
	if ev.SetCapacity != nil {
		out = append(out, &ev.SetCapacity.Workers)
	}
	if ev.Poison != nil {
		out = append(out, &ev.Poison.Workers)
	}
	return out
}

// WithGatewaySize returns a copy of s whose workers sit behind gateways of
// n (sim run --gateway-size): fleet.gateway_size becomes n and the groups'
// own gateway sizes are dropped, so every group fills gateways of n (a
// group smaller than n is one gateway). n must be 1 to fleet.count.
func (s *Scenario) WithGatewaySize(n int) (*Scenario, error) {
	if n < 1 || n > s.Fleet.Count {
		return nil, fmt.Errorf("gateway size %d: want 1 to %d (fleet.count) workers per gateway", n, s.Fleet.Count)
	}
	c := s.Clone()
	c.Fleet.GatewaySize = &n
	for i := range c.Fleet.Groups {
		c.Fleet.Groups[i].GatewaySize = nil
	}
	src := s.src
	if src == nil {
		src = sourceOf(s)
	}
	note := *src
	note.note = fmt.Sprintf(" (with --gateway-size %d)", n)
	if errs := validate(c, &note); len(errs) > 0 {
		return nil, errs.sorted()
	}
	return c, nil
}
