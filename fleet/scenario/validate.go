package scenario

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Bounds of the fleet's size and the run's speed, for the flags that
// override them (sim run --workers, --speed).
const (
	MaxWorkers = 1_000_000
	MaxSpeed   = 10_000
)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// byRule are the keys whose bounds validate checks by hand, in a rule
// that relates them to other keys or says more than the bound. The bounds
// walk (bounds.go) checks every other key with a Range, Enum or MaxLen in
// the key table; TestBoundsEnforced checks both.
var byRule = map[string]bool{
	// Around fleet.count, and min at most max.
	"scale.min": true,
	"scale.max": true,
	// At most the size of what they divide.
	"fleet.gateway_size":          true,
	"fleet.groups[].gateway_size": true,
	// From limit.min.
	"leader.relay.limit.max": true,
	// block is a policy, but not a worker's: the message says why.
	"fleet.worker.mailbox.policy": true,
	// wire.ValidVersion, the rule the leader and its workers share.
	"fleet.worker.version":      true,
	"timeline[].deploy.version": true,
}

// validator collects the problems of a decoded scenario, each placed by
// its path.
type validator struct {
	src  *source
	errs Errors
}

func (v *validator) errorf(path, format string, args ...any) {
	if !v.full() {
		v.errs = append(v.errs, v.src.at(path, format, args...))
	}
}

// full reports whether the validator has maxProblems already: it checks
// no further (an event's selector can cost a search through every group).
func (v *validator) full() bool { return len(v.errs) >= maxProblems }

// validate checks a decoded scenario whose mechanism defaults are filled
// in (fillDefaults) and whose scenario-level defaults are not yet
// (ApplyDefaults), so that an explicit "speed: 0" is still 0 here.
func validate(s *Scenario, src *source) Errors {
	v := &validator{src: src}
	has := src.has

	v.bounds(s)
	v.name("name", s.Name, "the scenario", true)
	if !has("duration") {
		v.errorf("duration", "duration is required: how long the timeline runs in simulated time, as in duration: 10m")
	}
	if has("sample_every") {
		switch {
		case s.SampleEvery < minInterval:
			v.errorf("sample_every", "%v is too small: want at least %v", s.SampleEvery, minInterval)
		case s.Duration > 0 && s.Duration/s.SampleEvery > maxSamples:
			v.errorf("sample_every", "%v takes more than %d samples over duration %v: want at least %v", s.SampleEvery, maxSamples, s.Duration, s.Duration/maxSamples)
		}
	}

	shape, ok := v.fleet(s)
	v.scale(s)
	v.leader(&s.Leader)
	for i := range s.Timeline {
		if v.full() {
			break
		}
		v.event(s, &s.Timeline[i], shape, ok)
	}
	v.windows(s)
	v.pull(s, shape, ok)
	return v.errs
}

// name checks a name: lower-case letters, digits and dashes.
func (v *validator) name(path, name, what string, required bool) {
	switch {
	case name == "" && required:
		v.errorf(path, "%s needs a name: lower-case letters, digits and dashes, as in wave-deploy", what)
	case name == "":
	case len(name) > maxNameLen || !nameRE.MatchString(name):
		v.errorf(path, "%q is not a valid name: want lower-case letters, digits and single dashes between them (at most %d characters), as in wave-deploy", name, maxNameLen)
	}
}

func (v *validator) intIn(path string, x, lo, hi int) {
	if x < lo || x > hi {
		v.errorf(path, "%d is out of range: want %d to %d", x, lo, hi)
	}
}

func orList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// backoff checks that a cap is at least its base (a valid one: the bounds
// check the base).
func (v *validator) backoff(path string, base, cap Duration) {
	if base > 0 && cap < base {
		v.errorf(join(path, "cap"), "%v is below base %v: the cap must be at least the base", cap, base)
	}
}

