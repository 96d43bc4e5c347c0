package result

// This file defines "lost": the balances that say whether every message
// a run sent is accounted for. The runner gathers their inputs from the
// mechanisms' own counters; what counts as lost is decided here, once.

// CommandLedger is what the balance of the leader's commands reads, at
// the end of a run with the workers stopped.
type CommandLedger struct {
	// Outbox is the leader's outbox, summed over its instances (a bbolt
	// store counts from each open); its Depth is what the file holds at
	// the end.
	Outbox OutboxResult
	// DepthAtStart is what the file held when the run first opened it.
	DepthAtStart int
	// AckedOK and Expired are the workers' ok answers (which also count
	// redeliveries the leader missed) and the commands they found past
	// their TTL.
	AckedOK, Expired uint64
	// Taken, Held, DroppedAfterAck and LostInReboot are the workers'
	// mailboxes: taken to be served, still queued, evicted by the policy
	// after the ok answer, lost in a reboot.
	Taken, Held, DroppedAfterAck, LostInReboot uint64
	// Missing counts deploy targets that never applied their version,
	// were not sent a later deploy of the same kind (which may have
	// overwritten or made stale the update) and whose update is not in
	// the dead letters.
	Missing int64
}

// Lost balances the leader's commands four ways; each is a lower bound
// on the commands lost, and Lost is the largest:
//
//  1. The outbox ledger. Sent (Outbox.Enqueued) is everything the leader
//     handed the outbox (appended, replacing a queued version, or dropped
//     at once as older than the queued one), and Replayed the dead
//     letters put back in the queue. What left the queue is Acked,
//     Expired or DeadLettered, or was Overwritten or Stale (the replaced
//     and the dropped version). The rest must be still queued: the depth
//     in the file at the end, less what it held at the start. (The runner
//     never purges dead letters, the one other way out.) The depth persists in the file while the counters
//     restart, so a message removed from the file behind the leader's
//     back, lost across a restart, or settled without being counted
//     breaks it. A negative remainder — more settled than sent — is a
//     counting error and is returned as is.
//  2. Acks against the workers' view: the outbox acks a message only when
//     a worker answered ok, so the workers' ok answers are at least the
//     outbox's acks. Acks beyond them are commands acked that no worker
//     took.
//  3. The workers' ledger: every command a worker acked ok was taken to
//     be served, dropped after its ack by its mailbox's policy, or is
//     still in its mailbox. (A reboot takes what the mailbox holds out
//     and loses it: those count as taken, and in LostInReboot.)
//  4. Deploys against the workers' view: Missing targets, less what
//     expired updates (outbox or worker TTL), updates dropped after their
//     ack or lost in a reboot, and updates still queued may explain.
func (l CommandLedger) Lost() int64 {
	o := l.Outbox
	left := int64(o.Acked+o.Overwritten+o.Stale+o.Expired+o.DeadLettered) + int64(o.Depth-l.DepthAtStart)
	ledger := int64(o.Enqueued+o.Replayed) - left
	if ledger < 0 {
		return ledger
	}
	unseen := int64(o.Acked) - int64(l.AckedOK)
	workers := int64(l.AckedOK) - int64(l.Taken+l.DroppedAfterAck+l.Held)
	explained := int64(o.Expired+l.Expired+l.DroppedAfterAck+l.LostInReboot) + int64(o.Depth)
	deployLost := max(l.Missing-explained, 0)
	return max(ledger, unseen, workers, deployLost)
}

// Balance returns the telemetry lost. With the workers stopped (no ask in
// flight: a stopping worker keeps what it had in flight locally) every
// message generated was accepted by the leader directly or from the local
// outbox (forwarded), rejected, dropped for a full local outbox (counted
// loss), lost in a reboot (counted: in the local outbox or unanswered
// then), or is still queued locally:
//
//	generated = direct + forwarded + rejected + dropped + lost_in_reboot + pending
//
// Lost is the remainder (negative: a counting error, returned as is); and
// the leader must have received at least what the workers were told it
// accepted (a worker counts direct and forwarded only on the leader's
// ok), received being what the leader counted.
func (t TelemetryResult) Balance(received uint64) int64 {
	balance := int64(t.Generated) - int64(t.Direct+t.Forwarded+t.Rejected+t.Dropped+t.LostInReboot) - int64(t.Pending)
	if balance < 0 {
		return balance
	}
	return max(balance, int64(t.Direct+t.Forwarded)-int64(received))
}
