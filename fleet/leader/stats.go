package leader

import (
	"sync/atomic"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
)

type counters struct {
	malformed, rejectedMalformed                   atomic.Uint64
	reconnects, statusStale                        atomic.Uint64
	heardBack, suspected                           atomic.Uint64
	requestsReceived, requestsServed               atomic.Uint64
	telemetryReceived, telemetryServed             atomic.Uint64
	answeredFull                                   atomic.Uint64
	repliesSent, replyErrors                       atomic.Uint64
	repliesDroppedFull, repliesDroppedStopping     atomic.Uint64
	heartbeatsReceived, heartbeatsProcessed        atomic.Uint64
	heartbeatsStale, heartbeatsDropped             atomic.Uint64
	heartbeatRounds                                atomic.Uint64
	asksSent, asksFailed, asksTimedOut             atomic.Uint64
	acksOK, acksFull, acksReject, lateAcks, poison atomic.Uint64

	payloadTooLarge atomic.Uint64 // also counted in malformed
	acksForged      atomic.Uint64

	gatewayOfflines, gatewayDevicesOffline atomic.Uint64

	jobRequests, jobsRefused, jobsDrained atomic.Uint64
}

// Stats is everything the leader counts, for the dashboard, the reports and
// /metrics. Counters count since New.
type Stats struct {
	// Mailbox is the bounded mailbox of requests and telemetry.
	Mailbox mailbox.Stats
	// Heartbeats is the coalescing mailbox: DroppedCoalesced counts the
	// heartbeats replaced by a newer one before the leader looked, and
	// Wait is the age of what it processed.
	Heartbeats mailbox.Stats
	Relay      outbox.RelayStats
	Outbox     outbox.Stats
	Broker     BrokerStats // the session with the broker

	Malformed         uint64 // payloads refused (bad topic, envelope or status)
	RejectedMalformed uint64 // of those, answered with a reject
	Reconnects        uint64 // workers back online after being offline, or online on a new connection (epoch)
	// StatusStale counts statuses ignored as leftovers of a session that
	// is gone: an offline whose epoch is not that of the worker's (or
	// gateway's) current connection, the late last will of a connection
	// already replaced; and a device's online via a gateway the leader
	// knows offline, retained from that gateway's dead session.
	StatusStale uint64
	// HeardBack counts workers brought online by a message of theirs: the
	// leader had them offline (a will a broker lost would leave them
	// online; one delivered late, offline), had not heard of them (no
	// retained status came), or suspected them. Suspected counts workers
	// found silent for Config.SuspectAfter: their commands parked.
	HeardBack, Suspected uint64

	// GatewaysOnline is the number of gateways whose last status is
	// online.
	GatewaysOnline int
	// GatewayOfflines counts gateway offlines applied: a gateway's
	// goodbye or its last will (stale ones are in StatusStale).
	GatewayOfflines uint64
	// GatewayDevicesOffline counts the devices taken offline by their
	// gateway: by its offline, or by its online on a new connection
	// (the old session, and the devices it carried, are gone).
	GatewayDevicesOffline uint64

	RequestsReceived, RequestsServed   uint64
	TelemetryReceived, TelemetryServed uint64
	AnsweredFull                       uint64 // requests and telemetry answered "full, retry after"
	RepliesSent, ReplyErrors           uint64 // answers handed to the client; refused by it
	// RepliesDroppedFull counts answers dropped because the reply queue
	// (Config.ReplyQueue) was full, and RepliesDroppedStopping those that
	// came while the leader was stopping: the delivery goroutine never
	// waits for room. The worker's request times out and it asks again.
	RepliesDroppedFull, RepliesDroppedStopping uint64

	HeartbeatsReceived  uint64
	HeartbeatsProcessed uint64
	HeartbeatsStale     uint64 // processed ones not newer than the last (seq)
	HeartbeatsDropped   uint64 // refused by a full heartbeat mailbox (more workers than slots)
	HeartbeatRounds     uint64

	AsksSent, AsksFailed, AsksTimedOut uint64 // deliveries published, failed to publish, unanswered
	AcksOK, AcksFull, AcksReject       uint64
	LateAcks                           uint64 // acks after their ask gave up (delivered all the same)
	Poison                             uint64 // commands that could not be encoded (dead-lettered)
	// AcksForged counts acks from a worker other than the one the command
	// went to: ignored, the command waits for its own worker's answer.
	AcksForged uint64
	// AskRTT is the time from publishing a command to its ack, for asks
	// that were answered.
	AskRTT stats.HistogramSnapshot

	// PayloadTooLarge counts the Malformed payloads that were over
	// Config.MaxPayload (refused unparsed).
	PayloadTooLarge uint64
	// Jobs is the job queue's measures (zero without one): depth, age of
	// the oldest job, leases given and expired, jobs done. JobRequests
	// counts the job requests received (of RequestsReceived: the poll
	// traffic, whatever their answer), JobsDrained those answered
	// "drained", JobsRefused those refused (no queue, or a worker that
	// may not pull).
	Jobs                                  outbox.JobStats
	JobRequests, JobsDrained, JobsRefused uint64

	// Refused counts what was refused on its way to the leader, by
	// reason: the broker's refusals (Config.BrokerRefusals) and the
	// Malformed payloads, split by size.
	Refused Refusals
}

