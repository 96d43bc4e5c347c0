package scenario

import (
	"reflect"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// Defaults a scenario gives the mechanisms where they differ from the
// packages' own: a relay partitioned as the leader command's default, and
// group commit rather than an fsync per enqueue (a scenario measures the
// mechanisms, not the disk).
const (
	DefaultPartitions = 4
	DefaultDurability = "batch"
)

// defaultService is the worker's and the leader's service time when none is
// given (both packages use 1 ms).
var defaultService = dist.Const(time.Millisecond)

// fillDefaults writes the defaults into every setting the file left out, so
// that a loaded Scenario says what will run (and the report shows it).
// The values come from the packages that own them. Presence, not zero,
// decides: an explicit "capacity: 0" stays 0 for validate to refuse.
//
// A group inherits the fleet's worker profile: a field it sets replaces the
// fleet's, and inside a mailbox, reconnect or offline mapping each key it
// leaves out is the fleet's.
func fillDefaults(s *Scenario, src *source) {
	has := src.has
	if sc := s.Scaling; sc != nil {
		setInt(&sc.Min, "scale.min", 1, has)
		setInt(&sc.Max, "scale.max", MaxWorkers, has)
		if !has("scale.leader") {
			sc.Leader = LeaderFixed
		}
	}
	w := &s.Fleet.Worker
	const wp = "fleet.worker"
	if w.Mailbox == nil {
		w.Mailbox = &MailboxSpec{}
	}
	if !has(wp + ".mailbox.capacity") {
		w.Mailbox.Capacity = worker.DefaultMailboxCapacity
	}
	if w.Service == nil {
		w.Service = ptr(defaultService)
	}
	if w.Reconnect == nil {
		w.Reconnect = &ReconnectSpec{}
	}
	if !has(wp + ".reconnect.policy") {
		w.Reconnect.Policy = "backoff"
	}
	if !has(wp + ".reconnect.base") {
		w.Reconnect.Base = Duration(worker.DefaultReconnectBackoff.Base)
	}
	if !has(wp + ".reconnect.cap") {
		w.Reconnect.Cap = Duration(worker.DefaultReconnectBackoff.Cap)
	}
	if w.KeepAlive == nil {
		w.KeepAlive = ptr(Duration(worker.DefaultKeepAlive))
	}
	if w.AskTimeout == nil {
		w.AskTimeout = ptr(Duration(worker.DefaultAskTimeout))
	}
	if w.Version == nil {
		w.Version = ptr(worker.DefaultVersion)
	}
	if w.LocalOutbox == nil {
		w.LocalOutbox = ptr(worker.DefaultLocalOutbox)
	}
	if w.Offline != nil && !has(wp+".offline.mode") {
		w.Offline.Mode = "partition"
	}
	for i := range s.Fleet.Groups {
		inherit(&s.Fleet.Groups[i].WorkerProfile, w, index("fleet.groups", i), has)
	}

	l := &s.Leader
	if !has("leader.mailbox.capacity") {
		l.Mailbox.Capacity = leader.DefaultMailboxCapacity
	}
	if !has("leader.mailbox.block_timeout") {
		l.Mailbox.BlockTimeout = Duration(mailbox.DefaultBlockTimeout)
	}
	if l.Service == nil {
		l.Service = ptr(defaultService)
	}
	setDur(&l.HeartbeatInterval, "leader.heartbeat_interval", leader.DefaultHeartbeatInterval, has)
	if !has("leader.heartbeat_policy") {
		l.HeartbeatPolicy = "coalesce"
	}
	setDur(&l.AskTimeout, "leader.ask_timeout", leader.DefaultAskTimeout, has)
	o := &l.Outbox
	if !has("leader.outbox.durability") {
		o.Durability = DefaultDurability
	}
	if !has("leader.outbox.store") {
		o.Store = "bolt"
	}
	setInt(&o.Partitions, "leader.outbox.partitions", DefaultPartitions, has)
	setInt(&o.MaxAttempts, "leader.outbox.max_attempts", outbox.DefaultOptions.MaxAttempts, has)
	setDur(&o.LeaseTimeout, "leader.outbox.lease_timeout", outbox.DefaultOptions.LeaseTimeout, has)
	r := &l.Relay
	setDur(&r.Interval, "leader.relay.interval", outbox.DefaultRelayOptions.Interval, has)
	setInt(&r.Batch, "leader.relay.batch", outbox.DefaultRelayOptions.Batch, has)
	lim := flow.DefaultLimiterOptions
	setInt(&r.Limit.Initial, "leader.relay.limit.initial", lim.Initial, has)
	setInt(&r.Limit.Min, "leader.relay.limit.min", lim.Min, has)
	// As the relay does: a max left out rises to an initial above it.
	setInt(&r.Limit.Max, "leader.relay.limit.max", max(lim.Max, r.Limit.Initial), has)
	if !has("leader.relay.limit.strategy") {
		r.Limit.Strategy = lim.Strategy.String()
	}
	setDur(&r.Backoff.Base, "leader.relay.backoff.base", flow.DefaultBackoff.Base, has)
	setDur(&r.Backoff.Cap, "leader.relay.backoff.cap", flow.DefaultBackoff.Cap, has)

	for i := range s.Timeline {
		ev := &s.Timeline[i]
		if ev.Deploy != nil && !has(ev.path+".deploy.kind") {
			ev.Deploy.Kind = "firmware"
		}
		if ev.Poison != nil && !has(ev.path+".poison.count") {
			ev.Poison.Count = 1
		}
	}
}

// inherit fills the keys a group's mailbox, reconnect and offline mappings
// leave out from the fleet's profile f (already complete).
func inherit(g, f *WorkerProfile, path string, has func(string) bool) {
	if m := g.Mailbox; m != nil {
		if !has(path + ".mailbox.capacity") {
			m.Capacity = f.Mailbox.Capacity
		}
		if !has(path + ".mailbox.policy") {
			m.Policy = f.Mailbox.Policy
		}
	}
	if r := g.Reconnect; r != nil {
		if !has(path + ".reconnect.policy") {
			r.Policy = f.Reconnect.Policy
		}
		if !has(path + ".reconnect.base") {
			r.Base = f.Reconnect.Base
		}
		if !has(path + ".reconnect.cap") {
			r.Cap = f.Reconnect.Cap
		}
	}
	if o := g.Offline; o != nil {
		fo := f.Offline
		if fo == nil {
			fo = &OfflineProfile{Mode: "partition"}
		}
		if !has(path + ".offline.every") {
			o.Every = fo.Every
		}
		if !has(path + ".offline.for") {
			o.For = fo.For
		}
		if !has(path + ".offline.mode") {
			o.Mode = fo.Mode
		}
	}
}

func ptr[T any](v T) *T { return &v }

func setDur(d *Duration, path string, def time.Duration, has func(string) bool) {
	if !has(path) {
		*d = Duration(def)
	}
}

func setInt(n *int, path string, def int, has func(string) bool) {
	if !has(path) {
		*n = def
	}
}

// sourceOf makes a source for a Scenario built in code: a value counts as
// written when it is not zero.
func sourceOf(s *Scenario) *source {
	src := &source{file: s.File, pos: map[string]position{}, anchors: nil}
	var walk func(v reflect.Value, path string) bool
	walk = func(v reflect.Value, path string) bool {
		set := false
		switch {
		case v.Type() == selectorType || v.Type() == expectType || textual(v.Type()):
			set = !v.IsZero()
		case v.Kind() == reflect.Pointer:
			if set = !v.IsNil(); set {
				walk(v.Elem(), path)
			}
		case v.Kind() == reflect.Struct:
			fs := fieldsOf(v.Type())
			for _, k := range fs.order {
				set = walk(v.FieldByIndex(fs.byName[k]), join(path, k)) || set
			}
		case v.Kind() == reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), index(path, i))
			}
			set = v.Len() > 0
		default:
			set = !v.IsZero()
		}
		if set {
			src.pos[path] = position{}
		}
		return set
	}
	walk(reflect.ValueOf(s).Elem(), "")
	for i := range s.Timeline {
		src.pos[index("timeline", i)+".at"] = position{} // at 0s is a time like any other
	}
	return src
}
