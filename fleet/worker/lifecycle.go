package worker

import (
	"context"
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// scheduleReconnect arms the next connection attempt: at once for the
// first, then by the reconnect policy.
func (w *Worker) scheduleReconnect(attempt int) {
	var d time.Duration
	switch {
	case attempt == 0:
	case w.cfg.Reconnect.Immediate:
		d = ImmediateRetry
	default:
		d = w.cfg.Reconnect.Backoff.Delay(attempt-1, w.rnd)
	}
	w.timers.after(tReconnect, w.clk.Now(), d)
}

// tryConnect dials, subscribes to the worker's commands and announces it
// online. A failure schedules the next attempt.
//
// Behind a gateway (Config.Gateway) the statuses say so: "online <epoch>
// via <gateway>", and the will the gateway plays for the worker
// "offline <epoch> via <gateway>".
//
// Every attempt has a new epoch, carried by the last will ("offline
// <epoch>") and the announcement ("online <epoch>"): the broker may publish
// an earlier connection's will after this one's "online" — it drops that
// connection only at this connection's session takeover or when its
// keepalive runs out — and the epoch tells the leader that will is stale.
// A failed attempt may have left a connection (and a will) at the broker
// too, so it does not reuse its epoch.
func (w *Worker) tryConnect(ctx context.Context) {
	// A loop's device holds the pool's first-dial slot (if any) until the
	// broker has taken its online, or until an attempt that does not get
	// that far.
	var taken func()
	if w.lp != nil {
		taken, w.started = w.started, nil
		defer func() {
			if taken != nil {
				taken()
			}
		}()
	}
	if w.sess != nil || w.down {
		return
	}
	w.update(func(s *Stats) { s.ConnectAttempts++ })
	if w.partition {
		w.attempt++
		w.scheduleReconnect(w.attempt)
		return
	}
	tp := w.cfg.Topics
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	epoch := newEpoch()
	o := DialOptions{
		ID: w.cfg.ID, WillTopic: tp.Status(w.cfg.ID), WillPayload: wire.Status{Epoch: epoch, Via: w.cfg.Gateway}.Payload(),
		KeepAlive: w.cfg.KeepAlive,
	}
	if w.lp != nil {
		o.lost = w.postLost
		o.taken, taken = taken, nil // the virtual session frees it
	}
	sess, err := w.dial.Dial(dctx, o)
	if err != nil && o.taken != nil {
		o.taken()
	}
	if err == nil {
		err = w.announce(dctx, sess, epoch)
	}
	if err != nil {
		w.cfg.Logger.Debug("connect failed", "worker", w.cfg.ID, "err", err)
		w.attempt++
		w.scheduleReconnect(w.attempt)
		return
	}
	w.connected(sess, epoch)
}

// announce subscribes a new session to the worker's commands (and, on a
// session of its own, to the leader's announce requests) and publishes the
// worker online with epoch. On a failure it closes the session.
func (w *Worker) announce(ctx context.Context, sess Session, epoch string) error {
	tp := w.cfg.Topics
	h := w.deliver(sess)
	switch _, shared := sess.(sharedSession); {
	case w.lp != nil:
		h = w.post(sess)
	case shared:
		h = w.offer(sess)
	}
	err := sess.Subscribe(ctx, tp.Down(w.cfg.ID), 1, h)
	if _, shared := sess.(sharedSession); err == nil && !shared {
		// A device's gateway hears the leader's announce request for
		// all its devices.
		err = sess.Subscribe(ctx, tp.Announce(), 0, h)
	}
	if err == nil {
		err = sess.Publish(ctx, tp.Status(w.cfg.ID), 1, true, wire.Status{Online: true, Epoch: epoch, Via: w.cfg.Gateway}.Payload())
	}
	if err != nil {
		sess.Close(false)
	}
	return err
}

// connected makes sess, announced online with epoch, the worker's
// session, and counts the connect.
func (w *Worker) connected(sess Session, epoch string) {
	w.sess, w.epoch = sess, epoch
	if w.lp == nil {
		w.lost = sess.Lost()
	}
	reconnect := w.attempt > 0 || w.st.Connects > 0
	w.attempt = 0
	if !w.cfg.NoSync {
		// Due before the worker reads online, so that whoever sees it
		// online (a scenario's drain) also sees the sync it still owes.
		w.setSyncDue(w.clk.Now())
		w.syncTries = 0
	}
	w.update(func(s *Stats) {
		s.Online = true
		s.Connects++
		if reconnect {
			s.Reconnects++
		}
	})
	w.flushAfter = time.Time{}
}

// postLost tells a device's loop that the session s was lost (a virtual
// session calls it, once, instead of closing a Lost channel).
func (w *Worker) postLost(s Session) { w.lp.post(event{w: w, kind: evLost, in: incoming{sess: s}}) }

// onLost handles a connection that dropped under the worker.
func (w *Worker) onLost() {
	w.closeSession(false)
	w.update(func(s *Stats) { s.ConnectionsLost++ })
	if !w.down {
		w.attempt = 1
		w.scheduleReconnect(w.attempt)
	}
}

// closeSession ends the session (clean: with a DISCONNECT, after
// announcing this connection offline, as its will would have) and fails
// every ask in flight.
func (w *Worker) closeSession(clean bool) {
	if w.sess == nil {
		return
	}
	if clean {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = w.sess.Publish(ctx, w.cfg.Topics.Status(w.cfg.ID), 1, true, wire.Status{Epoch: w.epoch, Via: w.cfg.Gateway}.Payload())
		cancel()
	}
	w.sess.Close(clean)
	w.sess, w.lost, w.epoch = nil, nil, ""
	w.failAsks()
	w.update(func(s *Stats) { s.Online = false })
}

func (w *Worker) onControl(c control) {
	switch c.op {
	case ctlDisconnect:
		w.down = true
		w.timers.stop(tReconnect)
		w.closeSession(true)
	case ctlPartition:
		w.partition = true
		if w.sess != nil {
			w.sess.Silence() // Lost fires once the client notices
		}
	case ctlHeal:
		w.partition = false
		if w.sess == nil && !w.down {
			w.attempt = max(w.attempt, 1)
			w.scheduleReconnect(w.attempt)
		}
	case ctlCrash:
		if w.sess != nil {
			w.closeSession(false)
			w.update(func(s *Stats) { s.Crashes++ })
			if !w.down {
				w.attempt = 1
				w.scheduleReconnect(w.attempt)
			}
		}
	case ctlReboot:
		w.reboot()
	case ctlReconnect:
		w.down = false
		if w.sess == nil {
			w.timers.after(tReconnect, w.clk.Now(), 0)
		}
	case ctlHeartbeat:
		w.timers.setHeartbeat(w.clk.Now(), c.d)
	case ctlTelemetry:
		w.timers.setTelemetry(w.clk.Now(), c.d)
	}
}