// fleet checks the fleet and returns its shape for the selectors; ok is
// false when the groups do not fit (selectors are then not checked).
func (v *validator) fleet(s *Scenario) (fleetShape, bool) {
	f := &s.Fleet
	has := v.src.has
	if !has("fleet.count") {
		v.errorf("fleet.count", "fleet.count is required: the number of workers, 1 to %d", MaxWorkers)
		return fleetShape{}, false
	}
	if f.Ramp > s.Duration && s.Duration > 0 {
		v.errorf("fleet.ramp", "%v is longer than the scenario (duration %v)", f.Ramp, s.Duration)
	}
	v.profile(&f.Worker, "fleet.worker")
	countOK := inRange("fleet.count", float64(f.Count))
	ok := countOK
	seen := map[string]string{}
	for i := range f.Groups {
		g := &f.Groups[i]
		path := index("fleet.groups", i)
		v.name(join(path, "name"), g.Name, "a group", true)
		if g.Name == DefaultGroup {
			v.errorf(join(path, "name"), "%q is the name of the workers no group claims: choose another name", DefaultGroup)
		}
		if first, dup := seen[g.Name]; dup && g.Name != "" {
			v.errorf(join(path, "name"), "the group %q is already defined at %s: group names must be unique", g.Name, first)
		} else {
			seen[g.Name] = fmt.Sprintf("%s (line %d)", path, v.src.pos[join(path, "name")].Line)
		}
		hasCount, hasPercent := has(join(path, "count")), has(join(path, "percent"))
		switch {
		case hasCount == hasPercent:
			v.errorf(path, "a group needs exactly one of count (workers) or percent (of fleet.count)")
			ok = false
		case hasCount && !inRange(join(path, "count"), float64(g.Count)),
			hasPercent && !inRange(join(path, "percent"), g.Percent):
			ok = false // the bounds say why
		}
		v.profile(&g.WorkerProfile, path)
	}
	v.gatewaySize("fleet.gateway_size", f.GatewaySize, f.Count, countOK, "the fleet (fleet.count %d)",
		"leave the key out to give every worker an MQTT session of its own")
	if d := f.GatewayDownlink; d != nil {
		v.downlink(s, d)
	}
	if !ok {
		for i, g := range f.Groups {
			v.gatewaySize(join(index("fleet.groups", i), "gateway_size"), g.GatewaySize, 0, false, "", groupInherits)
		}
		return fleetShape{}, false
	}
	sizes, rest, err := f.groupSizes()
	for i, g := range f.Groups {
		n := 0
		if err == nil {
			n = sizes[i]
		}
		v.gatewaySize(join(index("fleet.groups", i), "gateway_size"), g.GatewaySize, n, err == nil, "the group (%d workers)", groupInherits)
	}
	if err != nil {
		v.errorf("fleet.groups", "%v", err)
		return fleetShape{}, false
	}
	shape := fleetShape{count: f.Count, groups: map[string]int{}}
	for i, g := range f.Groups {
		shape.groups[g.Name] = sizes[i]
		shape.names = append(shape.names, g.Name)
	}
	shape.groups[DefaultGroup] = rest
	shape.names = append(shape.names, DefaultGroup)
	return shape, true
}

// scale checks the sizes a scenario holds at: a range that holds its own
// fleet.count.
func (v *validator) scale(s *Scenario) {
	r := s.Scaling
	if r == nil {
		return
	}
	v.intIn("scale.min", r.Min, 1, MaxWorkers)
	v.intIn("scale.max", r.Max, 1, MaxWorkers)
	n := s.Fleet.Count
	switch {
	case r.Min > r.Max:
		v.errorf("scale.max", "%d is below scale.min (%d): want a range of fleet sizes, min at most max", r.Max, r.Min)
	case n < 1 || n > MaxWorkers:
		// fleet.count's own error says it.
	case n < r.Min:
		v.errorf("scale.min", "%d is above fleet.count (%d): the scenario must hold at its own size: want 1 to %d", r.Min, n, n)
	case n > r.Max:
		v.errorf("scale.max", "%d is below fleet.count (%d): the scenario must hold at its own size: want %d to %d", r.Max, n, n, MaxWorkers)
	}
}

const groupInherits = "leave the key out for fleet.gateway_size"

// gatewaySize checks a gateway_size that is set: at least 1 and, when the
// size of what it divides is known (known), at most that size n. whole
// describes what it divides ("the group (%d workers)"), unset what leaving
// the key out means.
func (v *validator) gatewaySize(path string, x *int, n int, known bool, whole, unset string) {
	switch {
	case x == nil:
	case *x < 1 && known:
		v.errorf(path, "%d is out of range: want 1 to %d workers per gateway; %s", *x, n, unset)
	case *x < 1:
		v.errorf(path, "%d is out of range: want at least 1 worker per gateway; %s", *x, unset)
	case known && *x > n:
		v.errorf(path, "%d is larger than "+whole+": want 1 to %d workers per gateway", *x, n, n)
	}
}

