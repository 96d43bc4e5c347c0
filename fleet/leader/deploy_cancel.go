package leader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// CancelResult is what Cancel did to a deploy.
type CancelResult struct {
	Index int
	// Withdrawn counts the updates that were still queued, in waves due
	// or to come: they are never sent, and count as Cancelled in their
	// waves.
	Withdrawn int
	// InFlight counts the updates out for delivery when the cancel came
	// (or overtaken by a later deploy's): each finishes, counted
	// Delivered if its worker acks it, Rejected or DeadLettered as usual,
	// and Cancelled if it comes back undelivered (it is not retried).
	InFlight int
	// Again: the deploy had been cancelled before; Withdrawn counts what
	// this call found still queued (nothing, unless a crash came between
	// the two).
	Again bool
	// Finished: the deploy had no update queued (each had its fate), so
	// there was nothing to cancel and it is not marked cancelled.
	Finished bool
}

// ErrNoDeploy: Cancel was given an index the leader does not keep (it
// never had it, or forgot it once it was finished: Config.DeployHistory).
var ErrNoDeploy = errors.New("leader: no such deploy")

// cancelDelay is how far after the cancel the version that withdraws an
// update would come due: its TTL has run out long before, so the outbox
// drops it, expired, the first time it looks at it (see Cancel).
const cancelDelay = time.Second

// cancelVersion is the version of the message that withdraws an update.
// It is never sent (see Cancel); were it ever, the worker would refuse to
// install it (wire.ValidVersion: it starts with "-") and the leader would
// dead-letter it with that reason, rather than a worker applying a
// cancelled version.
const cancelVersion = "-cancelled"

// Cancel stops the deploy with the index Deploy returned: its updates
// still queued, in the waves due and in those to come, are withdrawn and
// never sent; those out for delivery finish (see CancelResult). It is
// durable as a deploy is: a leader restarted on the same outbox does not
// send them. Cancelling a cancelled deploy again is no error (Again). A
// deploy the leader does not keep is ErrNoDeploy; one made with
// DeployPlan.Queue, or recorded by a build that did not keep its updates'
// workers, cannot be cancelled (an error says which). Download jobs
// (DeployPlan.Via) are left.
//
// An update is withdrawn through the outbox's Overwrite: each is
// replaced in place by a version of the same key and sequence number
// whose TTL has run out before it comes due, which the outbox drops
// unsent as expired. In the outbox's counters a withdrawn update is
// therefore one Overwritten (the update) and one Expired (the version
// that replaced it); the deploy counts it Cancelled. An update out for
// delivery cannot be replaced in place: the withdrawing version queues
// behind it, so that, handed back undelivered, it is dropped for that
// version (Overwrite's supersede) and not retried.
func (l *Leader) Cancel(ctx context.Context, index int) (CancelResult, error) {
	t := &l.deploys
	now := l.clk.Now()
	res, targets, msgs, err := t.startCancel(index, now)
	if err != nil || res.Finished {
		return res, err
	}
	receipts, err := l.cfg.Store.Enqueue(ctx, msgs...)
	if err != nil {
		t.undoCancel(index, !res.Again)
		return res, fmt.Errorf("leader: cancel deploy %d: nothing withdrawn: %w", index, err)
	}
	w, f := t.finishCancel(targets, receipts, now)
	res.Withdrawn, res.InFlight = w, res.InFlight+f
	// The record says cancelled at the next save if not now; the
	// withdrawn updates are gone from the outbox already, so a restart
	// before then does not send them (it counts them delivered).
	if err := t.saveOne(ctx, l.cfg.Store, now, index); err != nil {
		l.cfg.Logger.Warn("deploy cancelled, its record not saved yet", "deploy", index, "err", err)
	}
	return res, nil
}

// cancelTarget is a tracked update Cancel withdraws.
type cancelTarget struct {
	id uint64
	m  *tracked
}

