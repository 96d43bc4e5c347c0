package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// desc is the descriptor of a series only a running leader has.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("fleetsim_"+name, help, labels, nil)
}

// fromResult is the descriptor of a series that counts, over one leader
// process, what a run's metric named pattern counts over the run: its
// name and help are the registry's (result.Prom, Metric.PromHelp). A
// pattern the registry lacks panics at start-up, which every test of the
// package catches: a program's metric names are fixed, not input.
func fromResult(pattern string, labels ...string) *prometheus.Desc {
	m, _ := result.Lookup(pattern)
	return prometheus.NewDesc(result.Prom(pattern), m.PromHelp(), labels, nil)
}

var (
	// Per relay partition.
	dLimit        = fromResult("relay.limit.final", "partition")
	dInFlight     = desc("outbox_relay_in_flight", "Deliveries running now.", "partition")
	dDelivered    = fromResult("relay.delivered", "partition")
	dBackpressure = fromResult("relay.backpressure", "partition")
	dRetries      = fromResult("relay.retries", "partition")
	dErrors       = fromResult("relay.errors", "partition")
	dDeadLettered = fromResult("relay.dead_lettered", "partition")
	dOffline      = fromResult("relay.offline_skips", "partition")
	dSettleRetry  = desc("outbox_relay_settle_retries_total", "Settling calls repeated after the outbox failed one (the acks and nacks it carried were kept, not dropped).", "partition")

	// The outbox store.
	dDepth       = fromResult("outbox.depth")
	dLeased      = desc("outbox_leased", "Commands handed out and not yet settled.")
	dDeadLetters = fromResult("outbox.dead_letters")
	dOldest      = desc("outbox_oldest_age_seconds", "Age of the oldest queued command.")
	dEnqueued    = fromResult("outbox.enqueued")
	dOverwritten = fromResult("outbox.overwritten")
	dExpired     = fromResult("outbox.expired")
	dAcked       = fromResult("outbox.acked")

	// The leader's mailbox and counters.
	dMbDepth       = fromResult("leader.mailbox.depth")
	dMbCap         = fromResult("leader.mailbox.capacity")
	dMbRejected    = fromResult("leader.mailbox.rejected")
	dMbDropped     = fromResult("leader.mailbox.dropped")
	dMbWait        = fromResult("leader.mailbox.wait.p99")
	dHbReceived    = fromResult("heartbeats.received")
	dHbDone        = fromResult("heartbeats.processed")
	dHbCoalesce    = desc("leader_heartbeats_coalesced_total", "Heartbeats replaced by a newer one before the leader looked.")
	dRequests      = fromResult("leader.requests_received")
	dTelemetry     = fromResult("leader.telemetry_received")
	dFull          = fromResult("leader.answered_full")
	dAcks          = desc("leader_acks_total", "Acks of commands, by result.", "result")
	dTimeouts      = fromResult("leader.asks_timed_out")
	dMalformed     = fromResult("leader.malformed")
	dReconnects    = fromResult("leader.reconnects")
	dStale         = desc("leader_status_stale_total", "Statuses ignored as leftovers of a session that is gone: an offline of another epoch than the current connection's (a late will), a device's online via a gateway known offline.")
	dForged        = desc("leader_acks_forged_total", "Acks from a worker other than the one the command went to (the up topic names the sender): ignored, the command waits for its own worker's answer.")
	dDeployReqs    = desc("leader_deploy_requests_total", "Deploy and cancel requests on <prefix>/_leader/deploy, by result: started, repeated (an id that started a deploy before: answered with it), cancelled, refused (answered with the reason), unanswered (no valid id: logged only), dropped (too many waiting).", "result")
	dDeployAnswers = desc("leader_deploy_answers_total", "Answers to deploy and cancel requests, by how they went out: qos1 (the broker took it), qos0 (QoS 1 failed, sent at QoS 0), lost (neither, after retries: the requester asks again, or reports the outcome unknown).", "via")
	dRepDropped    = desc("leader_replies_dropped_total", "Answers to worker requests dropped unsent, by reason: queue_full (the reply queue was full) or stopping; the worker asks again.", "reason")
	dRefused       = desc("refused_total", "What was refused on its way to the leader, by reason: auth, topic, packet_too_large, packet_timeout, partial_budget, connection_limit, rate_limited (at the embedded broker), payload_too_large, malformed, forged_ack (at the leader).", "reason")

	// The fleet as the leader sees it.
	dOnline    = fromResult("fleet.leader_online")
	dOfflineW  = desc("workers_offline", "Workers whose last status is offline.")
	dSuspect   = desc("workers_suspect", "Workers online by their last status but not heard from for --suspect-after: their commands wait until they are heard.")
	dHeardBack = desc("leader_workers_heard_back_total", "Workers brought online by a message of theirs: the leader had them offline, had not heard of them (no retained status came) or suspected them.")
	dSuspected = desc("leader_workers_suspected_total", "Workers found silent for --suspect-after.")
	dByVersion = desc("workers_version", "Workers per version reported in their last processed heartbeat: the 32 versions with the most workers, the other valid ones summed as (other), versions that are not 1 to 64 letters, digits or . _ + - as (invalid).", "version")

	// The deploys the leader keeps: its newest --deploy-history ones, and
	// any older one with updates queued; from the outbox file, so they
	// outlive a restart. deploy is the index 'leader deploy' answered.
	dDeployTargets   = fromResult("deploys[*].targets", "deploy", "version")
	dDeployDelivered = desc("deploy_delivered", "Workers that acknowledged a deploy's update.", "deploy", "version")
	dDeployRejected  = desc("deploy_rejected", "Workers that refused a deploy's update for good.", "deploy", "version")

	// Gateways: one session carrying many devices; its death takes them
	// offline.
	dGwOnline   = desc("leader_gateways_online", "Gateways whose last status is online.")
	dGwOfflines = desc("leader_gateway_offlines_total", "Gateway offlines applied (a goodbye or a last will; stale ones are in leader_status_stale_total).")
	dGwDevices  = desc("leader_gateway_devices_offline_total", "Devices taken offline by their gateway: by its offline, or by its online on a new session.")

	// The leader's session with its broker: while it is down, deliveries
	// pause and the leader dials again.
	dBrokerUp         = desc("leader_broker_connected", "1 while the leader's session with its broker is up, 0 while it is lost and being dialed again.")
	dBrokerReconnects = desc("leader_broker_reconnects_total", "Sessions with the broker lost and dialed again.")
	dBrokerDown       = desc("leader_broker_disconnected_seconds_total", "Time the leader spent without a session with its broker, the outage in progress included.")

	// The embedded broker's TCP clients, against their limits (absent
	// with --broker).
	dTCPConns = desc("broker_tcp_connections", "TCP connections open at the embedded broker, logged in or in their handshake (bounded by --max-connections).")
	dPartial  = desc("broker_partial_bytes", "Bytes the embedded broker holds for TCP clients' packets still arriving (bounded by --max-partial-bytes).")
)

// allDescs is every series the collector describes.
var allDescs = []*prometheus.Desc{
	dLimit, dInFlight, dDelivered, dBackpressure, dRetries, dErrors, dDeadLettered, dOffline, dSettleRetry,
	dDepth, dLeased, dDeadLetters, dOldest, dEnqueued, dOverwritten, dExpired, dAcked,
	dMbDepth, dMbCap, dMbRejected, dMbDropped, dMbWait, dHbReceived, dHbDone, dHbCoalesce,
	dRequests, dTelemetry, dFull, dAcks, dTimeouts, dMalformed, dReconnects, dRepDropped, dRefused,
	dForged, dDeployReqs, dDeployAnswers,
	dOnline, dOfflineW, dSuspect, dHeardBack, dSuspected, dByVersion, dDeployTargets, dDeployDelivered, dDeployRejected,
	dBrokerUp, dBrokerReconnects, dBrokerDown,
	dStale, dGwOnline, dGwOfflines, dGwDevices,
	dTCPConns, dPartial,
}
