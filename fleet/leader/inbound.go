package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/ratelog"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// onStatus follows a worker's retained status (and its last will): the
// fleet view, and the relay's idea of whom to try.
//
// A device behind a gateway is announced "online <epoch> via <gateway>":
// the leader records the gateway, whose own offline takes the device
// offline too (see onGatewayStatus). While the leader knows that gateway
// offline, such an online is a retained leftover of its dead session and
// is counted as stale.
//
// An "offline" whose epoch is not that of the "online" last applied is the
// late will of a connection the worker has since replaced (the broker
// publishes it when it drops that connection, which may be after the new
// one said online): it is counted as stale and changes nothing. A status
// without an epoch ("offline", retained or not) names no connection: it is
// refused (counted as malformed, logged as a status without an epoch) and
// changes nothing, or anyone who may publish on a worker's status topic
// could take it offline for good. Statuses arrive on the one delivery
// goroutine, in the broker's order, so deciding and applying need no lock
// between them.
func (l *Leader) onStatus(topic string, payload []byte) {
	if topic == l.cfg.Topics.LeaderStatus() {
		return // our own (or a predecessor's) retained status
	}
	worker, _, err := l.cfg.Topics.Parse(topic)
	if err != nil {
		l.refuse(topic, len(payload), err)
		return
	}
	if len(payload) == 0 {
		return // a cleared retained message: nothing to learn
	}
	st, err := wire.ParseEpochStatus(topic, payload)
	if err != nil {
		l.refuse(worker, len(payload), err)
		return
	}
	now := l.clk.Now()
	if st.Online {
		if st.Via != "" && l.fleet.gatewayDown(st.Via) {
			// A retained leftover of a dead gateway's session: a live
			// gateway says its own online before its devices'.
			l.c.statusStale.Add(1)
			l.cfg.Logger.Debug("online via an offline gateway ignored", "worker", worker, "gateway", st.Via)
			return
		}
		reconnected, wasOnline := l.fleet.setOnline(worker, st.Epoch, st.Via, now)
		if reconnected {
			l.c.reconnects.Add(1)
		}
		if !wasOnline || reconnected {
			// A new connection: an ask published to the old one will
			// never be answered. Signalled before the wake, so that an
			// ask the wake starts is not published twice.
			l.reconnected(worker)
		}
		if !wasOnline {
			// Offline (or not yet seen by this leader, which the relay
			// counts as offline) to online: the relay tries it from now
			// on, and what was parked for it is released by the waker,
			// since a store write (an fsync) must not hold up this
			// goroutine. A retained replay of an online already applied
			// changes nothing.
			l.relay.SetOnline(worker)
			l.wakes.add(worker)
		}
		return
	}
	if l.fleet.staleOffline(worker, st.Epoch) {
		l.c.statusStale.Add(1)
		l.cfg.Logger.Debug("stale offline ignored", "worker", worker, "epoch", st.Epoch)
		return
	}
	l.takeOffline(worker, now)
}

// takeOffline applies an offline for worker: its own, or its gateway's.
// The relay first: whoever sees the worker offline in the fleet view can
// count on the relay not trying it.
func (l *Leader) takeOffline(worker string, now time.Time) {
	l.relay.SetOffline(worker)
	l.fleet.setOffline(worker, now)
}

