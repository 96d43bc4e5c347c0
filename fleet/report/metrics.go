package report

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/fleet/scenario"
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
	// Timing is set for scenario.Seconds values.
	Timing bool
}

var secondsType = reflect.TypeFor[scenario.Seconds]()

// leaves lists every number of res in field order (map keys sorted), named
// by the expr tags: the names a user writes in expect: and reads in a
// baseline file.
func leaves(res *scenario.Result) []leaf {
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

// The default rules' parameters (docs/REPORTS.md explains the choice).
const (
	// Load-dependent counts: the scheduler and the broker decide how many
	// asks meet a full mailbox, so they move from run to run; a mechanism
	// switched off moves them tenfold or more. On a shared 2-core CI
	// machine a herd's rejection count was seen to vary 2.5× between two
	// runs of one scenario, so the band is wide: ±200% (up to 3×) or ±25,
	// whichever is wider. Expectations guard the mechanisms; a baseline
	// catches what moves by an order of magnitude.
	countRel = 2
	countAbs = 25
	// AIMD limits are small numbers: ±50% of 4 is noise.
	limitAbs = 2
	// Ratios in [0, 1].
	ratioRel = 0.1
	ratioAbs = 0.05
	// Timings: a factor, because a slower machine stretches every wait
	// alike, and slack, because a wait of 2 ms against 1 ms is noise.
	timingFactor = 3
	timingSlack  = 0.5
)

func exact(d Direction) Rule { return Rule{Kind: Exact, Better: d} }
func count(d Direction) Rule { return Rule{Kind: Tolerance, Rel: countRel, Abs: countAbs, Better: d} }
func timing(d Direction) Rule {
	return Rule{Kind: Timing, Factor: timingFactor, Abs: timingSlack, Better: d}
}

// rules is the rule Capture gives each metric, by pattern. Exact where the
// scenario's timeline decides the number (how many workers, which version
// they end at, what must be zero); a tolerance where load decides it;
// timings within a factor. A metric that is not here and not in skipped
// gets count(None) or timing(None) (the test keeps this table complete).
var rules = map[string]Rule{
	"lost": exact(Lower),

	"run.sim_seconds":     timing(Lower),
	"run.events":          exact(None),
	"run.leader_restarts": exact(None),

	"fleet.count":         exact(None),
	"fleet.groups[*]":     exact(None),
	"fleet.online":        exact(Higher),
	"fleet.offline":       exact(Lower),
	"fleet.leader_online": exact(Higher),

	"workers.at_version[*]":    exact(None),
	"workers.applied":          count(None),
	"workers.applied_twice":    exact(Lower),
	"workers.duplicates":       count(None),
	"workers.expired":          count(Lower),
	"workers.acked_ok":         count(None),
	"workers.acked_full":       count(None),
	"workers.max_attempt":      {Kind: Tolerance, Rel: countRel, Abs: limitAbs, Better: Lower},
	"workers.connects":         count(None),
	"workers.connect_attempts": count(None),
	"workers.reconnects":       count(None),
	"workers.connections_lost": count(None),
	"workers.malformed":        exact(None),
	"workers.crashes":          count(None),
	"workers.refused":          count(None),
	"workers.sync_sent":        count(None),
	"workers.sync_ok":          count(None),
	"workers.sync_full":        count(None),

	"workers.mailbox.capacity":  exact(None),
	"workers.mailbox.offered":   count(None),
	"workers.mailbox.taken":     count(None),
	"workers.mailbox.dropped":   count(Lower),
	"workers.mailbox.rejected":  count(None),
	"workers.mailbox.depth":     count(Lower),
	"workers.mailbox.max_depth": count(Lower),
	"workers.mailbox.wait.p50":  timing(Lower),
	"workers.mailbox.wait.p99":  timing(Lower),

	"leader.mailbox.capacity":   exact(None),
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
	"heartbeats.coalesced_ratio": {Kind: Tolerance, Rel: ratioRel, Abs: ratioAbs, Better: Higher},
	"heartbeats.max_queued":      count(Lower),
	"heartbeats.age.p50":         timing(Lower),
	"heartbeats.age.p99":         timing(Lower),
	"heartbeats.rounds":          count(None),

	"relay.partitions":      exact(None),
	"relay.limit.initial":   exact(None),
	"relay.limit.min":       {Kind: Tolerance, Rel: countRel, Abs: limitAbs},
	"relay.limit.max":       {Kind: Tolerance, Rel: countRel, Abs: limitAbs},
	"relay.limit.final":     {Kind: Tolerance, Rel: countRel, Abs: limitAbs},
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

	"commands.sent":     count(None),
	"commands.poisoned": exact(None),
	"commands.queued":   exact(Lower),
	"commands.lost":     exact(Lower),

	"telemetry.generated": count(None),
	"telemetry.direct":    count(None),
	"telemetry.stored":    count(None),
	"telemetry.forwarded": count(None),
	"telemetry.rejected":  count(None),
	"telemetry.dropped":   count(Lower),
	"telemetry.lost":      exact(Lower),

	"deploys[*].targets":   exact(None),
	"deploys[*].delivered": exact(Higher),
	"deploys[*].rejected":  exact(None),
	"deploys[*].duration":  timing(Lower),
}

// skipped are the numbers a baseline leaves out, and why.
var skipped = map[string]string{
	"run.seed":              "the run's input, not a measurement",
	"telemetry.pending":     "asks in flight when the workers stop: a race, not a loss (telemetry.lost and the expectations judge the balance)",
	"workers.sync_timeouts": "timeouts: 0 or hundreds, as a crash or a partition happens to land on asks in flight",
	"leader.asks_timed_out": "timeouts: 0 or hundreds, as a crash or a partition happens to land on asks in flight",
	"run.speed":             "the run's input, not a measurement",
	"run.wall_seconds":      "wall time: the machine's speed, not the system's",
	"run.lag_max":           "the runner's lag: the machine's load, not the system's",
	"run.lag_p99":           "the runner's lag: the machine's load, not the system's",
	"run.service_lag_max":   "the service loops' lag: the machine's load, not the system's",
	"run.service_lag_p99":   "the service loops' lag: the machine's load, not the system's",
	"run.delivery_lag_max":  "the transport's lag: the machine's load, not the system's",
	"run.delivery_lag_p99":  "the transport's lag: the machine's load, not the system's",
	"run.lag_threshold":     "the run's setting, not a measurement",
	"leader.ask_rtt.p50":    "wall-clock seconds: the machine's load, not the system's",
	"leader.ask_rtt.p99":    "wall-clock seconds: the machine's load, not the system's",
	"leader.ask_rtt.max":    "wall-clock seconds: the machine's load, not the system's",
	"leader.ask_rtt.mean":   "wall-clock seconds: the machine's load, not the system's",

	"workers.mailbox.wait.max":  "one outlier; p99 carries the tail",
	"workers.mailbox.wait.mean": "p50 carries the centre",
	"leader.mailbox.wait.max":   "one outlier; p99 carries the tail",
	"leader.mailbox.wait.mean":  "p50 carries the centre",
	"heartbeats.age.max":        "one outlier; p99 carries the tail",
	"heartbeats.age.mean":       "p50 carries the centre",
}

// ruleFor is the rule Capture gives l.
func ruleFor(l leaf) (Rule, bool) {
	if _, skip := skipped[l.Pattern]; skip {
		return Rule{}, false
	}
	if r, ok := rules[l.Pattern]; ok {
		return r, true
	}
	if l.Timing {
		return timing(None), true
	}
	return count(None), true
}
