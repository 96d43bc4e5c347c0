package result

// feedToWorkers is what reaches a worker as a command: what the leader
// pushes, and the jobs pulling workers take (a pulled job goes through
// the worker's mailbox and duplicate guard as a pushed one does).
const feedToWorkers = FeedCommands | FeedJobRequests

// registry is every name of a Result, in the order of docs/SCENARIOS.md's
// tables (consecutive names with one meaning share a row there). Its
// constructors say how a baseline keeps each: exact, in a band of its
// kind's scale, or omitted with the reason. fed says what a run must
// send for an entry to count anything (Metric.Feeds); an entry without
// it counts whatever the scenario sends.
var registry = []Metric{
	exact(Count, "lost", Lower, "Messages neither delivered nor counted as dropped, rejected, expired, overwritten, dead-lettered or lost in a reboot: `commands.lost + telemetry.lost`. A correct run has 0.").fed(FeedCommands | FeedTelemetry),

	// The run itself.
	omit(Input, "run.seed", input, "The seed the run used.").shown(FormatNumber),
	omit(Input, "run.speed", input, "The speed ceiling at the start, simulated seconds per wall second; 0: none (`sim check` and `--headless` without `--speed`).").shown(FormatNumber),
	exact(Count, "run.forced_advances", Lower, "Times simulated time moved on before the process had settled (it did not settle within the stall timeout, nothing in it moving: a goroutine spinning, a wait left on the wall clock). Above 0 fails the run, whatever its expectations say: its timings may be wrong from there on."),
	band(Timing, "run.sim_seconds", Lower, "Simulated time run, drain included."),
	omit(Wall, "run.wall_seconds", "wall time: the machine's speed, not the system's", "Wall time the run took."),
	omit(Timing, "run.lag_max", "the runner's lag: 0 in a run on the virtual clock", "Worst timer lag: the runner's timeline events and samples firing behind their schedule, simulated seconds. On the virtual clock a timer fires at its time: above 0 means something in the process waited on the wall clock."),
	omit(Timing, "run.lag_p99", "the runner's lag: 0 in a run on the virtual clock", "99th percentile of the timer lag."),
	omit(Timing, "run.service_lag_max", "the service loops' lag: 0 in a run on the virtual clock", "Worst service lag: how late the leader or a worker completed a message or command against its service time (see *Kept up*), the larger of the leader's and the workers'. 0 on the virtual clock unless something waited on the wall clock."),
	omit(Timing, "run.service_lag_p99", "the service loops' lag: 0 in a run on the virtual clock", "99th percentile of the service lag, the larger of the leader's and the workers'."),
	omit(Timing, "run.delivery_lag_max", "the transport's lag: under a millisecond in a run on the virtual clock", "Worst delivery lag: from a message's `sent_ms` to its receiver's handler, the larger of the leader's and the workers'. Under a millisecond on the virtual clock (`sent_ms` is whole milliseconds) unless something waited on the wall clock."),
	omit(Timing, "run.delivery_lag_p99", "the transport's lag: under a millisecond in a run on the virtual clock", "99th percentile of the delivery lag, the larger of the leader's and the workers'."),
	omit(Timing, "run.lag_threshold", "the run's setting, not a measurement", "What each lag's p99 is held to, simulated seconds: `max(1s, 2% of the duration)` unless the runner is given another (`RunOptions.LagThreshold`)."),
	other(Flag, "run.kept_up", "False when the p99 of the timer, service or delivery lag passed `run.lag_threshold` (timing checks are then not judged)."),
	omit(Input, "run.events", input+" (the timeline's events, all of which fire in a run that completes)", "Timeline events fired."),
	omit(Input, "run.leader_restarts", input+" (the timeline's leader crashes)", "Leader crashes and restarts."),

	// The fleet.
	omit(Input, "fleet.count", input+" (a run at another size is not compared at all)", "Workers in the fleet (after `--workers`)."),
	omit(Input, "fleet.groups[*]", input, "Workers per group, a map: `fleet.groups[\"config-servers\"]`."),
	exact(Count, "fleet.online", Higher, "Workers connected at the end, as the workers see it."),
	exact(Count, "fleet.offline", Lower, "Workers not connected at the end."),
	exact(Count, "fleet.leader_online", Higher, "Workers online as the leader sees it (from statuses and last wills).").exports("fleetsim_workers_online", ""),
	omit(Input, "fleet.gateways", input+" (the layout fleet.gateway_size gives)", "Gateways carrying workers, one MQTT session each (the scenario's input, after `--workers` and `--gateway-size`); 0 when every worker has a session of its own."),
	omit(Input, "fleet.gateway_size", input, "The most workers one gateway carries; 0 without gateways."),

	// The workers' own counters, summed.
	// The start version counts without a deploy; syncs, heartbeats and their replies cross
	// the links and gateways whatever the scenario sends.
	exact(Count, "workers.at_version[*]", Neither, "Workers by the version they run at the end, a map: `workers.at_version[\"2.1.0\"]`."),
	band(Count, "workers.applied", Neither, "Config and firmware updates applied.").fed(FeedCommands),
	exact(Count, "workers.applied_twice", Lower, "Workers that applied one version more than once (must stay 0).").fed(FeedCommands),
	other(List, "workers.applied_twice_ids", "The ids of those workers, a list: the first 100 in fleet order (`workers.applied_twice` counts them all), so that a failing run names the workers to look at. Left out of the JSON report when empty.").fed(FeedCommands),
	band(Count, "workers.duplicates", Neither, "Redeliveries the workers recognised and skipped: a command with the key and sequence number of one already applied (its ack was lost, or came too late, and the leader sent it again).").fed(feedToWorkers),
	band(Count, "workers.stale", Neither, "Commands the workers did not apply because their sequence number was below the one applied under their key: an older version than the one running.").fed(FeedCommands),
	band(Count, "workers.expired", Lower, "Commands past their TTL when a worker got to them.").fed(FeedCommands),
	band(Count, "workers.acked_ok", Neither, "Commands a worker acknowledged \"ok\".").fed(FeedCommands),
	band(Count, "workers.acked_full", Neither, "Commands a worker answered \"full, retry after\".").fed(FeedCommands),
	band(Small, "workers.max_attempt", Lower, "Highest delivery attempt any worker saw.").fed(FeedCommands),
	band(Count, "workers.connects", Neither, "Successful connects."),
	band(Count, "workers.connect_attempts", Neither, "Connect attempts."),
	band(Count, "workers.reconnects", Neither, "Connects after the first."),
	band(Count, "workers.connections_lost", Neither, "Connections lost."),
	exact(Count, "workers.malformed", Neither, "Malformed messages workers received."),
	band(Count, "workers.crashes", Neither, "Connections the workers dropped without a word (crash events; a `reboot` drops its connection too, but counts in the `reboot` event's `events[\"name\"].workers`)."),
	band(Count, "workers.refused", Neither, "Commands the workers refused for good with a reject answer (poison); the leader dead-letters them at once.").fed(FeedCommands),
	band(Count, "workers.link_lost", Lower, "Messages the workers' lossy links lost, both ways (`fleet.worker.loss`): a lost command or answer times out the leader's ask and the command goes again; a lost request, telemetry message or reply times out the worker's ask."),
	band(Count, "workers.gateway_dropped", Lower, "Messages a gateway dropped for a worker behind it whose loop was 16 messages behind (gateway mode; a gateway never waits for one device): a dropped command is delivered again when the leader's ask times out, a dropped reply asked for again."),
	// The gateways' counts, wills and lost sessions included, are fed by commands (all 0
	// without gateways).
	band(Count, "gateways.connections_lost", Neither, "Gateway sessions lost (a partition of the gateway, a broker gone); 0 without gateways.").fed(FeedCommands),
	band(Count, "gateways.devices_lost", Neither, "Device sessions lost with their gateway's session: the gateway's will takes them offline at the leader.").fed(FeedCommands),
	band(Count, "gateways.wills", Neither, "Device wills the gateways published: devices that dropped off their gateway without a goodbye (a crash, a partition of the device).").fed(FeedCommands),
	band(Count, "gateways.downlink_forwarded", Neither, "Commands the gateways' downlinks sent to their devices after their airtime (`fleet.gateway_downlink`).").fed(FeedCommands),
	band(Count, "gateways.downlink_refused", Lower, "Commands a gateway answered \"full, retry after\" for its device, its downlink queue full (`fleet.gateway_downlink`): the pushback the relay's AIMD limit reacts to, counted in `relay.backpressure` too.").fed(FeedCommands),
	band(Count, "gateways.downlink_dropped", Lower, "Commands dropped from a downlink queue when its gateway lost its session: the leader's asks for them time out and they go again.").fed(FeedCommands),
	band(Small, "gateways.downlink_max_queue", Lower, "The longest any gateway's downlink queue was, the command on the air included.").fed(FeedCommands),
	band(Count, "workers.sync_sent", Neither, "\"sync\" requests sent (one per connect)."),
	band(Count, "workers.sync_ok", Neither, "\"sync\" requests answered ok."),
	band(Count, "workers.sync_full", Neither, "\"sync\" requests answered \"full, retry after\"."),
	omit(Count, "workers.sync_timeouts", timeouts, "\"sync\" requests that got no answer in time."),
	omit(Input, "workers.mailbox.capacity", input, "Capacity of the workers' mailboxes, summed."),
	other(Text, "workers.mailbox.policy", "The workers' mailbox policy."),
	band(Count, "workers.mailbox.offered", Neither, "Commands offered to worker mailboxes.").fed(feedToWorkers),
	band(Count, "workers.mailbox.taken", Neither, "Commands taken out to be served.").fed(feedToWorkers),
	band(Count, "workers.mailbox.dropped", Lower, "Commands dropped by the policy.").fed(feedToWorkers),
	band(Count, "workers.mailbox.rejected", Neither, "Commands rejected (mailbox full).").fed(feedToWorkers),
	band(Count, "workers.mailbox.depth", Lower, "Commands queued at the end.").fed(feedToWorkers),
	band(Count, "workers.mailbox.max_depth", Lower, "Most commands queued at once.").fed(feedToWorkers),
	band(Timing, "workers.mailbox.wait.p50", Lower, "Time from offer to take, seconds.").fed(feedToWorkers),
	omit(Timing, "workers.mailbox.wait.p90", p90, "Time from offer to take, seconds.").fed(feedToWorkers),
	band(Timing, "workers.mailbox.wait.p99", Lower, "Time from offer to take, seconds.").fed(feedToWorkers),
	omit(Timing, "workers.mailbox.wait.max", outlier, "Time from offer to take, seconds.").fed(feedToWorkers),
	omit(Timing, "workers.mailbox.wait.mean", centre, "Time from offer to take, seconds.").fed(feedToWorkers),

	// The leader, summed over its restarts.
	// The leader's mailbox counts without commands: every connect sends a sync.
	omit(Input, "leader.mailbox.capacity", input, "The leader mailbox's capacity.").exports("fleetsim_leader_mailbox_capacity", ""),
	other(Text, "leader.mailbox.policy", "Its policy."),
	band(Count, "leader.mailbox.offered", Neither, "Requests and telemetry offered to it."),
	band(Count, "leader.mailbox.taken", Neither, "Taken out to be served."),
	band(Count, "leader.mailbox.dropped", Lower, "Dropped by the policy.").exports("fleetsim_leader_mailbox_dropped_total", "Messages the mailbox dropped by its policy."),
	band(Count, "leader.mailbox.rejected", Neither, "Rejected (full).").exports("fleetsim_leader_mailbox_rejected_total", "Messages the full mailbox refused (answered full, retry after)."),
	band(Count, "leader.mailbox.depth", Lower, "Queued at the end.").exports("fleetsim_leader_mailbox_depth", "Worker requests and telemetry waiting for the leader."),
	band(Count, "leader.mailbox.max_depth", Lower, "Most queued at once."),
	band(Timing, "leader.mailbox.wait.p50", Lower, "Time from offer to take, seconds.").exports("fleetsim_leader_mailbox_wait_seconds", ""),
	omit(Timing, "leader.mailbox.wait.p90", p90, "Time from offer to take, seconds."),
	band(Timing, "leader.mailbox.wait.p99", Lower, "Time from offer to take, seconds.").exports("fleetsim_leader_mailbox_wait_seconds", "Time from a message's arrival to the leader taking it."),
	omit(Timing, "leader.mailbox.wait.max", outlier, "Time from offer to take, seconds.").exports("fleetsim_leader_mailbox_wait_seconds", ""),
	omit(Timing, "leader.mailbox.wait.mean", centre, "Time from offer to take, seconds."),
	band(Count, "leader.requests_received", Neither, "Worker requests received.").exports("fleetsim_leader_requests_received_total", ""),
	band(Count, "leader.requests_served", Neither, "Worker requests served."),
	band(Count, "leader.telemetry_received", Neither, "Telemetry messages received.").exports("fleetsim_leader_telemetry_received_total", "").fed(FeedTelemetry),
	band(Count, "leader.telemetry_served", Neither, "Telemetry messages served.").fed(FeedTelemetry),
	band(Count, "leader.answered_full", Neither, "Requests and telemetry answered \"full, retry after\".").exports("fleetsim_leader_answered_full_total", ""),
	exact(Count, "leader.malformed", Neither, "Malformed messages the leader received and refused (bad topic, envelope or status).").exports("fleetsim_leader_malformed_total", ""),
	band(Count, "leader.reconnects", Lower, "Workers the leader saw come back online after being offline, or online on a new connection.").exports("fleetsim_leader_worker_reconnects_total", ""),
	band(Timing, "leader.ask_rtt.p50", Lower, "Round trip of a delivery and its ack, simulated seconds: the workers' modelled `rtt` (the broker's transit takes no simulated time; a worker answers as its mailbox takes or refuses the command).").fed(FeedCommands),
	omit(Timing, "leader.ask_rtt.p90", p90, "Round trip of a delivery and its ack, simulated seconds: the workers' modelled `rtt` (the broker's transit takes no simulated time; a worker answers as its mailbox takes or refuses the command).").fed(FeedCommands),
	band(Timing, "leader.ask_rtt.p99", Lower, "Round trip of a delivery and its ack, simulated seconds: the workers' modelled `rtt` (the broker's transit takes no simulated time; a worker answers as its mailbox takes or refuses the command).").fed(FeedCommands),
	omit(Timing, "leader.ask_rtt.max", outlier, "Round trip of a delivery and its ack, simulated seconds: the workers' modelled `rtt` (the broker's transit takes no simulated time; a worker answers as its mailbox takes or refuses the command).").fed(FeedCommands),
	omit(Timing, "leader.ask_rtt.mean", centre, "Round trip of a delivery and its ack, simulated seconds: the workers' modelled `rtt` (the broker's transit takes no simulated time; a worker answers as its mailbox takes or refuses the command).").fed(FeedCommands),
	band(Count, "leader.asks_sent", Neither, "Deliveries sent.").fed(FeedCommands),
	omit(Count, "leader.asks_timed_out", timeouts, "Deliveries with no ack within `leader.ask_timeout`.").exports("fleetsim_leader_asks_timed_out_total", "").fed(FeedCommands),

	// Heartbeat coalescing, end to end.
	band(Count, "heartbeats.sent", Neither, "Heartbeats sent by workers.").fed(FeedHeartbeats),
	band(Count, "heartbeats.stored", Neither, "Heartbeats kept in a worker's local outbox while the leader could not take them.").fed(FeedHeartbeats),
	band(Count, "heartbeats.received", Neither, "Heartbeats the leader received.").exports("fleetsim_leader_heartbeats_received_total", "").fed(FeedHeartbeats),
	band(Count, "heartbeats.processed", Neither, "Heartbeats the leader processed on its cadence.").exports("fleetsim_leader_heartbeats_processed_total", "").fed(FeedHeartbeats),
	band(Count, "heartbeats.coalesced", Neither, "Heartbeats replaced by a newer one before the leader looked (at the leader and in the local outboxes).").fed(FeedHeartbeats),
	band(Ratio, "heartbeats.coalesced_ratio", Higher, "`coalesced / received` (0 when none were received).").fed(FeedHeartbeats),
	band(Count, "heartbeats.max_queued", Lower, "Most heartbeats waiting at the leader at once (one per worker when coalescing works).").fed(FeedHeartbeats),
	band(Timing, "heartbeats.age.p50", Lower, "Age of a heartbeat when the leader processed it, seconds.").fed(FeedHeartbeats),
	omit(Timing, "heartbeats.age.p90", p90, "Age of a heartbeat when the leader processed it, seconds.").fed(FeedHeartbeats),
	band(Timing, "heartbeats.age.p99", Lower, "Age of a heartbeat when the leader processed it, seconds.").fed(FeedHeartbeats),
	omit(Timing, "heartbeats.age.max", outlier, "Age of a heartbeat when the leader processed it, seconds.").fed(FeedHeartbeats),
	omit(Timing, "heartbeats.age.mean", centre, "Age of a heartbeat when the leader processed it, seconds.").fed(FeedHeartbeats),
	// The leader's cadence ticks without heartbeats.
	band(Count, "heartbeats.rounds", Neither, "Heartbeat processing rounds."),

	// The relay, over every partition.
	omit(Input, "relay.partitions", input, "Relay partitions.").shown(FormatNumber),
	omit(Input, "relay.limit.initial", input, "The AIMD limit each partition started at.").shown(FormatNumber),
	// Without commands the limits stay at the configured ones: not 0.
	band(Small, "relay.limit.min", Neither, "The lowest limit any partition reached (the partition's limit, over all its workers; slow lanes are not counted)."),
	band(Small, "relay.limit.max", Neither, "The highest limit any partition reached."),
	band(Small, "relay.limit.final", Neither, "Sum of the partitions' limits at the end.").exports("fleetsim_outbox_limiter_current_limit", "AIMD limit on concurrent deliveries now."),
	band(Count, "relay.limit.decreases", Neither, "Times a partition's limit fell (at most once per window of deliveries in flight), summed over partitions and leader restarts. A \"full\" from a worker already known to be slow halves its partition's slow lane instead and is not counted here (see `leader.relay.limit.strategy`).").fed(FeedCommands),
	band(Count, "relay.delivered", Neither, "Deliveries the worker acknowledged ok.").exports("fleetsim_outbox_relay_delivered_total", "").fed(FeedCommands),
	band(Count, "relay.backpressure", Neither, "Deliveries answered \"full\" (the first of each window halves the limit: the partition's for a worker not yet known to be slow, the slow lane's for one that is; see `relay.limit.decreases`).").exports("fleetsim_outbox_relay_backpressure_total", "").fed(FeedCommands),
	band(Count, "relay.retries", Neither, "Failed attempts requeued with a delay, after a \"full\" or a transient failure.").exports("fleetsim_outbox_relay_retries_total", "").fed(FeedCommands),
	band(Count, "relay.errors", Lower, "Transient failures (timeouts, offline, network); the limit stays.").exports("fleetsim_outbox_relay_errors_total", "").fed(FeedCommands),
	exact(Count, "relay.dead_lettered", Neither, "Commands moved to the dead letters (rejected, or out of attempts).").exports("fleetsim_outbox_relay_dead_lettered_total", "").fed(FeedCommands),
	band(Count, "relay.offline_skips", Neither, "Times the relay skipped a worker known to be offline (or, after a leader (re)start, not yet heard to be online) instead of trying it, parking its command until the worker's `online`.").exports("fleetsim_outbox_relay_offline_skips_total", "").fed(FeedCommands),

	// The leader's outbox.
	band(Count, "outbox.enqueued", Neither, "Commands enqueued.").exports("fleetsim_outbox_enqueued_total", "").fed(FeedCommands),
	band(Count, "outbox.acked", Neither, "Commands settled as delivered.").exports("fleetsim_outbox_acked_total", "").fed(FeedCommands),
	band(Count, "outbox.overwritten", Neither, "Commands replaced by a newer one for the same worker and key.").exports("fleetsim_outbox_overwritten_total", "").fed(FeedCommands),
	band(Count, "outbox.stale", Neither, "Commands refused because a newer one was already queued.").fed(FeedCommands),
	band(Count, "outbox.expired", Lower, "Commands dropped at their TTL.").exports("fleetsim_outbox_expired_total", "").fed(FeedCommands),
	exact(Count, "outbox.dead_lettered", Neither, "Commands moved to the dead letters.").fed(FeedCommands),
	band(Count, "outbox.replayed", Neither, "Dead letters put back in the queue (`replay_dead_letters`), each with a fresh attempt count: on the outbox's ledger they count as sent again.").fed(FeedCommands),
	band(Count, "outbox.depth", Lower, "Commands still queued at the end.").exports("fleetsim_outbox_depth", "Commands queued, leased ones included.").fed(FeedCommands),
	exact(Count, "outbox.dead_letters", Neither, "Dead letters at the end.").exports("fleetsim_outbox_dead_letters", "Commands in the dead letters now.").fed(FeedCommands),
	band(Count, "outbox.max_depth", Lower, "Most commands queued at once: the outbox's own high-water mark (per commit, for bbolt).").fed(FeedCommands),
	band(Timing, "outbox.oldest_max", Lower, "Age of the oldest queued command at its worst (sampled), seconds.").fed(FeedCommands),

	// The balance of the leader's commands.
	band(Count, "commands.sent", Neither, "Commands the leader sent.").fed(FeedCommands),
	omit(Input, "commands.poisoned", input+" (the timeline's poison commands; relay.dead_lettered measures where they went)", "Poison commands the timeline sent; each must end in the dead letters.").fed(FeedCommands),
	exact(Count, "commands.queued", Lower, "Commands still queued at the end.").fed(FeedCommands),
	band(Count, "commands.dropped_after_ack", Lower, "Commands a worker acknowledged `ok` — accepted into its mailbox, which is what an ack means: the leader settles the command as delivered — that the worker's mailbox policy then dropped before serving them (`drop-oldest` evicts the oldest). Counted, not lost, and never applied: `commands.dropped_after_ack == 0` catches them.").fed(FeedCommands),
	band(Count, "commands.lost_in_reboot", Lower, "Commands a worker acknowledged `ok` and lost in a `reboot` before applying them: in its mailbox (which counts them in `workers.mailbox.taken`: the reboot took them out) or in service. The mailbox is RAM; the leader had settled them as delivered. Counted, not lost, and never applied.").fed(FeedCommands),
	exact(Count, "commands.lost", Lower, "Commands unaccounted for: the outbox's ledger (sent = acked + overwritten + stale + expired + dead-lettered + still queued), the workers' (acked ok = served or lost in a reboot + dropped after ack + still in a mailbox), outbox acks no worker gave, and deploy targets that never got their version without a counted reason.").fed(FeedCommands),

	// The balance of the workers' telemetry.
	band(Count, "telemetry.generated", Neither, "Telemetry messages workers generated.").fed(FeedTelemetry),
	band(Count, "telemetry.direct", Neither, "Accepted by the leader on the first try.").fed(FeedTelemetry),
	band(Count, "telemetry.stored", Neither, "Kept in a worker's local outbox.").fed(FeedTelemetry),
	band(Count, "telemetry.forwarded", Neither, "Accepted later from a local outbox.").fed(FeedTelemetry),
	band(Count, "telemetry.rejected", Neither, "Rejected by the leader.").fed(FeedTelemetry),
	band(Count, "telemetry.dropped", Lower, "Dropped because a local outbox was full (counted).").fed(FeedTelemetry),
	band(Count, "telemetry.lost_in_reboot", Lower, "Lost in a `reboot` (counted): waiting in the worker's local outbox, or sent and not yet answered.").fed(FeedTelemetry),
	omit(Count, "telemetry.pending", "asks in flight when the workers stop: a race, not a loss (telemetry.lost and the expectations judge the balance)", "Still stored at the end.").fed(FeedTelemetry),
	exact(Count, "telemetry.lost", Lower, "Telemetry unaccounted for.").fed(FeedTelemetry),

	// The timeline's deploys, events and windows; windows come last, in the order of their own table in docs/SCENARIOS.md.
	collection("deploys", `[]`, "The timeline's deploys, in order: a list.").fed(FeedCommands),
	other(Text, "deploys[*].version", "The version deployed.").fed(FeedCommands),
	omit(Input, "deploys[*].targets", input+" (the workers the deploy's selector names)", "Workers it targeted.").exports("fleetsim_deploy_targets", "Workers a deploy targets (the newest --deploy-history + 100 deploys kept at most; a version not 1 to 64 letters, digits or . _ + - as (invalid)).").fed(FeedCommands),
	exact(Count, "deploys[*].delivered", Higher, "Workers it reached.").fed(FeedCommands),
	exact(Count, "deploys[*].rejected", Neither, "Workers that refused it.").fed(FeedCommands),
	exact(Count, "deploys[*].early", Lower, "Workers that applied it before their wave was due, by the waves the leader planned: a rollout that lost its pacing (a restarted leader releasing every remaining wave at once). Must stay 0.").fed(FeedCommands),
	band(Timing, "deploys[*].duration", Lower, "From the first wave's start to the last target's delivery, seconds; +Inf (null in JSON) if it did not finish, so an upper bound on it fails and a lower bound holds.").fed(FeedCommands),
	// The jobs of the timeline's jobs events, pushed or pulled (all 0 without one).
	omit(Input, "jobs.added", input+" (the jobs events' counts)", "Jobs the timeline's `jobs` events added.").fed(FeedJobs),
	band(Count, "jobs.pushed", Neither, "Of those, assigned to pushing workers through the relay, as job commands.").fed(FeedJobs),
	band(Count, "jobs.queued", Neither, "Of those, put in the leader's job queue for pulling workers.").fed(FeedJobRequests),
	exact(Count, "jobs.not_added", Lower, "Jobs an event could not add (the job queue full, the run ending), each a warning of the run.").fed(FeedJobs),
	exact(Count, "jobs.done", Higher, "Jobs applied by a worker.").fed(FeedJobs),
	exact(Count, "jobs.done_twice", Lower, "Jobs applied by more than one worker, or more than once: a pulled job whose lease ran out while its worker still held it and applied it. Must stay 0.").fed(FeedJobs),
	band(Count, "jobs.done_by[*]", Neither, "Jobs applied, by the group of the worker that applied them, a map: `jobs.done_by[\"fast\"]`.").fed(FeedJobs),
	band(Timing, "jobs.makespan", Lower, "From the first `jobs` event to the last job applied, seconds; +Inf (null in JSON) while any job is not done; 0 without jobs.").fed(FeedJobs),
	band(Small, "jobs.held_max[*]", Lower, "The most jobs one device of the group held at once, queued or in service, a map: `jobs.held_max[\"slow\"]`: the jobs waiting at a device. A pulling device holds one.").fed(FeedJobs),
	exact(Count, "jobs.depth", Lower, "Jobs waiting in the leader's job queue at the end.").fed(FeedJobRequests),
	exact(Count, "jobs.leased", Lower, "Jobs leased to a worker and not reported done at the end.").fed(FeedJobRequests),
	band(Timing, "jobs.oldest_age", Lower, "Age of the oldest job not done (queued or leased) in the leader's job queue at its worst, seconds: the most it was in any sample of the run or at its end (0 when the queue was empty in all of them).").fed(FeedJobRequests),
	exact(Count, "jobs.lost", Lower, "Jobs neither done nor waiting in the queue: `added - not_added - done - depth - leased`. A pushed job acked by a worker that rebooted before applying it counts here (and in `commands.lost_in_reboot`); a pulled one goes back to the queue when its lease runs out.").fed(FeedJobs),
	band(Count, "jobs.polls", Neither, "Job requests the pulling workers sent: the poll traffic.").fed(FeedJobRequests),
	band(Count, "jobs.drained", Neither, "Job requests answered \"drained\": polls that found nothing to do, what pulling costs.").fed(FeedJobRequests),
	exact(Count, "jobs.refused", Lower, "Job requests the leader refused (a worker that may not pull).").fed(FeedJobRequests),
	band(Count, "jobs.leases", Neither, "Leases the leader gave (a request asked again and answered with the same job not counted).").fed(FeedJobRequests),
	band(Count, "jobs.expired", Neither, "Leases that ran out before their job was reported done: the job went back to the queue.").fed(FeedJobRequests),
	band(Count, "jobs.abandoned", Neither, "Pulled jobs a worker let go without applying: its lease ran out, or its session was lost while it held the job (or it rebooted).").fed(FeedJobRequests),
	band(Count, "jobs.stranded_waits", Lower, "Job requests that got no answer within the poll timeout (dropped on the way): asked again with the same id.").fed(FeedJobRequests),
	collection("events", `["E"]`, "The timeline's named events, a map by name: `events[\"away\"]`."),
	omit(Input, "events[*].workers", input+" (the workers the event's selector names)", "How many workers the event selected at this fleet's size (0 for events that select none): write `events[\"away\"].workers`, not `fleet.count / 5`, and the check holds at any `--workers`."),
	omit(Input, "events[*].at", input+" (when the timeline's event was due)", "When it was scheduled, seconds (the scenario's input).").in(UnitSeconds),
	collection("windows", `["W"]`, "The scenario's windows, a map by name, see [Windows](#windows)."),
	omit(Input, "windows[*].from", input+" (the window's edge)", "Its edges as they were read, simulated seconds.").in(UnitSeconds),
	omit(Input, "windows[*].to", input+" (the window's edge)", "Its edges as they were read, simulated seconds.").in(UnitSeconds),
	band(Count, "windows[*].leader.mailbox.offered", Neither, "The leader mailbox's counts inside the window."),
	band(Count, "windows[*].leader.mailbox.taken", Neither, "The leader mailbox's counts inside the window."),
	band(Count, "windows[*].leader.mailbox.rejected", Neither, "The leader mailbox's counts inside the window."),
	band(Count, "windows[*].leader.mailbox.dropped", Lower, "The leader mailbox's counts inside the window."),
	band(Count, "windows[*].leader.mailbox.max_depth", Lower, "Most queued at once inside it, exactly: the most the leader's mailbox held between the window's edges (when the leader restarted inside it, from the restart on)."),
	band(Count, "windows[*].leader.mailbox.depth", Lower, "As at its end."),
	omit(Input, "windows[*].leader.mailbox.capacity", input, "As at its end."),
	other(Text, "windows[*].leader.mailbox.policy", "As at its end."),
	band(Timing, "windows[*].leader.mailbox.wait.p50", Lower, "Wait of the messages taken from the mailbox inside the window (max: within 12.5%)."),
	omit(Timing, "windows[*].leader.mailbox.wait.p90", p90, "Wait of the messages taken from the mailbox inside the window (max: within 12.5%)."),
	band(Timing, "windows[*].leader.mailbox.wait.p99", Lower, "Wait of the messages taken from the mailbox inside the window (max: within 12.5%)."),
	omit(Timing, "windows[*].leader.mailbox.wait.max", outlier, "Wait of the messages taken from the mailbox inside the window (max: within 12.5%)."),
	omit(Timing, "windows[*].leader.mailbox.wait.mean", centre, "Wait of the messages taken from the mailbox inside the window (max: within 12.5%)."),
	band(Count, "windows[*].leader.requests_served", Neither, "Worker requests served inside it."),
	band(Count, "windows[*].leader.answered_full", Neither, "Requests answered \"full, retry after\" inside it."),
	band(Count, "windows[*].relay.delivered", Neither, "The relay's counts inside it, as `relay.*` over the run.").fed(FeedCommands),
	band(Count, "windows[*].relay.backpressure", Neither, "The relay's counts inside it, as `relay.*` over the run.").fed(FeedCommands),
	band(Count, "windows[*].relay.retries", Neither, "The relay's counts inside it, as `relay.*` over the run.").fed(FeedCommands),
	band(Count, "windows[*].relay.errors", Lower, "The relay's counts inside it, as `relay.*` over the run.").fed(FeedCommands),
	band(Count, "windows[*].relay.offline_skips", Neither, "The relay's counts inside it, as `relay.*` over the run.").fed(FeedCommands),
	band(Count, "windows[*].workers.connects", Neither, "The workers' counts inside it, as `workers.*` over the run."),
	band(Count, "windows[*].workers.sync_sent", Neither, "The workers' counts inside it, as `workers.*` over the run."),
	band(Count, "windows[*].workers.sync_ok", Neither, "The workers' counts inside it, as `workers.*` over the run."),
	band(Count, "windows[*].workers.sync_full", Neither, "The workers' counts inside it, as `workers.*` over the run."),
	band(Count, "windows[*].workers.acked_full", Neither, "The workers' counts inside it, as `workers.*` over the run.").fed(FeedCommands),
}

// Why a baseline omits a number.
const (
	input    = "the scenario's input, not a measurement"
	p90      = "p50 and p99 gate the centre and the tail; p90 is for reading"
	outlier  = "one outlier; p99 carries the tail"
	centre   = "p50 carries the centre"
	timeouts = "timeouts: 0 or hundreds, as a crash or a partition happens to land on asks in flight"
)