// profile checks a worker profile's set fields.
func (v *validator) profile(p *WorkerProfile, path string) {
	if m := p.Mailbox; m != nil {
		mp := join(path, "mailbox")
		if m.Policy == mailbox.Block {
			v.errorf(join(mp, "policy"), "a worker's mailbox cannot be block (a worker answers at once, it never waits for room): want reject, drop-oldest, drop-newest, coalesce or unbounded")
		}
		if v.src.has(join(mp, "block_timeout")) {
			v.errorf(join(mp, "block_timeout"), "a worker's mailbox has no block_timeout (it applies to policy block, which workers do not have)")
		}
		if v.src.has(join(mp, "retry_after")) {
			v.errorf(join(mp, "retry_after"), "a worker's mailbox has no retry_after (a worker's \"full\" goes to the leader's relay, whose AIMD limit paces the retries)")
		}
	}
	if p.Heartbeat != nil && *p.Heartbeat != 0 && *p.Heartbeat < minInterval {
		v.errorf(join(path, "heartbeat"), "%v is too small: want 0 (off) or at least %v", *p.Heartbeat, minInterval)
	}
	if p.Telemetry != nil && *p.Telemetry != 0 && *p.Telemetry < minInterval {
		v.errorf(join(path, "telemetry"), "%v is too small: want 0 (off) or at least %v", *p.Telemetry, minInterval)
	}
	if r := p.Reconnect; r != nil {
		v.backoff(join(path, "reconnect"), r.Base, r.Cap)
	}
	if k := p.KeepAlive; k != nil {
		kp := join(path, "keepalive")
		switch {
		case *k < Duration(time.Second) || *k > maxKeepAlive:
			v.errorf(kp, "%v is out of range: want 1s to %v", *k, maxKeepAlive)
		case *k%Duration(time.Second) != 0:
			v.errorf(kp, "%v: MQTT counts the keepalive in whole seconds: want %v or %v", *k, k.D().Truncate(time.Second), k.D().Truncate(time.Second)+time.Second)
		}
	}
	if ver := p.Version; ver != nil {
		v.version(join(path, "version"), *ver)
	}
	if o := p.Offline; o != nil {
		op := join(path, "offline")
		if !v.src.has(join(op, "every")) {
			v.errorf(join(op, "every"), "every is required: the mean time between a worker's offline periods, as in every: 10m")
		}
		if !v.src.has(join(op, "for")) {
			v.errorf(join(op, "for"), "for is required: how long a worker stays away, as in for: 2m or for: exponential(2m)")
		} else if o.For.Average() <= 0 {
			v.errorf(join(op, "for"), "%v: an offline period must last: want a distribution with a mean above 0", o.For)
		}
	}
}

// version checks a version string by the rule the leader and its workers
// share (wire.ValidVersion): a version they would refuse is refused at
// load, not dead-lettered mid-run.
func (v *validator) version(path, ver string) {
	if err := wire.ValidVersion(ver); err != nil {
		v.errorf(path, "%v", err)
	}
}

// leader checks the rules between the leader's settings: the relay's
// limit and its backoff.
func (v *validator) leader(l *LeaderSpec) {
	r := &l.Relay
	lim := &r.Limit
	switch {
	case !inRange("leader.relay.limit.min", float64(lim.Min)):
		// Its bound says it; max and initial are measured from it.
	case lim.Max < lim.Min || lim.Max > maxLimit:
		v.errorf("leader.relay.limit.max", "%d is out of range: want min (%d) to %d", lim.Max, lim.Min, maxLimit)
	case lim.Initial < lim.Min || lim.Initial > lim.Max:
		v.errorf("leader.relay.limit.initial", "%d is out of range: want from min (%d) to max (%d)", lim.Initial, lim.Min, lim.Max)
	}
	v.backoff("leader.relay.backoff", r.Backoff.Base, r.Backoff.Cap)
}

// actions are the event's action keys, in the order Event declares them.
var actions = func() []string {
	var out []string
	for _, k := range fieldsOf(reflect.TypeFor[Event]()).order {
		if k != "at" && k != "name" {
			out = append(out, k)
		}
	}
	return out
}()

