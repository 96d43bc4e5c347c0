package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Seconds is a time in seconds (simulated unless noted). Expectations that
// read a Seconds value are timing expectations: a run that fell behind its
// schedule does not judge them.
type Seconds float64

// Result is what a run measured, at its end (after the drain). It is the
// environment of the expect: expressions (the expr tags are the names) and
// the "result" object of the JSON report (the json tags). Every number comes
// from the mechanisms' own stats (fleet/stats, mailbox.Stats, outbox.Stats,
// leader.Stats, worker.Stats): nothing here is counted twice.
type Result struct {
	// Lost is every message neither delivered nor counted as dropped,
	// rejected, expired, overwritten or dead-lettered: Commands.Lost +
	// Telemetry.Lost. A correct run has 0.
	Lost int64 `expr:"lost" json:"lost"`

	Run       RunInfo       `expr:"run" json:"run"`
	Fleet     FleetResult   `expr:"fleet" json:"fleet"`
	Workers   WorkersResult `expr:"workers" json:"workers"`
	Leader    LeaderResult  `expr:"leader" json:"leader"`
	Heartbeat HeartbeatRes  `expr:"heartbeats" json:"heartbeats"`
	Relay     RelayResult   `expr:"relay" json:"relay"`
	Outbox    OutboxResult  `expr:"outbox" json:"outbox"`
	Commands  CommandResult `expr:"commands" json:"commands"`
	Telemetry TelemetryRes  `expr:"telemetry" json:"telemetry"`
	Deploys   []DeployRes   `expr:"deploys" json:"deploys"`
	// Events are the timeline's named events, by name.
	Events map[string]EventResult `expr:"events" json:"events,omitempty"`
	// Windows are the scenario's windows, by name: what happened between
	// their edges.
	Windows map[string]WindowResult `expr:"windows" json:"windows,omitempty"`
}

// EventResult is a named timeline event as the run resolved it.
type EventResult struct {
	// At is when the event was scheduled, in simulated seconds (the
	// scenario's input, not a measurement).
	At float64 `expr:"at" json:"at"`
	// Workers is how many workers the event selected (0 for events that
	// select none): the count a selector such as 20% gives at this fleet's
	// size, so that an expectation can follow --workers.
	Workers int `expr:"workers" json:"workers"`
}

// WindowResult is what happened in a window: counters are the change
// between its edges, depths the largest sampled inside it, and wait
// quantiles are over the messages taken from the mailbox inside it.
type WindowResult struct {
	// From and To are the window's edges, in simulated seconds.
	From float64 `expr:"from" json:"from"`
	To   float64 `expr:"to" json:"to"`
	// Leader is the leader's mailbox and answers in the window (capacity
	// and policy as at its end).
	Leader WindowLeader `expr:"leader" json:"leader"`
	// Relay is the relay's deliveries in the window.
	Relay WindowRelay `expr:"relay" json:"relay"`
	// Workers is the workers' requests and answers in the window.
	Workers WindowWorkers `expr:"workers" json:"workers"`
}

// WindowLeader is the leader's side of a window.
type WindowLeader struct {
	Mailbox        MailboxResult `expr:"mailbox" json:"mailbox"`
	RequestsServed uint64        `expr:"requests_served" json:"requests_served"`
	AnsweredFull   uint64        `expr:"answered_full" json:"answered_full"`
}

// WindowRelay is the relay's side of a window, over every partition.
type WindowRelay struct {
	Delivered    uint64 `expr:"delivered" json:"delivered"`
	Backpressure uint64 `expr:"backpressure" json:"backpressure"`
	Retries      uint64 `expr:"retries" json:"retries"`
	Errors       uint64 `expr:"errors" json:"errors"`
	OfflineSkips uint64 `expr:"offline_skips" json:"offline_skips"`
}

// WindowWorkers is the workers' side of a window.
type WindowWorkers struct {
	Connects  uint64 `expr:"connects" json:"connects"`
	SyncSent  uint64 `expr:"sync_sent" json:"sync_sent"`
	SyncOK    uint64 `expr:"sync_ok" json:"sync_ok"`
	SyncFull  uint64 `expr:"sync_full" json:"sync_full"`
	AckedFull uint64 `expr:"acked_full" json:"acked_full"`
}

