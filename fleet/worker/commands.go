package worker

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// onMessage handles one message on the worker's down topic.
func (w *Worker) onMessage(topic string, payload []byte) {
	if w.linkLoses() {
		return
	}
	if topic == w.cfg.Topics.Announce() {
		w.onAnnounce()
		return
	}
	env, err := wire.Decode(topic, payload, wire.Down, w.cfg.MaxPayload)
	if err != nil {
		w.update(func(s *Stats) { s.Malformed++ })
		if id := wire.PeekID(payload, w.cfg.MaxPayload); id != "" {
			w.answer(wire.Envelope{V: wire.Version, Kind: wire.KindAck, Ref: id, Result: wire.ResultReject, Reason: err.Error()})
		}
		return
	}
	if env.Kind == wire.KindReply {
		w.onReply(env)
		return
	}
	w.onCommand(env)
}

// onCommand answers a command at once — ok if the mailbox took it, full
// with the mailbox's retry-after hint if not — and starts work if idle.
// It records the command's delivery lag first.
func (w *Worker) onCommand(env wire.Envelope) {
	now := w.clk.Now()
	if env.SentMs > 0 {
		w.cfg.DeliveryLag.Record(now.Sub(time.UnixMilli(env.SentMs)))
	}
	if env.Attempt > w.st.MaxAttempt { // read by the loop only; written under mu
		w.update(func(s *Stats) { s.MaxAttempt = env.Attempt })
	}
	ack := wire.Ack(&env, wire.ResultOK)
	if reason := refuse(env); reason != "" {
		// Refused for good: retrying cannot help, so the leader should
		// dead-letter it now rather than spend attempts on it.
		ack.Result, ack.Reason = wire.ResultReject, reason
		w.update(func(s *Stats) { s.Refused++ })
		w.answer(ack)
		return
	}
	if err := w.mb.Offer(ctxBackground, command{env: env, at: now}); err == nil {
		w.update(func(s *Stats) {
			s.AckedOK++
			if env.Kind == wire.KindJob {
				s.holdJob(1)
			}
		})
	} else {
		// full lives in this branch: errors.As takes its address, which
		// moves it to the heap, and an accepted command should not pay.
		var retryAfter time.Duration
		if full := (*mailbox.FullError)(nil); errors.As(err, &full) {
			retryAfter = full.RetryAfter
		} else { // dropped by policy, or closed: say full so the leader tries again
			retryAfter = w.mb.RetryAfter()
		}
		ack.Result, ack.RetryAfterMs = wire.ResultFull, max(retryAfter.Milliseconds(), 1)
		w.update(func(s *Stats) { s.AckedFull++ })
	}
	w.answer(ack)
	w.startNext()
}

// refuse returns why the worker will never carry out env, or "" if it
// will. The wire format admits any non-empty version; a worker installs
// only a version wire.ValidVersion accepts, the rule the leader deploys
// by ("2.1.0", "2024-05-rc1"). A scenario's poison commands are applies
// of versions outside it, enqueued past the leader's check.
func refuse(env wire.Envelope) string {
	if env.Kind != wire.KindConfig && env.Kind != wire.KindFirmware {
		return ""
	}
	var a wire.Apply
	_ = env.BodyInto(&a) // Decode checked it
	if err := wire.ValidVersion(a.Version); err != nil {
		return fmt.Sprintf("%s cannot be installed: %v", env.Kind, err)
	}
	return ""
}

// answer sends an ack without waiting for the broker: at once, or, with
// a round trip configured (Config.RTT), that long after the command came,
// as a network between the leader and this worker would.
func (w *Worker) answer(env wire.Envelope) {
	if w.cfg.RTT == (dist.Dist{}) {
		w.publish(env)
		return
	}
	due := w.clk.Now().Add(w.cfg.RTT.Sample(w.rnd))
	i := len(w.answers)
	for i > 0 && w.answers[i-1].due.After(due) {
		i--
	}
	w.answers = slices.Insert(w.answers, i, delayedAnswer{due: due, env: env})
}

// delayedAnswer is an ack on its way back to the leader.
type delayedAnswer struct {
	due time.Time
	env wire.Envelope
}

// sendDue sends the answers whose round trip is over and returns when the
// next is due (zero if none waits). An answer due while the worker is
// offline is lost, as on a network: the leader's ask times out.
func (w *Worker) sendDue(now time.Time) time.Time {
	n := 0
	for n < len(w.answers) && !w.answers[n].due.After(now) {
		w.publish(w.answers[n].env)
		n++
	}
	w.answers = w.answers[n:]
	if len(w.answers) == 0 {
		return time.Time{}
	}
	return w.answers[0].due
}

// publish sends an envelope on the worker's up topic without waiting for
// the broker.
func (w *Worker) publish(env wire.Envelope) {
	if w.sess == nil {
		return
	}
	if w.sendUp(env) != nil {
		w.update(func(s *Stats) { s.SendErrors++ })
	}
}