// startCancel marks the deploy cancelled and returns the updates to
// withdraw and the messages that withdraw them, in the same order.
func (t *deployTracker) startCancel(index int, now time.Time) (CancelResult, []cancelTarget, []outbox.Message, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	res := CancelResult{Index: index}
	i, ok := slices.BinarySearchFunc(t.deploys, index, func(d *deployState, index int) int { return d.Index - index })
	if !ok {
		return res, nil, nil, fmt.Errorf("leader: cancel deploy %d: %w (the leader keeps %s)", index, ErrNoDeploy, t.keptLocked())
	}
	d := t.deploys[i]
	switch {
	case d.pending == 0:
		res.Finished, res.Again = true, d.Cancelled
		return res, nil, nil, nil
	case d.queue:
		return res, nil, nil, fmt.Errorf("leader: cancel deploy %d: it queues behind older updates (DeployPlan.Queue): its updates cannot be withdrawn by key", index)
	case d.seq == 0:
		return res, nil, nil, fmt.Errorf("leader: cancel deploy %d: its record comes from a build that did not keep its sequence number: it cannot be withdrawn", index)
	}
	var targets []cancelTarget
	for id, m := range t.byMsg {
		if m.d != d {
			continue
		}
		if m.key.receiver == "" {
			return res, nil, nil, fmt.Errorf("leader: cancel deploy %d: its record comes from a build that did not keep its updates' workers: it cannot be withdrawn", index)
		}
		if m.overtaken || t.byRecv[m.key] != id {
			res.InFlight++ // a later version is queued behind it already
			continue
		}
		targets = append(targets, cancelTarget{id, m})
	}
	res.Again = d.Cancelled
	d.Cancelled = true
	d.touchPos(0) // the head record says so
	slices.SortFunc(targets, func(a, b cancelTarget) int { return a.m.pos - b.m.pos })
	body := wire.Body(wire.Apply{Version: cancelVersion})
	msgs := make([]outbox.Message, len(targets))
	for i, c := range targets {
		msgs[i] = outbox.Message{
			Receiver: c.m.key.receiver, Kind: string(d.Kind), Payload: body,
			Key: string(d.Kind), Seq: d.seq, Conflict: outbox.Overwrite,
			TTL: time.Nanosecond, SendAt: now.Add(cancelDelay),
		}
	}
	return res, targets, msgs, nil
}

// undoCancel takes back startCancel's mark (if it made it: took) when
// nothing was withdrawn.
func (t *deployTracker) undoCancel(index int, took bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(t.deploys, index, func(d *deployState, index int) int { return d.Index - index }); ok && took {
		t.deploys[i].Cancelled = false
		t.deploys[i].touchPos(0)
	}
}

// finishCancel counts what the withdrawing messages did: an update
// replaced in place is withdrawn; one that was leased meanwhile has the
// withdrawing version behind it (see Cancel); one that left the queue
// meanwhile was delivered (or its fate is counted as it comes).
func (t *deployTracker) finishCancel(targets []cancelTarget, receipts []outbox.Receipt, now time.Time) (withdrawn, inFlight int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, r := range receipts {
		c := targets[i]
		m := t.byMsg[c.id]
		if m != c.m {
			continue // settled meanwhile: its fate is counted
		}
		switch {
		case r.Outcome == outbox.Replaced && r.ID == c.id:
			t.resolveLocked(c.id, m, fateCancelled, now)
			withdrawn++
		case r.Outcome == outbox.Appended:
			if !m.overtaken {
				m.overtaken = true
				m.d.touchPos(m.pos)
			}
			m.look = true
			inFlight++
		}
	}
	t.trimLocked()
	return withdrawn, inFlight
}

// keptLocked says which deploys the tracker keeps, for an error.
func (t *deployTracker) keptLocked() string {
	switch n := len(t.deploys); n {
	case 0:
		return "none"
	case 1:
		return fmt.Sprintf("deploy %d", t.deploys[0].Index)
	default:
		return fmt.Sprintf("%d deploys, from %d to %d", n, t.deploys[0].Index, t.deploys[n-1].Index)
	}
}