// RunInfo is about the run itself.
type RunInfo struct {
	Seed  uint64  `expr:"seed" json:"seed"`
	Speed float64 `expr:"speed" json:"speed"` // the speed at the start
	// SimSeconds is the simulated time run, drain included.
	SimSeconds Seconds `expr:"sim_seconds" json:"sim_seconds"`
	// WallSeconds is the wall time the run took.
	WallSeconds float64 `expr:"wall_seconds" json:"wall_seconds"`
	// LagMax and LagP99 are the timer lag: how far (simulated seconds)
	// the runner's timeline events and samples fired behind their
	// schedule.
	LagMax Seconds `expr:"lag_max" json:"lag_max"`
	LagP99 Seconds `expr:"lag_p99" json:"lag_p99"`
	// ServiceLagMax and ServiceLagP99 are the service lag: how late the
	// leader's and the workers' loops completed what they served against
	// their service times; of the leader's and the workers' figures, the
	// larger.
	ServiceLagMax Seconds `expr:"service_lag_max" json:"service_lag_max"`
	ServiceLagP99 Seconds `expr:"service_lag_p99" json:"service_lag_p99"`
	// DeliveryLagMax and DeliveryLagP99 are the delivery lag: the time
	// from a message's publish (its sent_ms) to its receiver's handler,
	// for the workers' messages to the leader and the leader's commands to
	// the workers; the larger of the two.
	DeliveryLagMax Seconds `expr:"delivery_lag_max" json:"delivery_lag_max"`
	DeliveryLagP99 Seconds `expr:"delivery_lag_p99" json:"delivery_lag_p99"`
	// LagThreshold is the simulated time each lag's p99 may reach for
	// the run to count as having kept up (RunOptions.LagThreshold).
	LagThreshold Seconds `expr:"lag_threshold" json:"lag_threshold"`
	// KeptUp is false when the p99 of any of the three lags passed the
	// threshold (Behind says which): timing expectations are then
	// reported as not judged.
	KeptUp bool `expr:"kept_up" json:"kept_up"`
	// Events is the timeline events fired.
	Events int `expr:"events" json:"events"`
	// LeaderRestarts counts leader crashes and restarts.
	LeaderRestarts int `expr:"leader_restarts" json:"leader_restarts"`
}

