package result

// A field's name is its expr tag: the name an expectation reads it by,
// and the registry's (registry.go). Its json tag, its name in the JSON
// report, is derived from it: go test ./fleet/result -run
// TestJSONTagsFromExpr -update writes it, keeping only its options
// (",omitempty"), and the test fails on one that differs.

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
	// LinkLost counts messages the workers' lossy links lost, both ways
	// (fleet.worker.loss): a lost command or answer times out the
	// leader's ask and is delivered again; a lost request, telemetry
	// message or reply times out the worker's.
	LinkLost uint64 `expr:"link_lost" json:"link_lost"`
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

// HeartbeatResult is heartbeat coalescing, end to end.
type HeartbeatResult struct {
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
	Replayed     uint64  `expr:"replayed" json:"replayed"`         // dead letters put back in the queue
	Depth        int     `expr:"depth" json:"depth"`               // at the end
	DeadLetters  int     `expr:"dead_letters" json:"dead_letters"` // at the end
	MaxDepth     int     `expr:"max_depth" json:"max_depth"`       // the stores' high-water mark
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

// TelemetryResult balances the workers' telemetry.
type TelemetryResult struct {
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

// JobsResult is the outcome of the timeline's jobs events: jobs pushed to
// the workers or pulled from the leader's job queue.
type JobsResult struct {
	Added    int `expr:"added" json:"added"`
	Pushed   int `expr:"pushed" json:"pushed"`
	Queued   int `expr:"queued" json:"queued"`
	NotAdded int `expr:"not_added" json:"not_added"`
	// Done counts the jobs applied (by at least one worker), DoneTwice
	// those applied by more than one, or more than once.
	Done      int            `expr:"done" json:"done"`
	DoneTwice int            `expr:"done_twice" json:"done_twice"`
	DoneBy    map[string]int `expr:"done_by" json:"done_by"`
	// Makespan is from the first jobs event to the last job applied;
	// Never while any job is not done.
	Makespan Seconds `expr:"makespan" json:"makespan"`
	// HeldMax is, per group, the most jobs one device held at once,
	// queued or in service: the jobs waiting at a device.
	HeldMax map[string]int `expr:"held_max" json:"held_max"`
	// Depth and Leased are the leader's queue at the end; OldestAge the
	// age of its oldest job not done (queued or leased) at its worst:
	// the most it was in any sample, or at the end.
	Depth     int     `expr:"depth" json:"depth"`
	Leased    int     `expr:"leased" json:"leased"`
	OldestAge Seconds `expr:"oldest_age" json:"oldest_age"`
	// Lost is Added - NotAdded - Done - Depth - Leased: jobs neither done
	// nor waiting in the queue.
	Lost int `expr:"lost" json:"lost"`
	// Polls, Drained, Refused: job requests sent, answered drained,
	// refused. Leases given, Expired leases; Abandoned pulled jobs the
	// workers let go; StrandedWaits requests that got no answer in time.
	Polls         uint64 `expr:"polls" json:"polls"`
	Drained       uint64 `expr:"drained" json:"drained"`
	Refused       uint64 `expr:"refused" json:"refused"`
	Leases        uint64 `expr:"leases" json:"leases"`
	Expired       uint64 `expr:"expired" json:"expired"`
	Abandoned     uint64 `expr:"abandoned" json:"abandoned"`
	StrandedWaits uint64 `expr:"stranded_waits" json:"stranded_waits"`
}

// DeployResult is one deploy of the timeline.
type DeployResult struct {
	Version   string `expr:"version" json:"version"`
	Targets   int    `expr:"targets" json:"targets"`
	Delivered int    `expr:"delivered" json:"delivered"`
	Rejected  int    `expr:"rejected" json:"rejected"`
	// Early counts targets that applied the version before their wave was
	// due (a rollout that lost its pacing: must stay 0).
	Early int `expr:"early" json:"early"`
	// Duration is from the first wave's start to the last target's
	// delivery; Never (+Inf, JSON null) if it did not finish, so that
	// "deploys[0].duration <= 10" fails for a deploy that never got there.
	Duration Seconds `expr:"duration" json:"duration"`
}

// GatewaysResult sums the gateways' counters (fleet.gateway_size); all 0
// when every worker has a session of its own.
type GatewaysResult struct {
	// ConnectionsLost counts gateway sessions lost (a partition, a
	// broker gone); DevicesLost the device sessions lost with them.
	ConnectionsLost uint64 `expr:"connections_lost" json:"connections_lost"`
	DevicesLost     uint64 `expr:"devices_lost" json:"devices_lost"`
	// Wills counts device wills the gateways published: devices that
	// dropped off their gateway without a goodbye.
	Wills uint64 `expr:"wills" json:"wills"`
	// The downlink (fleet.gateway_downlink): commands forwarded after
	// their airtime, answered "full" for their device, dropped from a
	// queue whose gateway lost its session; the longest queue.
	DownlinkForwarded uint64 `expr:"downlink_forwarded" json:"downlink_forwarded"`
	DownlinkRefused   uint64 `expr:"downlink_refused" json:"downlink_refused"`
	DownlinkDropped   uint64 `expr:"downlink_dropped" json:"downlink_dropped"`
	DownlinkMaxQueue  int    `expr:"downlink_max_queue" json:"downlink_max_queue"`
}
