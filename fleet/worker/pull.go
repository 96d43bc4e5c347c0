package worker

import (
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// pullState is a pulling worker's side of work pulling (Config.Pull).
type pullState struct {
	// RAM: lost in a reboot.
	request string    // the job request in flight or to ask again ("": a new one)
	due     time.Time // when the next job request may go
	held    string    // the pulled job in the mailbox or in service
	until   time.Time // its lease's end, on the leader's clock
	lost    bool      // the session dropped while it was held
	// Flash: the job finished and not yet reported (a reboot keeps it, or
	// the leader would hand the job out again and it would run twice).
	done string
}

// pullNext sends a job request when one is due: the worker pulls, is
// online, holds no pulled job and has none in flight. It returns when to
// look again (zero: nothing to wait for).
func (w *Worker) pullNext(now time.Time, inFlight bool) time.Time {
	p := &w.pull
	if w.cfg.Pull == nil || w.sess == nil || p.held != "" || inFlight {
		return time.Time{}
	}
	if now.Before(p.due) {
		return p.due
	}
	if p.request == "" {
		p.request = w.newID("p")
	}
	env := wire.Envelope{V: wire.Version, ID: p.request, Kind: wire.KindRequest, SentMs: now.UnixMilli(),
		Body: wire.Body(wire.Request{What: wire.RequestJob, Done: p.done})}
	a := &ask{pull: true}
	if !w.sendAsk(env, a) {
		return time.Time{}
	}
	a.deadline = now.Add(w.cfg.Pull.Timeout)
	w.update(func(s *Stats) { s.PullsSent++ })
	return a.deadline
}

// pullReply takes the leader's answer to a job request.
func (w *Worker) pullReply(env wire.Envelope) {
	p := &w.pull
	now := w.clk.Now()
	switch env.Result {
	case wire.ResultOK:
		var j wire.Job
		if env.BodyInto(&j) != nil || j.ID == "" {
			w.update(func(s *Stats) { s.PullsRefused++ })
			p.due = now.Add(w.cfg.Pull.Interval)
			return
		}
		p.request, p.done = "", "" // answered: the report went with it
		cmd := wire.Envelope{V: wire.Version, ID: j.ID, Kind: wire.KindJob, Key: env.Key, Seq: env.Seq, SentMs: env.SentMs, Body: env.Body}
		if err := w.mb.Offer(ctxBackground, command{env: cmd, at: now}); err != nil {
			// No room (pushed commands fill the mailbox): the lease runs
			// out and the leader gives the job to someone else.
			w.update(func(s *Stats) { s.JobsAbandoned++ })
			p.due = now.Add(w.cfg.Pull.Interval)
			return
		}
		p.held, p.until, p.lost = j.ID, time.UnixMilli(env.SentMs+j.LeaseMs), false
		w.update(func(s *Stats) { s.JobsPulled++; s.holdJob(1) })
		w.startNext()
	case wire.ResultDrained:
		p.request, p.done = "", ""
		p.due = now.Add(max(env.RetryAfter(), w.cfg.Pull.Interval) + w.pullJitter())
		w.update(func(s *Stats) { s.PullsDrained++ })
	case wire.ResultFull:
		// Not taken: asked again, the done report with it.
		p.due = now.Add(max(env.RetryAfter(), time.Millisecond) + w.pullJitter())
		w.update(func(s *Stats) { s.PullsFull++ })
	default:
		p.request = ""
		p.due = now.Add(w.cfg.Pull.Interval + w.pullJitter())
		w.update(func(s *Stats) { s.PullsRefused++ })
	}
}

func (w *Worker) pullJitter() time.Duration {
	if j := w.cfg.Pull.Jitter; j > 0 {
		return time.Duration(w.rnd.Int64N(int64(j)))
	}
	return 0
}

// pullExpired handles a job request that got no answer: on a live session
// it is a stranded wait (the request or its answer was dropped), asked
// again with the same id after a random wait in [0, Jitter); a lost
// session asks again when back. The wait matters after a leader restart:
// the requests the crash lost all time out at once, and without it the
// whole fleet would ask again in the same instant.
func (w *Worker) pullExpired(now time.Time, stranded bool) {
	w.pull.due = now
	if stranded {
		w.pull.due = now.Add(w.pullJitter())
		w.update(func(s *Stats) { s.StrandedWaits++ })
	}
}

// keepPulled decides, as a pulled job finishes, whether its effect
// counts: only while the worker still holds its lease and kept its
// session, or the leader may have given it to another worker meanwhile.
// A kept job is reported done with the next job request; an abandoned one
// is not, and the leader gives it out again when its lease runs out.
func (w *Worker) keepPulled(env wire.Envelope) bool {
	p := &w.pull
	now := w.clk.Now()
	keep := p.held == env.ID && !p.lost && now.Before(p.until)
	p.held, p.due = "", now
	if !keep {
		w.update(func(s *Stats) { s.JobsAbandoned++ })
		return false
	}
	p.done = env.ID
	return true
}

// loseSession marks a held pulled job as abandoned: the session it was
// leased on is gone.
func (w *Worker) pullLoseSession() {
	if w.pull.held != "" {
		w.pull.lost = true
	}
}

// pullReboot forgets what the RAM held.
func (w *Worker) pullReboot() {
	w.pull = pullState{done: w.pull.done}
}

// isPulled reports whether env is a job from the leader's queue, handed
// out by a job request (it has a lease).
func isPulled(env wire.Envelope) (wire.Job, bool) {
	if env.Kind != wire.KindJob || len(env.Body) == 0 {
		return wire.Job{}, false
	}
	var j wire.Job
	if env.BodyInto(&j) != nil {
		return wire.Job{}, false
	}
	return j, j.LeaseMs > 0
}

// holdJob counts a job the device took (+1) or let go (-1).
func (s *Stats) holdJob(d int) {
	s.JobsHeld = max(s.JobsHeld+d, 0)
	s.JobsHeldPeak = max(s.JobsHeldPeak, s.JobsHeld)
}