// Behind says how the run fell behind its schedule: each lag whose 99th
// percentile passed the threshold ("service lag p99 2.3s > threshold 1s"),
// then the speed ("at speed 50"). It is "" when none did, and when the
// threshold is not known (0: a report from before it was recorded). The
// runner sets KeptUp to Behind() == "".
func (r RunInfo) Behind() string {
	if r.LagThreshold <= 0 {
		return ""
	}
	var parts []string
	for _, l := range []struct {
		name string
		p99  Seconds
	}{{"timer lag", r.LagP99}, {"service lag", r.ServiceLagP99}, {"delivery lag", r.DeliveryLagP99}} {
		if l.p99 > r.LagThreshold {
			parts = append(parts, fmt.Sprintf("%s p99 %s > threshold %s", l.name, secText(l.p99), secText(r.LagThreshold)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " at speed " + strconv.FormatFloat(r.Speed, 'g', -1, 64)
}

// secText formats s for a message, to the millisecond: "2.3s", "0.004s".
func secText(s Seconds) string {
	return strconv.FormatFloat(math.Round(float64(s)*1000)/1000, 'f', -1, 64) + "s"
}

// FleetResult is the fleet's shape and state at the end.
type FleetResult struct {
	Count   int            `expr:"count" json:"count"`
	Groups  map[string]int `expr:"groups" json:"groups"` // workers per group
	Online  int            `expr:"online" json:"online"` // as the workers see it
	Offline int            `expr:"offline" json:"offline"`
	// LeaderOnline is the leader's view (from statuses and wills).
	LeaderOnline int `expr:"leader_online" json:"leader_online"`
	// Gateways is how many gateways carry workers, each one MQTT session
	// (fleet.gateway_size); GatewaySize the most workers one of them
	// carries. Both 0 when every worker has a session of its own.
	Gateways    int `expr:"gateways" json:"gateways"`
	GatewaySize int `expr:"gateway_size" json:"gateway_size"`
}

// WorkersResult sums the workers' own counters.
type WorkersResult struct {
	// AtVersion counts workers by the version they run at the end.
	AtVersion map[string]int `expr:"at_version" json:"at_version"`
	// Applied counts config and firmware effects applied; AppliedTwice the
	// workers that applied one version more than once (must stay 0), and
	// AppliedTwiceIDs names them: the first MaxAppliedTwiceIDs in fleet
	// order.
	Applied         uint64   `expr:"applied" json:"applied"`
	AppliedTwice    int      `expr:"applied_twice" json:"applied_twice"`
	AppliedTwiceIDs []string `expr:"applied_twice_ids" json:"applied_twice_ids,omitempty"`
	Duplicates      uint64   `expr:"duplicates" json:"duplicates"` // redeliveries deduplicated (same key and seq)
	// Stale counts commands not applied because their seq was below the
	// one the worker had applied under their key (an older version).
	Stale     uint64 `expr:"stale" json:"stale"`
	Expired   uint64 `expr:"expired" json:"expired"` // commands past TTL when served
	AckedOK   uint64 `expr:"acked_ok" json:"acked_ok"`
	AckedFull uint64 `expr:"acked_full" json:"acked_full"`
	// MaxAttempt is the highest delivery attempt seen by any worker.
	MaxAttempt      int    `expr:"max_attempt" json:"max_attempt"`
	Connects        uint64 `expr:"connects" json:"connects"`
	ConnectAttempts uint64 `expr:"connect_attempts" json:"connect_attempts"`
	Reconnects      uint64 `expr:"reconnects" json:"reconnects"`
	ConnectionsLost uint64 `expr:"connections_lost" json:"connections_lost"`
	Malformed       uint64 `expr:"malformed" json:"malformed"`
	// Crashes counts connections a worker dropped without a word (crash
	// events); Refused the commands refused for good with a reject ack
	// (poison): the leader dead-letters them at once.
	Crashes uint64 `expr:"crashes" json:"crashes"`
	Refused uint64 `expr:"refused" json:"refused"`
	// GatewayDropped counts messages a gateway dropped for a worker behind
	// it whose loop was behind (gateway mode): a gateway never waits for
	// one device. A dropped command is delivered again when the leader's
	// ask times out; a dropped reply is asked for again.
	GatewayDropped uint64 `expr:"gateway_dropped" json:"gateway_dropped"`
	// Sync is the request every worker sends on (re)connect.
	SyncSent     uint64 `expr:"sync_sent" json:"sync_sent"`
	SyncOK       uint64 `expr:"sync_ok" json:"sync_ok"`
	SyncFull     uint64 `expr:"sync_full" json:"sync_full"`
	SyncTimeouts uint64 `expr:"sync_timeouts" json:"sync_timeouts"`
	// Mailbox sums the workers' command mailboxes.
	Mailbox MailboxResult `expr:"mailbox" json:"mailbox"`
}

// MailboxResult is a mailbox's (or a sum of mailboxes') accounting.
type MailboxResult struct {
	Capacity int    `expr:"capacity" json:"capacity"`
	Policy   string `expr:"policy" json:"policy"`
	Offered  uint64 `expr:"offered" json:"offered"`
	Taken    uint64 `expr:"taken" json:"taken"`
	Dropped  uint64 `expr:"dropped" json:"dropped"`
	Rejected uint64 `expr:"rejected" json:"rejected"`
	Depth    int    `expr:"depth" json:"depth"`
	MaxDepth int    `expr:"max_depth" json:"max_depth"`
	// Wait is the time from offer to take.
	Wait Quantiles `expr:"wait" json:"wait"`
}

// Quantiles of a time distribution, in simulated seconds.
type Quantiles struct {
	P50  Seconds `expr:"p50" json:"p50"`
	P90  Seconds `expr:"p90" json:"p90"`
	P99  Seconds `expr:"p99" json:"p99"`
	Max  Seconds `expr:"max" json:"max"`
	Mean Seconds `expr:"mean" json:"mean"`
}

// LeaderResult is the leader's counters, summed over its restarts.
type LeaderResult struct {
	Mailbox           MailboxResult `expr:"mailbox" json:"mailbox"`
	RequestsReceived  uint64        `expr:"requests_received" json:"requests_received"`
	RequestsServed    uint64        `expr:"requests_served" json:"requests_served"`
	TelemetryReceived uint64        `expr:"telemetry_received" json:"telemetry_received"`
	TelemetryServed   uint64        `expr:"telemetry_served" json:"telemetry_served"`
	AnsweredFull      uint64        `expr:"answered_full" json:"answered_full"`
	Malformed         uint64        `expr:"malformed" json:"malformed"`
	Reconnects        uint64        `expr:"reconnects" json:"reconnects"`
	AskRTT            Quantiles     `expr:"ask_rtt" json:"ask_rtt"` // simulated seconds, like every other time
	AsksSent          uint64        `expr:"asks_sent" json:"asks_sent"`
	AsksTimedOut      uint64        `expr:"asks_timed_out" json:"asks_timed_out"`
}

// HeartbeatRes is heartbeat coalescing, end to end.
type HeartbeatRes struct {
	Sent      uint64 `expr:"sent" json:"sent"`           // by workers
	Stored    uint64 `expr:"stored" json:"stored"`       // kept locally while offline
	Received  uint64 `expr:"received" json:"received"`   // by the leader
	Processed uint64 `expr:"processed" json:"processed"` // on the leader's cadence
	// Coalesced counts heartbeats replaced by a newer one before the
	// leader looked (on the leader and in the workers' local outboxes).
	Coalesced uint64 `expr:"coalesced" json:"coalesced"`
	// CoalescedRatio is Coalesced / Received (0 when none were received).
	CoalescedRatio float64 `expr:"coalesced_ratio" json:"coalesced_ratio"`
	// MaxQueued is the most heartbeats waiting at the leader at once.
	MaxQueued int `expr:"max_queued" json:"max_queued"`
	// Age is how old a heartbeat was when the leader processed it.
	Age    Quantiles `expr:"age" json:"age"`
	Rounds uint64    `expr:"rounds" json:"rounds"`
}

// RelayResult is the relay over every partition.
type RelayResult struct {
	Partitions int        `expr:"partitions" json:"partitions"`
	Limit      LimitRange `expr:"limit" json:"limit"`
	// Delivered .. OfflineSkips sum every partition (and leader restarts).
	Delivered    uint64 `expr:"delivered" json:"delivered"`
	Backpressure uint64 `expr:"backpressure" json:"backpressure"`
	Retries      uint64 `expr:"retries" json:"retries"`
	Errors       uint64 `expr:"errors" json:"errors"`
	DeadLettered uint64 `expr:"dead_lettered" json:"dead_lettered"`
	OfflineSkips uint64 `expr:"offline_skips" json:"offline_skips"`
}

// LimitRange is what the AIMD limits did over the run.
type LimitRange struct {
	Initial int `expr:"initial" json:"initial"`
	Min     int `expr:"min" json:"min"` // the lowest any partition reached
	Max     int `expr:"max" json:"max"` // the highest any partition reached
	// Final is the sum of the partitions' limits at the end.
	Final int `expr:"final" json:"final"`
	// Decreases counts the times a partition's limit fell.
	Decreases int `expr:"decreases" json:"decreases"`
}

// OutboxResult is the leader's outbox, summed over restarts where it counts
// events and at the end where it holds state.
type OutboxResult struct {
	Enqueued     uint64  `expr:"enqueued" json:"enqueued"`
	Acked        uint64  `expr:"acked" json:"acked"`
	Overwritten  uint64  `expr:"overwritten" json:"overwritten"`
	Stale        uint64  `expr:"stale" json:"stale"`
	Expired      uint64  `expr:"expired" json:"expired"`
	DeadLettered uint64  `expr:"dead_lettered" json:"dead_lettered"`
	Depth        int     `expr:"depth" json:"depth"`               // at the end
	DeadLetters  int     `expr:"dead_letters" json:"dead_letters"` // at the end
	MaxDepth     int     `expr:"max_depth" json:"max_depth"`       // sampled
	OldestMax    Seconds `expr:"oldest_max" json:"oldest_max"`     // sampled: the oldest message's age at its worst
}

// CommandResult balances the leader's commands: every one handed to the
// outbox (Sent, over every leader instance) is acked, overwritten, stale,
// expired, dead-lettered or still queued (Queued, in the file at the
// end); every one a worker acked ok was served, dropped after its ack
// (DroppedAfterAck) or is still in its mailbox. Lost is the largest of
// four shortfalls, each a lower bound on the commands lost: the outbox
// ledger's remainder; outbox acks beyond the ok answers the workers gave
// (acked, but no worker took it); the workers' ledger's remainder; and
// deploy targets that never applied their version, were not sent a later
// one, are not in the dead letters and are not explained by expiries,
// drops after an ack or what is still queued. A negative Lost (more
// settled than sent) is a counting error.
type CommandResult struct {
	Sent uint64 `expr:"sent" json:"sent"`
	// Poisoned counts the poison commands the timeline sent (each must end
	// in the dead letters).
	Poisoned uint64 `expr:"poisoned" json:"poisoned"`
	Queued   int    `expr:"queued" json:"queued"`
	// DroppedAfterAck counts commands a worker acknowledged ok (accepted
	// into its mailbox, so the leader settled them as delivered) that its
	// mailbox's policy then dropped before they were served: counted, not
	// lost, and never applied.
	DroppedAfterAck uint64 `expr:"dropped_after_ack" json:"dropped_after_ack"`
	// LostInReboot counts commands a worker acknowledged ok and lost in a
	// reboot before applying them (in its mailbox or in service): the
	// mailbox is RAM. Counted, not lost, and never applied.
	LostInReboot uint64 `expr:"lost_in_reboot" json:"lost_in_reboot"`
	Lost         int64  `expr:"lost" json:"lost"`
}

// TelemetryRes balances the workers' telemetry.
type TelemetryRes struct {
	Generated uint64 `expr:"generated" json:"generated"`
	Direct    uint64 `expr:"direct" json:"direct"`       // accepted on the first try
	Stored    uint64 `expr:"stored" json:"stored"`       // kept in a local outbox
	Forwarded uint64 `expr:"forwarded" json:"forwarded"` // later accepted from it
	Rejected  uint64 `expr:"rejected" json:"rejected"`
	Dropped   uint64 `expr:"dropped" json:"dropped"` // local outbox full, counted
	// LostInReboot: in a local outbox, or sent and unanswered, when the
	// worker rebooted (counted).
	LostInReboot uint64 `expr:"lost_in_reboot" json:"lost_in_reboot"`
	Pending      int    `expr:"pending" json:"pending"` // still stored at the end
	Lost         int64  `expr:"lost" json:"lost"`
}

// DeployRes is one deploy of the timeline.
type DeployRes struct {
	Version   string `expr:"version" json:"version"`
	Targets   int    `expr:"targets" json:"targets"`
	Delivered int    `expr:"delivered" json:"delivered"`
	Rejected  int    `expr:"rejected" json:"rejected"`
	// Early counts targets that applied the version before their wave was
	// due (a rollout that lost its pacing: must stay 0).
	Early int `expr:"early" json:"early"`
	// Duration is from the first wave's start to the last target's
	// delivery (0 if it did not finish).
	Duration Seconds `expr:"duration" json:"duration"`
}

// Verdict is one expectation's outcome.
type Verdict struct {
	Name   string `json:"name"`
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Detail explains a failure ("leader.mailbox.max_depth = 1412") or
	// why a check was not judged.
	Detail string `json:"detail,omitempty"`
}

// Status of a Verdict.
type Status string

const (
	Pass      Status = "pass"
	Fail      Status = "fail"
	NotJudged Status = "not_judged" // a timing check on a run that fell behind, or a division by zero
)

// Sample is the fleet at one moment of simulated time: the time series the
// HTML report charts and the dashboard draws. Counters are cumulative since
// the start of the run.
type Sample struct {
	T Seconds `json:"t"` // simulated seconds since the start

	LeaderDepth    int `json:"leader_depth"`
	LeaderCapacity int `json:"leader_capacity"`
	// LeaderMaxDepth is the most requests the leader's mailbox has held
	// at once since the run started (over its restarts): the high-water
	// mark a moment's depth misses when a burst fills and empties the box
	// between two samples.
	LeaderMaxDepth int     `json:"leader_max_depth"`
	LeaderWaitP99  Seconds `json:"leader_wait_p99"`
	// LeaderWaitP99Interval is the p99 of the waits that ended since the
	// sample before (0 when none did): what the mailbox is like now,
	// where LeaderWaitP99 covers the whole run so far.
	LeaderWaitP99Interval Seconds `json:"leader_wait_p99_interval"`
	LeaderAccepted        uint64  `json:"leader_accepted"`
	LeaderRejected        uint64  `json:"leader_rejected"`
	LeaderDropped         uint64  `json:"leader_dropped"`
	HeartbeatsQueued      int     `json:"heartbeats_queued"`

	Limits       []int  `json:"limits"`    // AIMD limit per partition
	InFlight     int    `json:"in_flight"` // deliveries running
	Delivered    uint64 `json:"delivered"`
	Backpressure uint64 `json:"backpressure"`
	Retries      uint64 `json:"retries"`
	DeadLettered uint64 `json:"dead_lettered"`

	OutboxDepth  int     `json:"outbox_depth"`
	OutboxOldest Seconds `json:"outbox_oldest"`

	Online      int    `json:"online"`
	Busy        int    `json:"busy"`
	AtTarget    int    `json:"at_target"`    // workers at the latest deployed version
	WorkerDepth int    `json:"worker_depth"` // commands queued in all worker mailboxes
	WorkerFull  uint64 `json:"worker_full"`  // "full" answers so far

	LeaderUp bool `json:"leader_up"`
}

// Record is something that happened during a run: a timeline event, a
// dashboard key press, a warning.
type Record struct {
	T      Seconds `json:"t"`
	Kind   string  `json:"kind"` // "event", "control", "warning"
	Text   string  `json:"text"`
	LagSec Seconds `json:"lag,omitempty"` // how late it fired
}

// Report is one run: what ran, what it measured, and the verdicts. Its JSON
// form is the report schema documented in docs/SCENARIOS.md.
type Report struct {
	Scenario    string `json:"scenario"`
	File        string `json:"file,omitempty"`
	Description string `json:"description,omitempty"`
	// Variant names the sweep values of this run ("leader.mailbox.policy=reject"),
	// empty without a sweep.
	Variant  string            `json:"variant,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	Started  time.Time         `json:"started"`
	Result   Result            `json:"result"`
	Verdicts []Verdict         `json:"expectations"`
	// Comparisons are the sweep's compare: checks, judged across its
	// variants once the last has run; they are set on the report of the
	// sweep's last variant (JudgeComparisons).
	Comparisons []Verdict `json:"comparisons,omitempty"`
	Records     []Record  `json:"records"`
	Samples     []Sample  `json:"samples"`
	// Err is set when the run could not complete (the error text).
	Err string `json:"error,omitempty"`
}

// Mark is the status as one character: ✓ pass, ✗ fail, – not judged.
func (s Status) Mark() string {
	switch s {
	case Pass:
		return "✓"
	case Fail:
		return "✗"
	}
	return "–"
}

// Tally counts verdicts by status.
func Tally(vs []Verdict) (pass, fail, notJudged int) {
	for _, v := range vs {
		switch v.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			notJudged++
		}
	}
	return pass, fail, notJudged
}

// Passed reports whether the run completed and no expectation failed.
func (r *Report) Passed() bool {
	if r.Err != "" {
		return false
	}
	for _, vs := range [][]Verdict{r.Verdicts, r.Comparisons} {
		for _, v := range vs {
			if v.Status == Fail {
				return false
			}
		}
	}
	return true
}
