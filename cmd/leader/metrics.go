package main

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// source is what the collector reads; *leader.Leader provides it.
type source interface {
	Stats() leader.Stats
	Fleet() leader.FleetView
	DeploySummaries() []leader.DeploySummary
}

// collector exports a leader's stats as fleetsim_* metrics. It reads
// leader.Stats, Fleet and Deploys at each scrape, so /metrics shows the
// same numbers as the stats topic (one source of numbers).
type collector struct {
	src source
	// ctl counts the deploy requests; nil: no deploy requests taken.
	ctl *control.Server
	// deploySeries bounds the deploys fleetsim_deploy_* export, newest
	// first.
	deploySeries int
	// broker reads the embedded broker's stats; nil: no embedded broker.
	broker func() broker.Stats
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("fleetsim_"+name, help, labels, nil)
}

// fromResult is the descriptor of a series that counts, over one leader
// process, what a run's metric named pattern counts over the run: its
// name is the registry's (result.Prom), and so is its help when help is
// "" (where the registry's meaning reads right for one process).
func fromResult(pattern, help string, labels ...string) *prometheus.Desc {
	if help == "" {
		m, _ := result.Lookup(pattern)
		help = m.Meaning
	}
	return prometheus.NewDesc(result.Prom(pattern), help, labels, nil)
}