// sendUp sends env on the worker's up topic without waiting for the
// broker, unless the lossy link loses it (Config.Loss): then nothing is
// sent and, as on a radio link, the sender is not told.
func (w *Worker) sendUp(env wire.Envelope) error {
	b, err := wire.Encode(env)
	if err != nil || w.linkLoses() {
		return err
	}
	if w.up == "" {
		w.up = w.cfg.Topics.Up(w.cfg.ID)
	}
	return w.sess.Send(w.up, 1, b)
}

// linkLoses draws whether the link loses the next message, and counts it.
func (w *Worker) linkLoses() bool {
	if w.cfg.Loss <= 0 || w.rnd.Float64() >= w.cfg.Loss {
		return false
	}
	w.update(func(s *Stats) { s.LinkLost++ })
	return true
}

// startNext takes the next command if the worker is idle. Service time is
// accounted, not burnt: a command shorter than a millisecond completes at
// once (on time: its service lag is 0); a longer one is due d from now and
// arms the service timer.
func (w *Worker) startNext() {
	for i := 0; !w.busy && i < 64; i++ {
		cmd, ok := w.mb.TryTake()
		if !ok {
			return
		}
		d := w.cfg.Service.Sample(w.rnd)
		if wm := jobWork(cmd.env); wm > 0 {
			d = wm
		}
		if d < time.Millisecond {
			w.cfg.ServiceLag.Record(0)
			w.apply(cmd.env)
			continue
		}
		w.busy = true
		cur := cmd.env // only a command served later goes to the heap
		w.current = &cur
		now := w.clk.Now()
		w.due = now.Add(d)
		w.timers.after(tService, now, d)
		w.update(func(s *Stats) { s.Busy = true })
	}
}

// finishCommand completes the command being served, recording how late
// the loop got to it: the service timer's overshoot plus whatever else
// the loop was doing when it fired.
func (w *Worker) finishCommand() {
	if !w.busy {
		return
	}
	w.busy = false
	w.cfg.ServiceLag.Record(w.clk.Now().Sub(w.due))
	w.update(func(s *Stats) { s.Busy = false })
	cur := w.current
	w.current = nil
	w.apply(*cur)
	w.startNext()
}

func jobWork(env wire.Envelope) time.Duration {
	if env.Kind != wire.KindJob || len(env.Body) == 0 {
		return 0
	}
	var j wire.Job
	if env.BodyInto(&j) != nil {
		return 0
	}
	return time.Duration(j.WorkMs) * time.Millisecond
}

// apply carries out a command's effect — once per idempotency key and
// sequence number, however many times it was delivered, and never for a
// seq below one applied under its key (stale). What it remembers is the
// flash: a Reboot keeps it.
func (w *Worker) apply(env wire.Envelope) {
	job, pulled := isPulled(env)
	if env.Kind == wire.KindJob {
		w.update(func(s *Stats) { s.holdJob(-1) })
	}
	if pulled && !w.keepPulled(env) {
		return
	}
	now := w.clk.Now()
	if env.TTLMs > 0 && env.SentMs > 0 && now.UnixMilli() > env.SentMs+env.TTLMs {
		w.update(func(s *Stats) { s.Expired++ })
		return
	}
	if env.Key != "" {
		if seq, ok := w.applied[env.Key]; ok && env.Seq <= seq {
			if env.Seq == seq {
				w.update(func(s *Stats) { s.Duplicates++ })
			} else {
				w.update(func(s *Stats) { s.Stale++ })
			}
			return
		}
		if w.applied == nil {
			w.applied = make(map[string]uint64)
		}
		w.applied[env.Key] = env.Seq
	}
	switch env.Kind {
	case wire.KindConfig, wire.KindFirmware:
		var a wire.Apply
		_ = env.BodyInto(&a) // Decode checked it
		w.version = a.Version
		w.update(func(s *Stats) {
			s.Applied++
			s.Version = a.Version
			if s.AppliedVersions == nil {
				s.AppliedVersions = map[string]int{}
			}
			s.AppliedVersions[a.Version]++
			if s.FirstApplied == nil {
				s.FirstApplied = map[string]time.Time{}
			}
			if _, ok := s.FirstApplied[a.Version]; !ok {
				s.FirstApplied[a.Version] = w.clk.Now()
			}
		})
	case wire.KindJob:
		w.update(func(s *Stats) { s.Jobs++ })
		if !pulled {
			job, _ = isPulled(env) // a pushed job from the queue names itself too
		}
		if job.ID != "" && w.cfg.OnJob != nil {
			w.cfg.OnJob(w.cfg.ID, job.ID)
		}
	case wire.KindPing:
		w.update(func(s *Stats) { s.Pings++ })
	}
}
