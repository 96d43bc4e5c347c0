package report

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// leaf is one number of a Result, named as the expectations name it.
type leaf struct {
	// Path is the expression path ("leader.mailbox.max_depth",
	// `workers.at_version["2.1.0"]`, "deploys[0].duration").
	Path string
	// Pattern is Path with every index or key as [*]: the key of the rule
	// table.
	Pattern string
	Value   float64
	// Timing is set for result.Seconds values.
	Timing bool
}

var secondsType = reflect.TypeFor[result.Seconds]()

// leaves lists every number of res in field order (map keys sorted), named
// by the expr tags: the names a user writes in expect: and reads in a
// baseline file.
func leaves(res *result.Result) []leaf {
	var out []leaf
	walk(reflect.ValueOf(res).Elem(), "", "", &out)
	return out
}

func walk(v reflect.Value, path, pattern string, out *[]leaf) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			tag := t.Field(i).Tag.Get("expr")
			if tag == "" || tag == "-" {
				continue
			}
			walk(v.Field(i), dot(path, tag), dot(pattern, tag), out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
		for _, k := range keys {
			walk(v.MapIndex(k), path+"["+strconv.Quote(k.String())+"]", pattern+"[*]", out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), pattern+"[*]", out)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*out = append(*out, leaf{Path: path, Pattern: pattern, Value: float64(v.Int())})
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		*out = append(*out, leaf{Path: path, Pattern: pattern, Value: float64(v.Uint())})
	case reflect.Float32, reflect.Float64:
		*out = append(*out, leaf{Path: path, Pattern: pattern, Value: v.Float(), Timing: v.Type() == secondsType})
	}
	// Strings (a mailbox's policy) and bools (run.kept_up) are settings or
	// conditions, not measurements: a baseline holds numbers.
}