var (
	// Per relay partition.
	dLimit        = fromResult("relay.limit.final", "AIMD limit on concurrent deliveries now.", "partition")
	dInFlight     = desc("outbox_relay_in_flight", "Deliveries running now.", "partition")
	dDelivered    = fromResult("relay.delivered", "Deliveries the worker acknowledged ok.", "partition")
	dBackpressure = fromResult("relay.backpressure", "Full answers from workers; the limit halves at most once per window of deliveries in flight together.", "partition")
	dRetries      = fromResult("relay.retries", "Failed attempts requeued with a delay.", "partition")
	dErrors       = fromResult("relay.errors", "Transient failures (timeouts, offline, network); the limit stays.", "partition")
	dDeadLettered = fromResult("relay.dead_lettered", "Commands moved to the dead letters (rejected, or out of attempts).", "partition")
	dOffline      = fromResult("relay.offline_skips", "Commands parked because their worker was offline (no attempt charged).", "partition")
	dSettleRetry  = desc("outbox_relay_settle_retries_total", "Settling calls repeated after the outbox failed one (the acks and nacks it carried were kept, not dropped).", "partition")

	// The outbox store.
	dDepth       = fromResult("outbox.depth", "Commands queued, leased ones included.")
	dLeased      = desc("outbox_leased", "Commands handed out and not yet settled.")
	dDeadLetters = fromResult("outbox.dead_letters", "Commands in the dead letters now.")
	dOldest      = desc("outbox_oldest_age_seconds", "Age of the oldest queued command.")
	dEnqueued    = fromResult("outbox.enqueued", "Commands enqueued since the leader started.")
	dOverwritten = fromResult("outbox.overwritten", "Queued commands replaced by a newer version.")
	dExpired     = fromResult("outbox.expired", "Commands dropped for their TTL.")
	dAcked       = fromResult("outbox.acked", "Commands delivered and removed.")

	// The leader's mailbox and counters.
	dMbDepth       = fromResult("leader.mailbox.depth", "Worker requests and telemetry waiting for the leader.")
	dMbCap         = fromResult("leader.mailbox.capacity", "Capacity of the leader's mailbox.")
	dMbRejected    = fromResult("leader.mailbox.rejected", "Messages the full mailbox refused (answered full, retry after).")
	dMbDropped     = fromResult("leader.mailbox.dropped", "Messages the mailbox dropped by its policy.")
	dMbWait        = fromResult("leader.mailbox.wait.p99", "Time from a message's arrival to the leader taking it.")
	dHbReceived    = fromResult("heartbeats.received", "Heartbeats received.")
	dHbDone        = fromResult("heartbeats.processed", "Heartbeats processed (the rest were coalesced into newer ones).")
	dHbCoalesce    = desc("leader_heartbeats_coalesced_total", "Heartbeats replaced by a newer one before the leader looked.")
	dRequests      = fromResult("leader.requests_received", "")
	dTelemetry     = fromResult("leader.telemetry_received", "")
	dFull          = fromResult("leader.answered_full", "Requests and telemetry answered full, retry after.")
	dAcks          = desc("leader_acks_total", "Acks of commands, by result.", "result")
	dTimeouts      = fromResult("leader.asks_timed_out", "Deliveries with no ack within the ask timeout.")
	dMalformed     = fromResult("leader.malformed", "Payloads refused (bad topic, envelope or status).")
	dReconnects    = fromResult("leader.reconnects", "")
	dStale         = desc("leader_status_stale_total", "Statuses ignored as leftovers of a session that is gone: an offline of another epoch than the current connection's (a late will), a device's online via a gateway known offline.")
	dForged        = desc("leader_acks_forged_total", "Acks from a worker other than the one the command went to (the up topic names the sender): ignored, the command waits for its own worker's answer.")
	dDeployReqs    = desc("leader_deploy_requests_total", "Deploy and cancel requests on <prefix>/_leader/deploy, by result: started, repeated (an id that started a deploy before: answered with it), cancelled, refused (answered with the reason), unanswered (no valid id: logged only), dropped (too many waiting).", "result")
	dDeployAnswers = desc("leader_deploy_answers_total", "Answers to deploy and cancel requests, by how they went out: qos1 (the broker took it), qos0 (QoS 1 failed, sent at QoS 0), lost (neither, after retries: the requester asks again, or reports the outcome unknown).", "via")
	dRepDropped    = desc("leader_replies_dropped_total", "Answers to worker requests dropped unsent, by reason: queue_full (the reply queue was full) or stopping; the worker asks again.", "reason")
	dRefused       = desc("refused_total", "What was refused on its way to the leader, by reason: auth, topic, packet_too_large, packet_timeout, partial_budget, connection_limit, rate_limited (at the embedded broker), payload_too_large, malformed, forged_ack (at the leader).", "reason")

	// The fleet as the leader sees it.
	dOnline    = fromResult("fleet.leader_online", "Workers whose last status is online.")
	dOfflineW  = desc("workers_offline", "Workers whose last status is offline.")
	dSuspect   = desc("workers_suspect", "Workers online by their last status but not heard from for --suspect-after: their commands wait until they are heard.")
	dHeardBack = desc("leader_workers_heard_back_total", "Workers brought online by a message of theirs: the leader had them offline, had not heard of them (no retained status came) or suspected them.")
	dSuspected = desc("leader_workers_suspected_total", "Workers found silent for --suspect-after.")
	dByVersion = desc("workers_version", "Workers per version reported in their last processed heartbeat: the 32 versions with the most workers, the other valid ones summed as (other), versions that are not 1 to 64 letters, digits or . _ + - as (invalid).", "version")

	// The deploys the leader keeps: its newest --deploy-history ones, and
	// any older one with updates queued; from the outbox file, so they
	// outlive a restart. deploy is the index 'leader deploy' answered.
	dDeployTargets   = fromResult("deploys[*].targets", "Workers a deploy targets (the newest --deploy-history + 100 deploys kept at most; a version not 1 to 64 letters, digits or . _ + - as (invalid)).", "deploy", "version")
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

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	counter := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	for i, p := range s.Relay.Partitions {
		part := strconv.Itoa(i)
		gauge(dLimit, float64(p.Limit), part)
		gauge(dInFlight, float64(p.InFlight), part)
		counter(dDelivered, p.Delivered, part)
		counter(dBackpressure, p.Backpressure, part)
		counter(dRetries, p.Retries, part)
		counter(dErrors, p.Errors, part)
		counter(dDeadLettered, p.DeadLettered, part)
		counter(dOffline, p.OfflineSkips, part)
		counter(dSettleRetry, p.SettleRetries, part)
	}
	o := s.Outbox
	gauge(dDepth, float64(o.Depth))
	gauge(dLeased, float64(o.Leased))
	gauge(dDeadLetters, float64(o.DeadLetters))
	gauge(dOldest, o.OldestAge.Seconds())
	counter(dEnqueued, o.Enqueued)
	counter(dOverwritten, o.Overwritten)
	counter(dExpired, o.Expired)
	counter(dAcked, o.Acked)

	m := s.Mailbox
	gauge(dMbDepth, float64(m.Depth))
	gauge(dMbCap, float64(m.Capacity))
	counter(dMbRejected, m.Rejected())
	counter(dMbDropped, m.Dropped())
	ch <- prometheus.MustNewConstSummary(dMbWait, m.Wait.Count, m.Wait.Sum.Seconds(), map[float64]float64{
		0.5: m.Wait.Quantile(0.5).Seconds(), 0.99: m.Wait.Quantile(0.99).Seconds(), 1: m.Wait.Max.Seconds(),
	})
	counter(dHbReceived, s.HeartbeatsReceived)
	counter(dHbDone, s.HeartbeatsProcessed)
	counter(dHbCoalesce, s.Heartbeats.DroppedCoalesced)
	counter(dRequests, s.RequestsReceived)
	counter(dTelemetry, s.TelemetryReceived)
	counter(dFull, s.AnsweredFull)
	counter(dAcks, s.AcksOK, "ok")
	counter(dAcks, s.AcksFull, "full")
	counter(dAcks, s.AcksReject, "reject")
	counter(dForged, s.AcksForged)
	counter(dTimeouts, s.AsksTimedOut)
	counter(dMalformed, s.Malformed)
	counter(dReconnects, s.Reconnects)
	counter(dStale, s.StatusStale)
	counter(dHeardBack, s.HeardBack)
	counter(dSuspected, s.Suspected)
	gauge(dGwOnline, float64(s.GatewaysOnline))
	counter(dGwOfflines, s.GatewayOfflines)
	counter(dGwDevices, s.GatewayDevicesOffline)
	counter(dRepDropped, s.RepliesDroppedFull, "queue_full")
	counter(dRepDropped, s.RepliesDroppedStopping, "stopping")
	up := 0.0
	if s.Broker.Connected {
		up = 1
	}
	gauge(dBrokerUp, up)
	counter(dBrokerReconnects, s.Broker.Reconnects)
	ch <- prometheus.MustNewConstMetric(dBrokerDown, prometheus.CounterValue, s.Broker.Downtime.Seconds())
	for _, r := range s.Refused.ByReason() { // a fixed set of labels
		counter(dRefused, r.Count, r.Reason)
	}
	if c.broker != nil {
		b := c.broker()
		gauge(dTCPConns, float64(b.TCPConnections))
		gauge(dPartial, float64(b.PartialBytes))
	}

	f := c.src.Fleet()
	gauge(dOnline, float64(f.Online))
	gauge(dOfflineW, float64(f.Offline))
	gauge(dSuspect, float64(f.Suspect))
	for _, v := range versionSeries(f.ByVersion, maxVersionSeries) {
		gauge(dByVersion, float64(v.n), v.label)
	}
	// Bounded: the leader keeps its newest deploys (and those still in
	// flight), not every deploy it ever made; of those, the newest
	// deploySeries.
	deploys := c.src.DeploySummaries()
	if c.deploySeries > 0 && len(deploys) > c.deploySeries {
		deploys = deploys[len(deploys)-c.deploySeries:]
	}
	for _, d := range deploys {
		idx, ver := strconv.Itoa(d.Index), versionLabel(d.Version)
		gauge(dDeployTargets, float64(d.Targets), idx, ver)
		gauge(dDeployDelivered, float64(d.Totals.Delivered), idx, ver)
		gauge(dDeployRejected, float64(d.Totals.Rejected), idx, ver)
	}
	if c.ctl != nil {
		n := c.ctl.Counts()
		counter(dDeployReqs, n.Started, "started")
		counter(dDeployReqs, n.Repeated, "repeated")
		counter(dDeployReqs, n.Cancelled, "cancelled")
		counter(dDeployReqs, n.Refused, "refused")
		counter(dDeployReqs, n.Unanswered, "unanswered")
		counter(dDeployReqs, n.Dropped, "dropped")
		counter(dDeployAnswers, n.AnsweredQoS1, "qos1")
		counter(dDeployAnswers, n.AnsweredQoS0, "qos0")
		counter(dDeployAnswers, n.AnswersLost, "lost")
	}
}

// metricsHandler serves the leader's metrics plus the Go runtime's and the
// process's: ctl's deploy requests (nil: none), the newest deployHistory +
// deploySeriesExtra deploys, and the embedded broker's TCP clients
// (brokerStats; nil: none).
func metricsHandler(src source, ctl *control.Server, deployHistory int, brokerStats func() broker.Stats) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{src: src, ctl: ctl, deploySeries: deployHistory + deploySeriesExtra, broker: brokerStats},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return mux
}