// Stats returns a snapshot of the leader's counters and its mechanisms'
// MailboxPeak returns the most worker requests and telemetry its mailbox
// held at once since the previous call (mailbox.Mailbox.Peak): for one
// reader, such as a scenario's window edges.
func (l *Leader) MailboxPeak() int { return l.inbox.Peak() }

// stats.
func (l *Leader) Stats() Stats {
	c := &l.c
	tooLarge := c.payloadTooLarge.Load() // before malformed, which counts it too
	s := Stats{
		Mailbox: l.inbox.Stats(), Heartbeats: l.heartbeats.Stats(),
		Relay: l.relay.Stats(), Outbox: l.cfg.Store.Stats(), Broker: l.link.stats(l.clk),
		Malformed: c.malformed.Load(), RejectedMalformed: c.rejectedMalformed.Load(),
		Reconnects: c.reconnects.Load(), StatusStale: c.statusStale.Load(),
		HeardBack: c.heardBack.Load(), Suspected: c.suspected.Load(),
		GatewaysOnline: l.fleet.gatewayCount(), GatewayOfflines: c.gatewayOfflines.Load(),
		GatewayDevicesOffline: c.gatewayDevicesOffline.Load(),
		RequestsReceived:      c.requestsReceived.Load(), RequestsServed: c.requestsServed.Load(),
		TelemetryReceived: c.telemetryReceived.Load(), TelemetryServed: c.telemetryServed.Load(),
		AnsweredFull: c.answeredFull.Load(),
		RepliesSent:  c.repliesSent.Load(), ReplyErrors: c.replyErrors.Load(),
		RepliesDroppedFull: c.repliesDroppedFull.Load(), RepliesDroppedStopping: c.repliesDroppedStopping.Load(),
		HeartbeatsReceived: c.heartbeatsReceived.Load(), HeartbeatsProcessed: c.heartbeatsProcessed.Load(),
		HeartbeatsStale: c.heartbeatsStale.Load(), HeartbeatsDropped: c.heartbeatsDropped.Load(),
		HeartbeatRounds: c.heartbeatRounds.Load(),
		AsksSent:        c.asksSent.Load(), AsksFailed: c.asksFailed.Load(), AsksTimedOut: c.asksTimedOut.Load(),
		AcksOK: c.acksOK.Load(), AcksFull: c.acksFull.Load(), AcksReject: c.acksReject.Load(),
		LateAcks: c.lateAcks.Load(), Poison: c.poison.Load(), AcksForged: c.acksForged.Load(),
		AskRTT: l.askRTT.Snapshot(),
		Jobs:   l.jobStats(), JobRequests: c.jobRequests.Load(), JobsDrained: c.jobsDrained.Load(), JobsRefused: c.jobsRefused.Load(),
	}
	s.PayloadTooLarge = tooLarge
	s.Refused = l.refusals(&s)
	return s
}