func dot(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// A scale is a kind of metric's noise: the band a metric of it gets when
// its noise was not measured (a baseline captured from one run), and the
// floors of a band measured from several runs (band.go). docs/REPORTS.md
// explains the choice.
type scale struct {
	Name string
	// Factor and Abs are the default band.
	Factor, Abs float64
	// Slack is the absolute noise a measured band always allows, in the
	// metric's unit: a count's ±few, a timer's resolution. It keeps small
	// counts from reading as large ratios (1 against 3 is not a 3×
	// change); a measured band's abs is Slack × its factor.
	Slack float64
	// MinFactor is the narrowest measured band: runs that happened to
	// agree do not make a band of nothing.
	MinFactor float64
}

var (
	// Counts that load decides: the scheduler and the broker decide how
	// many asks meet a full mailbox. Unmeasured, 3× either way: on a
	// shared 2-core machine a herd's rejections were seen to differ 2.5×
	// between two runs, while a mechanism switched off (an unbounded
	// mailbox, a static limit, append instead of overwrite) moves them
	// tenfold or more, or to nothing.
	counts = scale{Name: "count", Factor: 3, Abs: 5, Slack: 3, MinFactor: 1.25}
	// Small numbers (AIMD limits, attempts): a step of 1 is a large ratio.
	smalls = scale{Name: "small number", Factor: 2, Abs: 2, Slack: 1, MinFactor: 1.25}
	// Ratios in [0, 1].
	ratios = scale{Name: "ratio", Factor: 1.25, Abs: 0.05, Slack: 0.02, MinFactor: 1.05}
	// Simulated seconds: a loaded machine that still keeps up (its lag
	// under a threshold of a second or more) delays a timer by tens of
	// milliseconds of wall time, a few tenths of a simulated second at the
	// speeds the scenarios run at; a slower machine stretches waits alike.
	timings = scale{Name: "seconds", Factor: 3, Abs: 0.5, Slack: 0.25, MinFactor: 1.5}
)

var scales = []*scale{&counts, &smalls, &ratios, &timings}

// spec is how Capture compares a metric: its rule's kind, the scale of a
// band or a timing, and its better direction.
type spec struct {
	Kind   RuleKind
	Scale  *scale // nil for Exact
	Better Direction
}

// rule is s's rule with the default band of its scale.
func (s spec) rule() Rule {
	r := Rule{Kind: s.Kind, Better: s.Better}
	if s.Scale != nil {
		r.Factor, r.Abs = s.Scale.Factor, s.Scale.Abs
	}
	return r
}

func exact(d Direction) spec    { return spec{Kind: Exact, Better: d} }
func count(d Direction) spec    { return spec{Kind: Band, Scale: &counts, Better: d} }
func smallNum(d Direction) spec { return spec{Kind: Band, Scale: &smalls, Better: d} }
func fraction(d Direction) spec { return spec{Kind: Band, Scale: &ratios, Better: d} }
func timing(d Direction) spec   { return spec{Kind: Timing, Scale: &timings, Better: d} }

// rules is how Capture compares each metric, by pattern. Exact where the
// scenario's timeline decides the number (which version the workers end
// at, what must be zero); a band where load decides it; timings in a band
// of seconds. A metric that is not here and not in skipped gets count(None)
// or timing(None) (the test keeps this table complete).
var rules = map[string]spec{
	"lost": exact(Lower),

	"run.sim_seconds": timing(Lower),

	"fleet.online":        exact(Higher),
	"fleet.offline":       exact(Lower),
	"fleet.leader_online": exact(Higher),

	"workers.at_version[*]":    exact(None),
	"workers.applied":          count(None),
	"workers.applied_twice":    exact(Lower),
	"workers.duplicates":       count(None),
	"workers.stale":            count(None),
	"workers.expired":          count(Lower),
	"workers.acked_ok":         count(None),
	"workers.acked_full":       count(None),
	"workers.max_attempt":      smallNum(Lower),
	"workers.connects":         count(None),
	"workers.connect_attempts": count(None),
	"workers.reconnects":       count(None),
	"workers.connections_lost": count(None),
	"workers.malformed":        exact(None),
	"workers.crashes":          count(None),
	"workers.refused":          count(None),
	"workers.gateway_dropped":  count(Lower),
	"workers.sync_sent":        count(None),
	"workers.sync_ok":          count(None),
	"workers.sync_full":        count(None),

	"workers.mailbox.offered":   count(None),
	"workers.mailbox.taken":     count(None),
	"workers.mailbox.dropped":   count(Lower),
	"workers.mailbox.rejected":  count(None),
	"workers.mailbox.depth":     count(Lower),
	"workers.mailbox.max_depth": count(Lower),
	"workers.mailbox.wait.p50":  timing(Lower),
	"workers.mailbox.wait.p99":  timing(Lower),

	"leader.mailbox.offered":    count(None),
	"leader.mailbox.taken":      count(None),
	"leader.mailbox.dropped":    count(Lower),
	"leader.mailbox.rejected":   count(None),
	"leader.mailbox.depth":      count(Lower),
	"leader.mailbox.max_depth":  count(Lower),
	"leader.mailbox.wait.p50":   timing(Lower),
	"leader.mailbox.wait.p99":   timing(Lower),
	"leader.requests_received":  count(None),
	"leader.requests_served":    count(None),
	"leader.telemetry_received": count(None),
	"leader.telemetry_served":   count(None),
	"leader.answered_full":      count(None),
	"leader.malformed":          exact(None),
	"leader.reconnects":         count(Lower),
	"leader.asks_sent":          count(None),

	"heartbeats.sent":            count(None),
	"heartbeats.stored":          count(None),
	"heartbeats.received":        count(None),
	"heartbeats.processed":       count(None),
	"heartbeats.coalesced":       count(None),
	"heartbeats.coalesced_ratio": fraction(Higher),
	"heartbeats.max_queued":      count(Lower),
	"heartbeats.age.p50":         timing(Lower),
	"heartbeats.age.p99":         timing(Lower),
	"heartbeats.rounds":          count(None),

	"relay.limit.min":       smallNum(None),
	"relay.limit.max":       smallNum(None),
	"relay.limit.final":     smallNum(None),
	"relay.limit.decreases": count(None),
	"relay.delivered":       count(None),
	"relay.backpressure":    count(None),
	"relay.retries":         count(None),
	"relay.errors":          count(Lower),
	"relay.dead_lettered":   exact(None),
	"relay.offline_skips":   count(None),

	"outbox.enqueued":      count(None),
	"outbox.acked":         count(None),
	"outbox.overwritten":   count(None),
	"outbox.stale":         count(None),
	"outbox.expired":       count(Lower),
	"outbox.dead_lettered": exact(None),
	"outbox.depth":         count(Lower),
	"outbox.dead_letters":  exact(None),
	"outbox.max_depth":     count(Lower),
	"outbox.oldest_max":    timing(Lower),

	"commands.sent":   count(None),
	"commands.queued": exact(Lower),
	"commands.lost":   exact(Lower),

	"commands.dropped_after_ack": count(Lower),
	"commands.lost_in_reboot":    count(Lower),

	"telemetry.generated":      count(None),
	"telemetry.direct":         count(None),
	"telemetry.stored":         count(None),
	"telemetry.forwarded":      count(None),
	"telemetry.rejected":       count(None),
	"telemetry.dropped":        count(Lower),
	"telemetry.lost_in_reboot": count(Lower),
	"telemetry.lost":           exact(Lower),

	"deploys[*].delivered": exact(Higher),
	"deploys[*].rejected":  exact(None),
	"deploys[*].early":     exact(Lower),
	"deploys[*].duration":  timing(Lower),

	"windows[*].leader.mailbox.offered":   count(None),
	"windows[*].leader.mailbox.taken":     count(None),
	"windows[*].leader.mailbox.dropped":   count(Lower),
	"windows[*].leader.mailbox.rejected":  count(None),
	"windows[*].leader.mailbox.depth":     count(Lower),
	"windows[*].leader.mailbox.max_depth": count(Lower),
	"windows[*].leader.mailbox.wait.p50":  timing(Lower),
	"windows[*].leader.mailbox.wait.p99":  timing(Lower),
	"windows[*].leader.requests_served":   count(None),
	"windows[*].leader.answered_full":     count(None),
	"windows[*].relay.delivered":          count(None),
	"windows[*].relay.backpressure":       count(None),
	"windows[*].relay.retries":            count(None),
	"windows[*].relay.errors":             count(Lower),
	"windows[*].relay.offline_skips":      count(None),
	"windows[*].workers.connects":         count(None),
	"windows[*].workers.sync_sent":        count(None),
	"windows[*].workers.sync_ok":          count(None),
	"windows[*].workers.sync_full":        count(None),
	"windows[*].workers.acked_full":       count(None),
}

// p90 is why a baseline leaves the 90th percentiles out: they are for a
// person reading a run's distribution (the terminal's end summary), and
// the p50 and p99 beside them already gate its centre and its tail.
const p90 = "p50 and p99 gate the centre and the tail; p90 is for reading"

// input is the reason a number that only echoes the scenario is left out.
const input = "the scenario's input, not a measurement"

// skipped are the numbers a baseline leaves out, and why.
var skipped = map[string]string{
	"run.seed":                           input,
	"run.speed":                          input,
	"run.events":                         input + " (the timeline's events, all of which fire in a run that completes)",
	"run.leader_restarts":                input + " (the timeline's leader crashes)",
	"fleet.count":                        input + " (a run at another size is not compared at all)",
	"fleet.groups[*]":                    input,
	"fleet.gateways":                     input + " (the layout fleet.gateway_size gives)",
	"fleet.gateway_size":                 input,
	"workers.mailbox.capacity":           input,
	"leader.mailbox.capacity":            input,
	"relay.partitions":                   input,
	"relay.limit.initial":                input,
	"commands.poisoned":                  input + " (the timeline's poison commands; relay.dead_lettered measures where they went)",
	"deploys[*].targets":                 input + " (the workers the deploy's selector names)",
	"events[*].at":                       input + " (when the timeline's event was due)",
	"events[*].workers":                  input + " (the workers the event's selector names)",
	"windows[*].from":                    input + " (the window's edge)",
	"windows[*].to":                      input + " (the window's edge)",
	"windows[*].leader.mailbox.capacity": input,

	"telemetry.pending":     "asks in flight when the workers stop: a race, not a loss (telemetry.lost and the expectations judge the balance)",
	"workers.sync_timeouts": "timeouts: 0 or hundreds, as a crash or a partition happens to land on asks in flight",
	"leader.asks_timed_out": "timeouts: 0 or hundreds, as a crash or a partition happens to land on asks in flight",
	"run.wall_seconds":      "wall time: the machine's speed, not the system's",
	"run.lag_max":           "the runner's lag: the machine's load, not the system's",
	"run.lag_p99":           "the runner's lag: the machine's load, not the system's",
	"run.service_lag_max":   "the service loops' lag: the machine's load, not the system's",
	"run.service_lag_p99":   "the service loops' lag: the machine's load, not the system's",
	"run.delivery_lag_max":  "the transport's lag: the machine's load, not the system's",
	"run.delivery_lag_p99":  "the transport's lag: the machine's load, not the system's",
	"run.lag_threshold":     "the run's setting, not a measurement",
	"leader.ask_rtt.p50":    "a round trip through the broker, whose wall-clock transit the speed scales: the machine's load, not the system's",
	"leader.ask_rtt.p99":    "a round trip through the broker, whose wall-clock transit the speed scales: the machine's load, not the system's",
	"leader.ask_rtt.max":    "a round trip through the broker, whose wall-clock transit the speed scales: the machine's load, not the system's",
	"leader.ask_rtt.mean":   "a round trip through the broker, whose wall-clock transit the speed scales: the machine's load, not the system's",

	"workers.mailbox.wait.p90":  p90,
	"leader.mailbox.wait.p90":   p90,
	"heartbeats.age.p90":        p90,
	"leader.ask_rtt.p90":        "a round trip through the broker, whose wall-clock transit the speed scales: the machine's load, not the system's",
	"workers.mailbox.wait.max":  "one outlier; p99 carries the tail",
	"workers.mailbox.wait.mean": "p50 carries the centre",
	"leader.mailbox.wait.max":   "one outlier; p99 carries the tail",
	"leader.mailbox.wait.mean":  "p50 carries the centre",
	"heartbeats.age.max":        "one outlier; p99 carries the tail",
	"heartbeats.age.mean":       "p50 carries the centre",

	"windows[*].leader.mailbox.wait.p90":  p90,
	"windows[*].leader.mailbox.wait.max":  "one outlier; p99 carries the tail",
	"windows[*].leader.mailbox.wait.mean": "p50 carries the centre",
}

// specFor is how Capture compares l; false when a baseline leaves it out.
func specFor(l leaf) (spec, bool) {
	if _, skip := skipped[l.Pattern]; skip {
		return spec{}, false
	}
	if s, ok := rules[l.Pattern]; ok {
		return s, true
	}
	if l.Timing {
		return timing(None), true
	}
	return count(None), true
}