// onUp handles everything a worker sends: acks complete asks, requests and
// telemetry are admitted to the bounded mailbox or answered "full",
// heartbeats coalesce; each but an ack (which carries no send time) records
// its delivery lag. It runs on the MQTT delivery goroutine, so it never
// publishes itself.
func (l *Leader) onUp(topic string, payload []byte) {
	worker, _, err := l.cfg.Topics.Parse(topic)
	if err != nil {
		l.refuse(topic, len(payload), err)
		return
	}
	env, err := wire.Decode(topic, payload, wire.Up, l.cfg.MaxPayload)
	if err != nil {
		l.refuse(worker, len(payload), err)
		if id := wire.PeekID(payload, l.cfg.MaxPayload); id != "" {
			l.c.rejectedMalformed.Add(1)
			l.queueReply(worker, wire.Envelope{V: wire.Version, Kind: wire.KindReply, Ref: id, Result: wire.ResultReject, Reason: err.Error()})
		}
		return
	}
	l.onTraffic(worker, l.clk.Now())
	if env.Kind == wire.KindAck {
		switch fate, p := l.asks.complete(env.Ref, worker, env); fate {
		case ackAnswered:
			if p.ch == nil {
				l.answered(env.Ref, p, env)
			}
		case ackLate:
			l.c.lateAcks.Add(1) // its ask timed out; the worker has it all the same
		case ackForged:
			l.forgedAck(worker)
		}
		return
	}
	now := l.clk.Now()
	// Under the block policy this goroutine waits on the mailbox by
	// design, and what queues behind it is the policy's cost (it holds the
	// senders back), not a machine falling behind: not delivery lag.
	if env.SentMs > 0 && l.cfg.Mailbox.Policy != mailbox.Block {
		l.cfg.DeliveryLag.Record(now.Sub(time.UnixMilli(env.SentMs)))
	}
	switch env.Kind {
	case wire.KindHeartbeat:
		var hb wire.Heartbeat
		_ = env.BodyInto(&hb) // Decode checked it
		l.c.heartbeatsReceived.Add(1)
		if err := l.heartbeats.OfferKey(contextBackground, worker, heartbeat{worker: worker, seq: env.Seq, body: hb}); err != nil {
			l.c.heartbeatsDropped.Add(1)
		}
	case wire.KindRequest, wire.KindTelemetry:
		l.admit(worker, env, now)
	}
}

// forgedAck counts an ack from a worker other than the one its command
// went to. The topic names the sender, and the broker lets a worker
// publish on its own up topic only, so the ack answers nothing: the ask
// waits on for its receiver. It is a refusal (reason forged_ack), logged
// as the others are: the worker and the reason, never the payload, at
// most once per worker per Config.RefusalLogInterval.
func (l *Leader) forgedAck(worker string) {
	l.c.acksForged.Add(1)
	l.refusalLog.Warn(l.cfg.Logger, worker+" forged_ack", "ack ignored: its command went to another worker",
		"from", ratelog.Brief(worker, 128), "reason", "forged_ack")
}

// admit offers a request or telemetry message that arrived at now to the
// bounded mailbox and answers at once: ok when it is queued, full with the
// mailbox's retry-after hint when it is not.
func (l *Leader) admit(worker string, env wire.Envelope, now time.Time) {
	if env.Kind == wire.KindRequest {
		l.c.requestsReceived.Add(1)
	} else {
		l.c.telemetryReceived.Add(1)
	}
	ans := wire.Envelope{V: wire.Version, Kind: wire.KindReply, Ref: env.ID, Result: wire.ResultOK}
	in := inbound{worker: worker, kind: env.Kind, at: now}
	if env.Kind == wire.KindRequest {
		var rq wire.Request
		_ = env.BodyInto(&rq) // Decode checked it
		if rq.What == wire.RequestJob {
			l.c.jobRequests.Add(1)
			if reason := l.refuseJobRequest(worker); reason != "" {
				ans.Result, ans.Reason = wire.ResultReject, reason
				l.queueReply(worker, ans)
				return
			}
			in.job, in.id, in.done = true, env.ID, rq.Done
		}
	}
	err := l.inbox.Offer(contextBackground, in)
	var full *mailbox.FullError
	switch {
	case err == nil:
		if in.job {
			return // the job, or drained, when it is served
		}
	case errors.As(err, &full):
		ans.Result, ans.RetryAfterMs = wire.ResultFull, max(full.RetryAfter.Milliseconds(), 1)
		l.c.answeredFull.Add(1)
	default: // closed: the leader is stopping; a restarted one will take it
		ans.Result, ans.RetryAfterMs, ans.Reason = wire.ResultFull, 1000, fmt.Sprintf("leader stopping: %v", err)
	}
	l.queueReply(worker, ans)
}

// contextBackground is for calls from the MQTT delivery goroutine, which
// has no context; none of them blocks (mailbox offers of non-blocking
// policies). A store's Wake does: the waker makes it (see wakes).
var contextBackground = context.Background()
