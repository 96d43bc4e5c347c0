package worker

import (
	"maps"
	"time"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// Stats is what a worker counts.
type Stats struct {
	// Online: connected and announced. A worker with its own session is
	// online once the broker has taken its subscription and its "online";
	// a device behind a gateway as soon as it has handed them to the
	// gateway's session (it does not wait for the broker, which takes them
	// in order: the leader hears it online after its subscription is in
	// place).
	Online  bool
	Busy    bool
	Version string // applied

	ConnectAttempts, Connects, Reconnects, ConnectionsLost, Crashes uint64

	AckedOK, AckedFull uint64 // commands answered ok / full
	Malformed          uint64 // down payloads refused
	// Refused counts well-formed commands refused for good with a reject
	// ack (an apply of a version the worker cannot install): the leader
	// dead-letters them at once.
	Refused         uint64
	Applied         uint64 // config/firmware effects applied
	AppliedVersions map[string]int
	// FirstApplied is when each version was first applied, on the
	// worker's clock: a rollout's pacing is checked against it.
	FirstApplied map[string]time.Time
	Duplicates   uint64 // deliveries of an already-applied key and seq
	// Stale counts commands whose seq was below the one applied under
	// their key (an older version): not applied.
	Stale       uint64
	Expired     uint64 // commands past their TTL when served
	Jobs, Pings uint64
	// MaxAttempt is the highest delivery attempt number seen on a command:
	// 1 means every command arrived on the leader's first try.
	MaxAttempt int

	SyncSent, SyncOK, SyncFull, SyncTimeouts, SyncRejected uint64

	// Work pulling (Config.Pull): job requests sent, answered with a job,
	// answered drained, refused (reject) or full; StrandedWaits counts
	// requests that got no answer within Pull.Timeout (asked again).
	// JobsAbandoned counts pulled jobs not applied because their lease
	// ran out first, or the session was lost while the worker held them
	// (the leader gives them out again). JobsHeld is the jobs the worker
	// holds now, queued or in service, pushed or pulled: jobs waiting at
	// this device; JobsHeldPeak the most at once.
	PullsSent, JobsPulled, PullsDrained, PullsRefused, PullsFull uint64
	StrandedWaits, JobsAbandoned                                 uint64
	JobsHeld, JobsHeldPeak                                       int

	HeartbeatsSent, HeartbeatsStored, HeartbeatsCoalesced, HeartbeatsDropped uint64

	TelemetryGenerated uint64
	TelemetryDirect    uint64 // accepted by the leader on the first try
	TelemetryStored    uint64 // kept in the local outbox (offline, leader full, no answer)
	TelemetryForwarded uint64 // later accepted from the local outbox
	TelemetryRejected  uint64
	TelemetryDropped   uint64 // the local outbox was full: lost, counted
	// TelemetryQueued is the telemetry waiting in the local outbox now.
	// With no ask in flight (a stopped worker has none):
	//
	//	TelemetryGenerated == TelemetryDirect + TelemetryForwarded +
	//		TelemetryRejected + TelemetryDropped + TelemetryLostInReboot +
	//		TelemetryQueued
	TelemetryQueued int

	// Reboots counts Reboot calls. What each lost with the RAM is counted
	// by kind: commands acked ok and not yet applied (in the mailbox,
	// which counts them as taken, or in service), telemetry in the local
	// outbox or sent and unanswered, the heartbeat waiting in the local
	// outbox.
	Reboots, CommandsLostInReboot, TelemetryLostInReboot, HeartbeatsLostInReboot uint64

	LateReplies, SendErrors uint64
	// DeliveriesDropped counts messages for a worker behind a gateway that
	// its loop was too far behind to take: the gateway does not wait for
	// one device (see Worker.offer).
	DeliveriesDropped uint64
	// LinkLost counts messages the worker's lossy link lost (Config.Loss),
	// both ways.
	LinkLost uint64
	// Announced counts the times the worker republished its online status
	// at the leader's request (wire.Topics.Announce).
	Announced uint64

	// MailboxDepth is the commands queued now. The mailbox's wait times go
	// to the histogram in Config.Mailbox.Wait (a pool shares one per group).
	MailboxDepth int
	// Local is the local outbox's; its counters start again at a reboot.
	Local outbox.Stats
}

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	s := w.st
	s.AppliedVersions = maps.Clone(w.st.AppliedVersions)
	s.FirstApplied = maps.Clone(w.st.FirstApplied)
	local := w.local
	w.mu.Unlock()
	s.MailboxDepth = w.mb.Len()
	if local != nil {
		s.Local = local.Stats()
	}
	return s
}

// MailboxStats returns the command mailbox's counters. Its Wait is the
// histogram in Config.Mailbox.Wait (shared by a pool's group, if given).
func (w *Worker) MailboxStats() mailbox.Stats { return w.mb.Stats() }

// State is a worker at a glance: what a dashboard's fleet grid draws.
type State struct {
	Online, Busy bool
	Version      string // applied
	// Depth and Capacity are the command mailbox's.
	Depth, Capacity int
	// Stored is the messages for the leader waiting in the local outbox.
	Stored int
	// Asking is the messages sent to the leader whose answer has not come
	// yet (telemetry sent directly, a sync request, the local outbox's
	// message in flight). Until it comes, or the ask times out, the
	// message is on its way: in the broker, at the leader, or its answer
	// coming back.
	Asking int
	// SyncDue: a sync request is still to go, at once or, after a "full"
	// answer or no answer, when its retry is due.
	SyncDue   bool
	AckedFull uint64 // commands answered "full" so far
}

// State returns the worker's state at a glance. It copies no map and no
// histogram, so reading it for every worker of a large fleet several times
// a second is cheap (Stats is not).
func (w *Worker) State() State {
	w.mu.Lock()
	s := State{Online: w.st.Online, Busy: w.st.Busy, Version: w.st.Version, AckedFull: w.st.AckedFull, Asking: int(w.asking.Load()), SyncDue: w.syncWaits.Load()}
	local := w.local
	w.mu.Unlock()
	s.Depth, s.Capacity = w.mb.Len(), w.mb.Cap()
	if local != nil {
		s.Stored = local.Len()
	}
	return s
}
