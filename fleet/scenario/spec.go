package scenario

import (
	"fmt"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// Scenario is one scenario file, decoded. Every duration in it is simulated
// time. Fields left out take the defaults documented in docs/SCENARIOS.md;
// a Scenario from Load or Parse has them filled in and has been validated.
type Scenario struct {
	// Name identifies the scenario in reports and baselines. Required:
	// lower case letters, digits and dashes.
	Name string `yaml:"name"`
	// Description says what the scenario demonstrates (one paragraph; the
	// first sentence is what `sim list` shows).
	Description string `yaml:"description"`
	// Seed drives every random choice of the run. Default 1.
	Seed uint64 `yaml:"seed"`
	// Speed is simulated seconds per wall second. Default 1.
	Speed float64 `yaml:"speed"`
	// Duration is how long the timeline runs, in simulated time. Required.
	Duration Duration `yaml:"duration"`
	// Drain bounds the quiet period after Duration in which the runner
	// stops the workers' telemetry (the load is over), heals every worker
	// and waits for the outboxes to empty before it counts.
	// Default 1m (simulated).
	Drain Duration `yaml:"drain"`
	// SampleEvery is the simulated interval between the time series'
	// samples (charts, dashboard). Default: Duration / 300, at least 100ms.
	SampleEvery Duration `yaml:"sample_every"`
	// Scale says what `--workers` (Scenario.Scale) may do to the
	// scenario: the fleet sizes its expectations hold at, and whether the
	// leader grows with the fleet. nil: any size, the leader as written.
	Scaling *ScaleSpec `yaml:"scale"`

	Fleet    Fleet      `yaml:"fleet"`
	Leader   LeaderSpec `yaml:"leader"`
	Timeline []Event    `yaml:"timeline"`
	// Windows are named phases of the run that expectations can read
	// metrics over: windows["herd"].leader.mailbox.wait.p99.
	Windows []Window     `yaml:"windows"`
	Expect  []Expect     `yaml:"expect"`
	Sweep   []SweepParam `yaml:"-"` // decoded from the "sweep" mapping, in file order
	// Compare are expectations over a sweep's variants together, judged
	// once every variant has run: variant["aimd"].relay.backpressure.
	Compare []Expect `yaml:"compare"`

	// File is the path it was loaded from ("" when parsed from memory).
	File string `yaml:"-"`
	// Warnings are the problems that do not stop the file from loading,
	// each placed as a load error is: an expectation that reads only
	// counts this scenario cannot produce (it cannot depend on the run).
	// With a sweep, those of every variant.
	Warnings Errors `yaml:"-"`

	// checks are the Expect items compiled at load time, by index;
	// comparisons the Compare items.
	checks      []*expect.Check `yaml:"-"`
	comparisons []*expect.Check `yaml:"-"`
	// src locates the file's values, for the errors found after loading
	// (Variants, Scale).
	src *source `yaml:"-"`
	// leaderGrowth is the factor Scale grew a proportional leader by (0:
	// not grown), for the leader values a sweep sets afterwards.
	leaderGrowth float64 `yaml:"-"`
}

// ScaleSpec is how a scenario follows the fleet's size (Scenario.Scale).
type ScaleSpec struct {
	// Min and Max are the fleet sizes the scenario's expectations hold
	// at, inclusive: Scale refuses a size outside them, and fleet.count
	// must lie inside. Default 1 and MaxWorkers.
	Min int `yaml:"min"`
	Max int `yaml:"max"`
	// Leader is LeaderFixed (the default: the leader stays as written
	// whatever the fleet's size) or LeaderProportional (Scale multiplies
	// the leader's mailbox capacity by the fleet's growth and divides its
	// service time by it, set_leader's too: the load stays the same
	// multiple of what the leader serves).
	Leader ScaleLeader `yaml:"leader"`
}

// ScaleLeader is what Scale does to the leader (ScaleSpec.Leader).
type ScaleLeader string

// The values of ScaleSpec.Leader.
const (
	LeaderFixed        ScaleLeader = "fixed"
	LeaderProportional ScaleLeader = "proportional"
)

// supports reports whether the scenario's expectations hold at a fleet
// of n workers (a Scenario built in code without a range holds at any).
func (r *ScaleSpec) supports(n int) bool {
	return r == nil || (r.Min == 0 || n >= r.Min) && (r.Max == 0 || n <= r.Max)
}

// String says the range in words: "250 to 5000 workers", "250 workers or
// more".
func (r *ScaleSpec) String() string {
	switch {
	case r.Max <= 0 || r.Max >= MaxWorkers:
		return fmt.Sprintf("%d workers or more", r.Min)
	case r.Min <= 1:
		return fmt.Sprintf("%d workers or fewer", r.Max)
	}
	return fmt.Sprintf("%d to %d workers", r.Min, r.Max)
}

// Fleet is the simulated workers: Count of them, split into groups. Workers
// not claimed by a group form the group "default". Ids are w-00000, w-00001,
// … in group order.
type Fleet struct {
	// Count is the number of workers. Required, at least 1.
	Count int `yaml:"count"`
	// Ramp spaces the workers' first connects. Default 0: all at once.
	Ramp Duration `yaml:"ramp"`
	// GatewaySize, if set, puts the workers behind gateways: each group's
	// workers in turn fill gateways of this many (the last one of a group
	// possibly fewer), each gateway one MQTT session carrying its workers
	// as devices. A group's own GatewaySize replaces it. nil (the default):
	// every worker has a session of its own. 1 to Count.
	GatewaySize *int `yaml:"gateway_size"`
	// GatewayDownlink, if set, gives every gateway a radio towards its
	// devices that forwards commands one at a time and answers "full" for
	// a device when its queue is full. nil (the default): a gateway
	// forwards every message at once. Needs gateways.
	GatewayDownlink *DownlinkSpec `yaml:"gateway_downlink"`
	// Worker is the profile every group starts from.
	Worker WorkerProfile `yaml:"worker"`
	// Groups carve out workers with their own profile, in order.
	Groups []Group `yaml:"groups"`
}

// Group is a named share of the fleet with its own profile. Its fields
// override the fleet's Worker profile.
type Group struct {
	// Name is used by selectors ("group:NAME"). Required, unique.
	Name string `yaml:"name"`
	// Count is the group's size; Percent its share of Fleet.Count (rounded
	// down, at least 1). Exactly one is required.
	Count   int     `yaml:"count"`
	Percent float64 `yaml:"percent"`
	// GatewaySize replaces the fleet's GatewaySize for this group's
	// workers; nil inherits it. 1 to the group's size.
	GatewaySize *int `yaml:"gateway_size"`

	WorkerProfile `yaml:",inline"`
}

// WorkerProfile configures a worker. A nil field inherits (from the fleet's
// profile, then the package defaults).
type WorkerProfile struct {
	// Mailbox of commands. Default capacity 16, policy reject.
	Mailbox *MailboxSpec `yaml:"mailbox"`
	// Service time per command, in dist notation ("2ms",
	// "lognormal(5ms, 0.5)"). Default 1ms.
	Service *dist.Dist `yaml:"service"`
	// RTT is the network round trip of a command to this worker: its
	// answer leaves this long after the command came. Default 0.
	RTT *dist.Dist `yaml:"rtt"`
	// Loss is the share of the messages the worker's link loses, each
	// way (0 to 1). Default 0.
	Loss *float64 `yaml:"loss"`
	// Heartbeat interval; 0 turns heartbeats off. Default 0.
	Heartbeat *Duration `yaml:"heartbeat"`
	// Telemetry interval; 0 turns telemetry off. Default 0.
	Telemetry *Duration `yaml:"telemetry"`
	// Reconnect policy after a lost connection.
	Reconnect *ReconnectSpec `yaml:"reconnect"`
	// KeepAlive is the MQTT keepalive, in wall time (the broker enforces
	// it). Default 5s.
	KeepAlive *Duration `yaml:"keepalive"`
	// AskTimeout bounds the wait for the leader's answer. Default 5s.
	AskTimeout *Duration `yaml:"ask_timeout"`
	// Version the worker starts at. Default "1.0.0".
	Version *string `yaml:"version"`
	// LocalOutbox bounds what a worker keeps while the leader cannot take
	// it. Default 1000.
	LocalOutbox *int `yaml:"local_outbox"`
	// Offline, if set, takes workers away at random: each worker goes
	// offline on average every Every, for a duration drawn from For.
	Offline *OfflineProfile `yaml:"offline"`
	// Delivery is DeliveryPush (the default: jobs are assigned by the
	// leader's relay) or DeliveryPull (the worker asks the leader's job
	// queue for its next job).
	Delivery *Delivery `yaml:"delivery"`
	// Poll is how a pulling worker asks.
	Poll *PollSpec `yaml:"poll"`
}

// PollSpec is how a pulling worker asks for jobs.
type PollSpec struct {
	// Interval is the least wait after a "drained" answer. Default 1s.
	Interval Duration `yaml:"interval"`
	// Jitter adds a random wait in [0, Jitter) to it. Default 0.
	Jitter Duration `yaml:"jitter"`
	// Timeout is the wait for an answer before asking again (a stranded
	// wait). Default 0: the worker's AskTimeout.
	Timeout Duration `yaml:"timeout"`
}

// MailboxSpec is a bounded mailbox: capacity and what a full box does.
type MailboxSpec struct {
	Capacity int            `yaml:"capacity"`
	Policy   mailbox.Policy `yaml:"policy"`
	// BlockTimeout bounds a blocked sender (policy block only). Default
	// 1s (mailbox.DefaultBlockTimeout).
	BlockTimeout Duration `yaml:"block_timeout"`
	// RetryAfter is how the hint of a "full, retry after" answer is
	// reckoned (the leader's mailbox only): drain or spread. Default drain.
	RetryAfter mailbox.RetryHint `yaml:"retry_after"`
}

// ReconnectSpec is how a worker comes back.
type ReconnectSpec struct {
	// Policy is ReconnectBackoff (exponential with full jitter, the
	// default) or ReconnectImmediate (the thundering herd, for comparison).
	Policy ReconnectPolicy `yaml:"policy"`
	// Base and Cap of the backoff. Default 1s and 60s.
	Base Duration `yaml:"base"`
	Cap  Duration `yaml:"cap"`
}

// OfflineProfile takes a worker away at random times.
type OfflineProfile struct {
	// Every is the mean time between a worker's offline periods
	// (exponential gaps). Required.
	Every Duration `yaml:"every"`
	// For is the length of one offline period. Required.
	For dist.Dist `yaml:"for"`
	// Mode is OfflinePartition (silent: the broker notices at keepalive,
	// the default) or OfflineDisconnect (clean).
	Mode OfflineMode `yaml:"mode"`
}

// LeaderSpec configures the leader.
type LeaderSpec struct {
	// Mailbox for worker requests and telemetry. Default capacity 1000,
	// policy reject.
	Mailbox MailboxSpec `yaml:"mailbox"`
	// Service time per request or telemetry message. Default 1ms.
	Service *dist.Dist `yaml:"service"`
	// HeartbeatPolicy is HeartbeatCoalesce (the default: a worker's
	// newer heartbeat replaces its waiting one) or HeartbeatAppend (every
	// heartbeat waits its turn: the flood coalescing prevents, for
	// comparison).
	HeartbeatPolicy HeartbeatPolicy `yaml:"heartbeat_policy"`
	// HeartbeatInterval is the leader's cadence for processing heartbeats.
	// Default 30s.
	HeartbeatInterval Duration `yaml:"heartbeat_interval"`
	// AskTimeout bounds a delivery's wait for the worker's ack. Default 5s.
	AskTimeout Duration   `yaml:"ask_timeout"`
	Outbox     OutboxSpec `yaml:"outbox"`
	Relay      RelaySpec  `yaml:"relay"`
	// Jobs is the job queue pulling workers take their jobs from.
	Jobs JobsSpec `yaml:"jobs"`
}

// JobsSpec is the leader's job queue (work pulling).
type JobsSpec struct {
	// Capacity bounds the jobs not done. Default outbox.DefaultJobCapacity.
	Capacity int `yaml:"capacity"`
	// Lease is how long a worker holds a job before it goes back to the
	// queue. Default 30s.
	Lease Duration `yaml:"lease"`
	// Retry is the retry time of a "drained" answer. Default 1s.
	Retry Duration `yaml:"retry"`
}

// OutboxSpec is the leader's durable outbox.
type OutboxSpec struct {
	// Path of the bbolt file. Default: a new file in a temporary directory,
	// removed after the run.
	Path string `yaml:"path"`
	// Store is StoreBolt (the default: the durable file) or StoreMemory
	// (lost at every leader crash: what the file buys, for comparison
	// runs).
	Store Store `yaml:"store"`
	// Durability is DurabilitySync, DurabilityBatch (the default) or
	// DurabilityNone.
	Durability Durability `yaml:"durability"`
	// Partitions of the store and relay. Default
	// outbox.DefaultPartitions.
	Partitions int `yaml:"partitions"`
	// MaxAttempts before a message goes to the dead letters. Default 10.
	MaxAttempts int `yaml:"max_attempts"`
	// LeaseTimeout after which an unsettled delivery is handed out again.
	// Default: the store's.
	LeaseTimeout Duration `yaml:"lease_timeout"`
	// MaxDepth bounds the queued messages (0: unbounded).
	MaxDepth int `yaml:"max_depth"`
}

// RelaySpec is the partitioned relay.
type RelaySpec struct {
	// Interval between polls when idle. Default 5ms.
	Interval Duration `yaml:"interval"`
	// Batch is the most messages one poll leases. Default 20.
	Batch int `yaml:"batch"`
	// Limit is each partition's concurrency limiter.
	Limit LimitSpec `yaml:"limit"`
	// Backoff spaces retries. Default base 100ms, cap 30s.
	Backoff BackoffSpec `yaml:"backoff"`
	// TryOffline makes the relay try workers the leader knows are offline
	// (each attempt waits out the ask timeout): what skipping them saves,
	// for comparison runs. Default false.
	TryOffline bool `yaml:"try_offline"`
	// RetryRejects makes the relay retry a command a worker refused for
	// good, with backoff up to the outbox's attempt limit, instead of
	// dead-lettering it at once: what dead-lettering saves the commands
	// queued behind it, for comparison runs. Default false.
	RetryRejects bool `yaml:"retry_rejects"`
}

// LimitSpec is an AIMD (or static) limiter.
type LimitSpec struct {
	Initial int `yaml:"initial"` // default 10
	Min     int `yaml:"min"`     // default 1
	Max     int `yaml:"max"`     // default 50
	// Strategy is StrategyAIMD (the default) or StrategyStatic (the limit
	// stays at Initial: for comparison runs).
	Strategy Strategy `yaml:"strategy"`
}

// BackoffSpec is exponential backoff with full jitter.
type BackoffSpec struct {
	Base Duration `yaml:"base"`
	Cap  Duration `yaml:"cap"`
}

// Event is one timeline entry: at a simulated time, exactly one action.
type Event struct {
	// At is the simulated time since the start.
	At Duration `yaml:"at"`
	// Name, if set, lets expectations read the event (events["away"].workers:
	// how many workers it selected) and windows start or end at it.
	Name string `yaml:"name"`

	// Partition cuts the selected workers off silently (no goodbye; the
	// broker publishes their last will after the keepalive).
	Partition *Targets `yaml:"partition"`
	// Heal ends a partition: the workers reconnect by their policy.
	Heal *Targets `yaml:"heal"`
	// PartitionGateways cuts off the gateways the selected workers sit
	// behind, silently: the broker publishes each gateway's last will
	// after its keepalive, which takes every device it carried offline.
	PartitionGateways *Targets `yaml:"partition_gateways"`
	// HealGateways ends a gateway partition: the gateways reconnect by
	// their backoff, and their devices through them.
	HealGateways *Targets `yaml:"heal_gateways"`
	// Disconnect closes the workers' sessions cleanly (offline status).
	Disconnect *Targets `yaml:"disconnect"`
	// Reconnect brings disconnected workers back.
	Reconnect *Targets `yaml:"reconnect"`
	// Crash kills the workers' sessions abruptly; they reconnect by their
	// policy.
	Crash *Targets `yaml:"crash"`
	// Reboot restarts the workers' devices: what they keep in RAM (the
	// mailbox, asks in flight, the local outbox) is lost and counted,
	// what they keep in flash (the applied version, the dedupe state) is
	// kept; the session drops as in a crash and they reconnect by their
	// policy.
	Reboot *Targets `yaml:"reboot"`
	// LeaderCrash kills the leader (no goodbye, outbox file closed under
	// it) and restarts it from the same bbolt file after RestartAfter.
	LeaderCrash *LeaderCrash `yaml:"leader_crash"`
	// Deploy sends a version to the selected workers in waves.
	Deploy *Deploy `yaml:"deploy"`
	// HeartbeatStorm makes the selected workers heartbeat every Interval
	// for For.
	HeartbeatStorm *HeartbeatStorm `yaml:"heartbeat_storm"`
	// SetCapacity changes the selected workers' mailbox capacity.
	SetCapacity *SetCapacity `yaml:"set_capacity"`
	// SetLeader changes the leader's mailbox capacity or service time.
	SetLeader *SetLeader `yaml:"set_leader"`
	// Poison sends commands the workers refuse for good: they must reach
	// the dead letters without holding up other messages.
	Poison *Poison `yaml:"poison"`
	// ReplayDeadLetters puts the dead letters of the selected workers back
	// in the queue with a fresh attempt count, as an operator does with
	// `leader dlq replay` once the cause is fixed.
	ReplayDeadLetters *Targets `yaml:"replay_dead_letters"`
	// Speed changes the run's speed from here on.
	Speed *float64 `yaml:"speed"`
	// Jobs adds jobs to the fleet's work: pulling workers take them from
	// the leader's job queue, pushing workers get theirs assigned.
	Jobs *JobsEvent `yaml:"jobs"`

	// path is where the event is in the file ("timeline[3]"): the
	// timeline is sorted by At after loading.
	path string
}

// Targets selects workers.
type Targets struct {
	Workers Selector `yaml:"workers"`
}

// LeaderCrash kills and restarts the leader.
type LeaderCrash struct {
	// RestartAfter is the downtime. Default 0: restart at once.
	RestartAfter Duration `yaml:"restart_after"`
}

// Deploy is a rollout.
type Deploy struct {
	// Version to apply. Required.
	Version string `yaml:"version"`
	// Kind is DeployFirmware (the default) or DeployConfig.
	Kind DeployKind `yaml:"kind"`
	// Workers to update. Default all.
	Workers Selector `yaml:"workers"`
	// Via, if set, selects the config servers that serve the downloads:
	// each target's update comes with a download job on one of them (round
	// robin), due with its wave. Config servers with small mailboxes and
	// slow service push back with "full".
	Via *Selector `yaml:"via"`
	// WaveSize is workers per wave; 0: one wave.
	WaveSize int `yaml:"wave_size"`
	// WaveInterval separates the waves' starts.
	WaveInterval Duration `yaml:"wave_interval"`
	// WaitForWave, if true, starts each wave only when the previous one is
	// delivered (WaveInterval is then the pause after it).
	WaitForWave bool `yaml:"wait_for_wave"`
	// TTL drops an update still undelivered that long after its wave
	// started (counted as expired). Default 0: no limit.
	TTL Duration `yaml:"ttl"`
	// Replace, true by default, makes a worker's update replace an older
	// one still queued for it; false queues it behind (comparison runs).
	Replace *bool `yaml:"replace"`
}

// JobsEvent adds Count jobs. They are dealt round robin over the fleet's
// workers in index order: the share of a pushing worker is enqueued for
// it through the relay, as job commands; the share of a pulling worker
// goes to the leader's job queue, where any pulling worker takes it.
type JobsEvent struct {
	// Count of jobs; or PerWorker jobs for each worker of the fleet (at
	// its size after --workers). Exactly one is required.
	Count     *int `yaml:"count"`
	PerWorker *int `yaml:"per_worker"`
	// Work is each job's work time; nil: the worker's own service time.
	Work *dist.Dist `yaml:"work"`
}

// HeartbeatStorm is a burst of heartbeats.
type HeartbeatStorm struct {
	Workers  Selector `yaml:"workers"`
	Interval Duration `yaml:"interval"` // required
	For      Duration `yaml:"for"`      // required
}

// SetCapacity changes worker mailboxes.
type SetCapacity struct {
	Workers  Selector `yaml:"workers"`
	Capacity int      `yaml:"capacity"` // at least 1
}

// SetLeader changes the leader at run time; nil fields stay as they are.
type SetLeader struct {
	Capacity *int       `yaml:"capacity"`
	Service  *dist.Dist `yaml:"service"`
}

// Poison sends commands that the receiving workers reject.
type Poison struct {
	Workers Selector `yaml:"workers"`
	// Count is the poison commands per selected worker. Default 1.
	Count int `yaml:"count"`
}

// Selector picks workers. Its text forms are "all", "N%" (the first N
// percent of the fleet by index, spread evenly), "A-B" (indexes A to B
// inclusive), "group:NAME", and a YAML list of worker ids.
type Selector struct {
	All     bool
	Percent float64 // (0, 100]
	From    int     // range, inclusive
	To      int
	Range   bool
	Group   string
	IDs     []string
	Text    string // as written, for messages
}

// Expect is one expectation: an expression over the run's Result that must
// be true. In the file it is either the expression as a string or a
// mapping with name and check.
type Expect struct {
	Name  string `yaml:"name"`
	Check string `yaml:"check"`
	// Timing is set when Check reads a timing value (a Seconds field): it
	// is not judged on a run that fell behind its schedule.
	Timing bool `yaml:"-"`
}

// Window is a named phase of the run, from one time to another; each end
// is a time or a named event's time.
type Window struct {
	Name string `yaml:"name"`
	// From is where the window starts. Required.
	From Edge `yaml:"from"`
	// To is where it ends. Default: the end of the timeline (duration).
	To Edge `yaml:"to"`
}

// Edge is one end of a Window: a simulated time ("45s") or the time of a
// named event ("heal"). Event names start with a letter, durations with a
// digit, so the text says which.
type Edge struct {
	At    Duration // when Event is ""
	Event string
	Text  string // as written; "" when left out
}

// UnmarshalText reads a duration or an event's name.
func (e *Edge) UnmarshalText(b []byte) error {
	t := string(b)
	if t != "" && t[0] >= '0' && t[0] <= '9' {
		var d Duration
		if err := d.UnmarshalText(b); err != nil {
			return err
		}
		*e = Edge{At: d, Text: t}
		return nil
	}
	if !nameRE.MatchString(t) {
		return fmt.Errorf("%q is neither a time nor an event's name: write a time (45s) or the name of a timeline event (heal)", t)
	}
	*e = Edge{Event: t, Text: t}
	return nil
}

// MarshalText writes the edge as it was written.
func (e Edge) MarshalText() ([]byte, error) {
	if e.Event != "" {
		return []byte(e.Event), nil
	}
	return e.At.MarshalText()
}

// SweepParam is one swept parameter: a dotted path of YAML keys into the
// scenario ("leader.mailbox.policy") and the values it takes, as decoded
// from the file (int64, float64, bool or string; the YAML text of a
// mapping or a list).
type SweepParam struct {
	Path   string
	Values []any
	// Labels name the values, when the file gives them as a mapping of
	// label to value (aimd: {strategy: aimd}); nil for a list, whose
	// values are named by their text.
	Labels []string

	// nodes are the values as written, so that a bad one is reported at
	// its place in the file.
	nodes []ast.Node
	// size counts the keys and list items of the values as written,
	// aliases expanded, and their entries: what the parameter adds to the
	// file (sweepSize).
	size int
}

// Duration is a time.Duration written as Go duration text ("250ms", "1m30s").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalText parses Go duration text; negative durations are refused.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write a number with a unit, as 250ms, 5s or 1m30s", b)
	}
	if v < 0 {
		return fmt.Errorf("%q: a duration must not be negative", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes d as Go duration text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d Duration) String() string { return time.Duration(d).String() }

// DownlinkSpec is a gateway's radio towards its devices (see
// worker.Downlink).
type DownlinkSpec struct {
	// Capacity is the most commands waiting for the radio, the one on
	// the air included. Required.
	Capacity int `yaml:"capacity"`
	// Airtime is the time one command takes to send. Required.
	Airtime Duration `yaml:"airtime"`
}
