package worker

import (
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// ask is a message to the leader waiting for its reply.
type ask struct {
	kind     wire.Kind
	deadline time.Time
	body     []byte // telemetry sent directly: stored locally if it fails
	storeID  uint64 // sent from the local outbox: settled there
	pull     bool   // a job request (pull.go)
}

const leaderID = "leader" // the local outbox's receiver

func (w *Worker) newID(prefix string) string {
	w.nextID++
	return prefix + strconv.FormatUint(w.nextID, 10)
}

// sendAsk sends env and waits for the reply in the loop (onReply or a
// deadline in housekeeping). It reports false if nothing could be sent.
func (w *Worker) sendAsk(env wire.Envelope, a *ask) bool {
	if w.sess == nil {
		return false
	}
	// Counted as asking before it leaves: once sent it is in no queue a
	// reader of State can see (housekeeping sets the count exactly).
	w.asking.Add(1)
	if err := w.sendUp(env); err != nil {
		w.asking.Add(-1)
		w.update(func(s *Stats) { s.SendErrors++ })
		return false
	}
	a.kind, a.deadline = env.Kind, w.clk.Now().Add(w.cfg.AskTimeout)
	if w.asks == nil {
		w.asks = make(map[string]*ask)
	}
	w.asks[env.ID] = a
	return true
}

// sendTelemetry tells the leader a measurement: directly when online, into
// the local outbox when not (or when the leader says full, or does not
// answer). The direct path is an ask answered on this loop, so the
// fallback is decided in three places (here, telemetryReply, expire); the
// path each message took is counted in Stats (TelemetryDirect, Stored,
// Forwarded), reported as the telemetry.* results of a scenario run.
func (w *Worker) sendTelemetry() {
	body := wire.Body(wire.Telemetry{Metrics: map[string]float64{
		"mailbox_depth": float64(w.mb.Len()),
		"busy":          b2f(w.busy),
	}})
	w.update(func(s *Stats) { s.TelemetryGenerated++ })
	env := wire.Envelope{V: wire.Version, ID: w.newID("t"), Kind: wire.KindTelemetry, SentMs: w.clk.Now().UnixMilli(), Body: body}
	if !w.sendAsk(env, &ask{body: body}) {
		w.store(wire.KindTelemetry, body, "", 0)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sendHeartbeat tells the leader the worker is alive; while offline the
// latest heartbeat waits in the local outbox (an overwrite by key: one).
func (w *Worker) sendHeartbeat() {
	w.hbSeq++
	body := wire.Body(wire.Heartbeat{Version: w.version, MailboxDepth: w.mb.Len(), Busy: w.busy})
	env := wire.Envelope{V: wire.Version, ID: w.newID("h"), Kind: wire.KindHeartbeat, Key: "hb", Seq: w.hbSeq, SentMs: w.clk.Now().UnixMilli(), Body: body}
	if w.sess != nil {
		if w.sendUp(env) == nil {
			w.update(func(s *Stats) { s.HeartbeatsSent++ })
			return
		}
	}
	w.store(wire.KindHeartbeat, body, "hb", w.hbSeq)
}

// store keeps a message for the leader in the local outbox. Telemetry
// appends; a heartbeat overwrites the one waiting.
func (w *Worker) store(kind wire.Kind, body []byte, key string, seq uint64) {
	m := outbox.Message{Receiver: leaderID, Kind: string(kind), Payload: body, Key: key, Seq: seq}
	if key != "" {
		m.Conflict = outbox.Overwrite
	}
	local, err := w.localOutbox()
	var r []outbox.Receipt
	if err == nil {
		r, err = local.Enqueue(ctxBackground, m)
	}
	w.update(func(s *Stats) {
		switch {
		case err != nil: // the local outbox is full: this is loss, and it is counted
			if kind == wire.KindTelemetry {
				s.TelemetryDropped++
			} else {
				s.HeartbeatsDropped++
			}
		case kind == wire.KindTelemetry:
			s.TelemetryStored++
			s.TelemetryQueued++
		case r[0].Outcome == outbox.Replaced:
			s.HeartbeatsCoalesced++
		default:
			s.HeartbeatsStored++
		}
	})
}

// onReply settles the ask a leader's reply answers.
func (w *Worker) onReply(env wire.Envelope) {
	a, ok := w.asks[env.Ref]
	if !ok {
		w.update(func(s *Stats) { s.LateReplies++ })
		return
	}
	delete(w.asks, env.Ref)
	if a.pull {
		w.pullReply(env)
		return
	}
	switch a.kind {
	case wire.KindRequest:
		w.syncReply(env)
	case wire.KindTelemetry:
		w.telemetryReply(a, env)
	}
}

func (w *Worker) syncReply(env wire.Envelope) {
	switch env.Result {
	case wire.ResultOK:
		w.syncTries = 0
		w.update(func(s *Stats) { s.SyncOK++ })
	case wire.ResultFull:
		w.syncTries++
		w.setSyncDue(w.clk.Now().Add(w.retryDelay(env.RetryAfter(), w.syncTries)))
		w.update(func(s *Stats) { s.SyncFull++ })
	default:
		w.update(func(s *Stats) { s.SyncRejected++ })
	}
}

// setSyncDue sets when the next sync request goes (zero: none), and
// whether State reports one waiting.
func (w *Worker) setSyncDue(t time.Time) {
	w.syncDue = t
	w.syncWaits.Store(!t.IsZero())
}

// retryDelay is how long to wait before asking the leader again: no less
// than its retry-after hint, and a full-jitter backoff on top of repeated
// refusals — unless the policy is Immediate (the herd): ImmediateRetry.
func (w *Worker) retryDelay(retryAfter time.Duration, tries int) time.Duration {
	if w.cfg.Reconnect.Immediate {
		return ImmediateRetry
	}
	return max(retryAfter, w.cfg.Reconnect.Backoff.Delay(tries-1, w.rnd))
}

func (w *Worker) telemetryReply(a *ask, env wire.Envelope) {
	if a.storeID != 0 { // from the local outbox
		w.flushing = false
		w.settleStored(a.storeID, env)
		return
	}
	switch env.Result {
	case wire.ResultOK:
		w.update(func(s *Stats) { s.TelemetryDirect++ })
	case wire.ResultFull:
		w.store(wire.KindTelemetry, a.body, "", 0)
	default:
		w.update(func(s *Stats) { s.TelemetryRejected++ })
	}
}

// settleStored settles a local-outbox message by the leader's answer.
func (w *Worker) settleStored(id uint64, env wire.Envelope) {
	switch env.Result {
	case wire.ResultOK:
		if w.local.Ack(ctxBackground, id) == nil {
			w.update(func(s *Stats) { s.TelemetryForwarded++; s.TelemetryQueued-- })
		}
	case wire.ResultFull:
		m := w.clk.Now()
		d := w.retryDelay(env.RetryAfter(), 1)
		_, _ = w.local.Nack(ctxBackground, id, d, "leader full")
		w.flushAfter = m.Add(d)
	default:
		if w.local.DeadLetter(ctxBackground, id, env.Reason) == nil {
			w.update(func(s *Stats) { s.TelemetryRejected++; s.TelemetryQueued-- })
		}
	}
}

// flush sends the local outbox's next message when the worker is online
// and nothing of it is in flight. It returns the deadline of the ask it
// sent, zero if it sent none: the caller's wake must cover it, or a reply
// that never comes leaves the message in flight for good.
func (w *Worker) flush(now time.Time) time.Time {
	if w.sess == nil || w.flushing || now.Before(w.flushAfter) || w.localLen() == 0 {
		return time.Time{}
	}
	msgs, err := w.local.Dequeue(ctxBackground, 0, 1)
	if err != nil || len(msgs) == 0 {
		return time.Time{}
	}
	m := msgs[0]
	kind := wire.Kind(m.Kind)
	env := wire.Envelope{V: wire.Version, ID: w.newID("o"), Kind: kind, Key: m.Key, Seq: m.Seq, SentMs: now.UnixMilli(), Body: m.Payload}
	if kind == wire.KindHeartbeat { // the leader does not answer heartbeats
		if err := w.sendUp(env); err != nil {
			_ = w.local.Release(ctxBackground, m.ID, now)
			return time.Time{}
		}
		_ = w.local.Ack(ctxBackground, m.ID)
		w.update(func(s *Stats) { s.HeartbeatsSent++ })
		return time.Time{}
	}
	a := &ask{storeID: m.ID}
	if !w.sendAsk(env, a) {
		_ = w.local.Release(ctxBackground, m.ID, now)
		return time.Time{}
	}
	w.flushing = true
	return a.deadline
}

// failAsks ends every ask when the session goes: direct telemetry is kept
// locally, local-outbox messages go back uncharged.
func (w *Worker) failAsks() {
	now := w.clk.Now()
	w.pullLoseSession()
	for id, a := range w.asks {
		delete(w.asks, id)
		if a.pull {
			w.pullExpired(now, false)
			continue
		}
		w.expire(a, now)
	}
}

// expire handles an ask that got no reply.
func (w *Worker) expire(a *ask, now time.Time) {
	switch {
	case a.kind == wire.KindRequest:
		w.syncTries++
		w.setSyncDue(now.Add(w.retryDelay(0, w.syncTries)))
		w.update(func(s *Stats) { s.SyncTimeouts++ })
	case a.storeID != 0:
		w.flushing = false
		d := w.retryDelay(0, 1)
		_, _ = w.local.Nack(ctxBackground, a.storeID, d, "no reply")
		w.flushAfter = now.Add(d)
	default:
		w.store(wire.KindTelemetry, a.body, "", 0)
	}
}

// housekeeping runs after every loop event: expire asks, send a due sync,
// flush the local outbox, and arm the wake timer for the next of these.
func (w *Worker) housekeeping() {
	now := w.clk.Now()
	var next time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	syncInFlight, pullInFlight := false, false
	for id, a := range w.asks {
		if !now.Before(a.deadline) {
			delete(w.asks, id)
			if a.pull {
				w.pullExpired(now, true)
				continue
			}
			w.expire(a, now)
			continue
		}
		switch {
		case a.pull:
			pullInFlight = true
		case a.kind == wire.KindRequest:
			syncInFlight = true
		}
		earliest(a.deadline)
	}
	if w.sess != nil && !w.syncDue.IsZero() && !syncInFlight {
		if now.Before(w.syncDue) {
			earliest(w.syncDue)
		} else {
			env := wire.Envelope{V: wire.Version, ID: w.newID("s"), Kind: wire.KindRequest, SentMs: now.UnixMilli(), Body: wire.Body(wire.Request{What: wire.RequestSync})}
			if w.sendAsk(env, &ask{}) {
				w.setSyncDue(time.Time{})
				w.update(func(s *Stats) { s.SyncSent++ })
				earliest(w.asks[env.ID].deadline)
			}
		}
	}
	earliest(w.flush(now))
	earliest(w.pullNext(now, pullInFlight))
	earliest(w.announceDue(now))
	if w.sess != nil && !w.flushing && w.localLen() > 0 {
		earliest(w.flushAfter)
	}
	earliest(w.sendDue(now))
	w.timers.wakeBy(now, next)
	w.asking.Store(int32(len(w.asks)))
}

// onAnnounce takes the leader's request that the fleet announce itself
// again: the worker republishes its online status after a random wait in
// [0, AnnounceWindow). Requests that come while one waits are one.
func (w *Worker) onAnnounce() {
	if w.sess == nil || !w.announceAt.IsZero() {
		return
	}
	w.announceAt = w.clk.Now().Add(time.Duration(w.rnd.Int64N(int64(w.cfg.AnnounceWindow))))
	w.housekeeping()
}

// announceDue republishes the worker's online status if its announce is
// due at now, and returns when it is due otherwise (zero: none waits).
func (w *Worker) announceDue(now time.Time) time.Time {
	if w.announceAt.IsZero() || w.sess == nil {
		w.announceAt = time.Time{}
		return time.Time{}
	}
	if now.Before(w.announceAt) {
		return w.announceAt
	}
	w.announceAt = time.Time{}
	st := wire.Status{Online: true, Epoch: w.epoch, Via: w.cfg.Gateway}
	if w.sess.SendRetained(w.cfg.Topics.Status(w.cfg.ID), 1, st.Payload()) != nil {
		w.update(func(s *Stats) { s.SendErrors++ })
		return time.Time{}
	}
	w.update(func(s *Stats) { s.Announced++ })
	return time.Time{}
}