// event checks one timeline event. shapeOK is false when the fleet is not
// valid, and selectors cannot be checked against it.
func (v *validator) event(s *Scenario, ev *Event, shape fleetShape, shapeOK bool) {
	path := ev.path
	var set []string
	rv := reflect.ValueOf(ev).Elem()
	for _, k := range actions {
		if !rv.FieldByIndex(fieldsOf(rv.Type()).byName[k]).IsNil() {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 0:
		v.errorf(path, "an event needs one action: %s", orList(actions))
	case 1:
	default:
		v.errorf(path, "an event has one action, this one has %s: write one event per action (two events may have the same at)", strings.Join(set, " and "))
	}
	if !v.src.has(join(path, "at")) {
		v.errorf(join(path, "at"), "at is required: when the event fires, in simulated time since the start, as in at: 30s")
	} else if ev.At > s.Duration && s.Duration > 0 {
		v.errorf(join(path, "at"), "%v is after the end of the timeline (duration %v)", ev.At, s.Duration)
	}
	sel := func(action string, sel *Selector) {
		if !shapeOK {
			return
		}
		if msg := sel.check(shape); msg != "" {
			v.errorf(join(path, action+".workers"), "%s", msg)
		}
	}
	for _, t := range []struct {
		action string
		t      *Targets
	}{{"partition", ev.Partition}, {"heal", ev.Heal}, {"partition_gateways", ev.PartitionGateways}, {"heal_gateways", ev.HealGateways}, {"disconnect", ev.Disconnect}, {"reconnect", ev.Reconnect}, {"crash", ev.Crash}, {"reboot", ev.Reboot}, {"replay_dead_letters", ev.ReplayDeadLetters}} {
		if t.t != nil {
			sel(t.action, &t.t.Workers)
		}
	}
	if d := ev.Deploy; d != nil {
		dp := join(path, "deploy")
		v.version(join(dp, "version"), d.Version)
		sel("deploy", &d.Workers)
		if d.Via != nil {
			if msg := d.Via.check(shape); shapeOK && msg != "" {
				v.errorf(join(dp, "via"), "%s", msg)
			}
		}
	}
	if h := ev.HeartbeatStorm; h != nil {
		hp := join(path, "heartbeat_storm")
		if !v.src.has(join(hp, "interval")) {
			v.errorf(join(hp, "interval"), "interval is required: how often the workers heartbeat during the storm, as in interval: 1s")
		}
		if !v.src.has(join(hp, "for")) {
			v.errorf(join(hp, "for"), "for is required: how long the storm lasts, as in for: 30s")
		}
		sel("heartbeat_storm", &h.Workers)
	}
	if c := ev.SetCapacity; c != nil {
		if !v.src.has(join(path, "set_capacity.capacity")) {
			v.errorf(join(path, "set_capacity.capacity"), "capacity is required: the workers' new mailbox capacity, at least 1")
		}
		sel("set_capacity", &c.Workers)
	}
	if l := ev.SetLeader; l != nil {
		lp := join(path, "set_leader")
		if l.Capacity == nil && l.Service == nil {
			v.errorf(lp, "set_leader needs capacity, service or both")
		}
	}
	if j := ev.Jobs; j != nil {
		v.jobsEvent(s, j, path)
	}
	if p := ev.Poison; p != nil {
		sel("poison", &p.Workers)
	}
}

// downlink checks fleet.gateway_downlink: both keys, in range, and
// gateways for it to belong to.
func (v *validator) downlink(s *Scenario, d *DownlinkSpec) {
	const path = "fleet.gateway_downlink"
	if !v.src.has(join(path, "capacity")) {
		v.errorf(join(path, "capacity"), "capacity is required: the most commands a gateway holds for its radio, as in capacity: 8")
	}
	if !v.src.has(join(path, "airtime")) {
		v.errorf(join(path, "airtime"), "airtime is required: the time one command takes on the air, as in airtime: 20ms")
	}
	gateways := s.Fleet.GatewaySize != nil
	for _, g := range s.Fleet.Groups {
		gateways = gateways || g.GatewaySize != nil
	}
	if !gateways {
		v.errorf(path, "no worker sits behind a gateway: set fleet.gateway_size (or a group's gateway_size, or sim run --gateway-size), or leave fleet.gateway_downlink out")
	}
}
