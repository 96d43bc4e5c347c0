package leader

import (
	"context"
	"time"
)

// A worker's status topic is not the only evidence of its liveness: a
// broker may lose a will (a cluster node that dies takes its clients'
// wills with it) or never deliver a retained status (RabbitMQ does not
// replay retained messages to a wildcard subscription). So the leader also
// goes by traffic:
//
//   - any message from a worker it believes offline, or has not heard of,
//     brings it online (heard): the broker lets only the worker's own
//     session publish on its up topic;
//   - a worker it has heard nothing from for Config.SuspectAfter is
//     suspect (watchSilence): its commands park as an offline worker's do,
//     spending no attempt and so never reaching the dead letters for a
//     will the broker lost, until it is heard again;
//   - once subscribed, at its start and after dialing its broker again,
//     it asks the fleet to announce itself again (askAnnounce): each
//     worker and gateway republishes its status after a random wait.

// reviveGrace is how long after a worker's offline a message from it
// brings it back no more: a cluster may deliver a will and the messages
// its session sent before dropping by different nodes, in either order.
const reviveGrace = time.Second

// heard records a message from worker at now and reports whether it
// brought the worker back: offline (past reviveGrace), never seen, or
// suspect. A worker brought back by traffic has no known epoch: the next
// offline applies whatever its epoch (see staleOffline).
func (f *fleetView) heard(id string, now time.Time) (revived bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.get(id)
	w.lastHeard = now
	switch {
	case w.suspect:
		w.suspect = false
		return true
	case w.online:
		return false
	case w.seen && now.Sub(w.since) < reviveGrace:
		return false
	}
	w.online, w.seen, w.since, w.epoch, w.epochUnknown = true, true, now, "", true
	return true
}

// silent marks suspect every online worker heard from last before cutoff
// (by a message or its online status) and returns them.
func (f *fleetView) silent(cutoff time.Time) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id, w := range f.workers {
		if w.online && !w.suspect && w.lastHeard.Before(cutoff) {
			w.suspect = true
			out = append(out, id)
		}
	}
	return out
}

// onTraffic is onUp's first step for a well-formed message from worker:
// traffic from a worker the leader had offline, had not heard of, or
// suspected brings it online, and the relay tries it again.
func (l *Leader) onTraffic(worker string, now time.Time) {
	if !l.fleet.heard(worker, now) {
		return
	}
	l.c.heardBack.Add(1)
	l.reconnected(worker)
	l.relay.SetOnline(worker)
	l.wakes.add(worker)
}

// watchSilence suspects, every quarter of Config.SuspectAfter, the online
// workers not heard from for SuspectAfter: the relay parks their commands
// until they are heard again.
func (l *Leader) watchSilence(ctx context.Context) {
	l.every(ctx, l.cfg.SuspectAfter/4, func() {
		for _, w := range l.fleet.silent(l.clk.Now().Add(-l.cfg.SuspectAfter)) {
			l.c.suspected.Add(1)
			l.relay.SetOffline(w)
		}
	})
}

// askAnnounce asks the fleet, on wire.Topics.Announce, to say again that
// it is online: a broker that replays no retained status to a wildcard
// subscription (or lost some) leaves the leader hearing of the workers
// only by their traffic otherwise. Workers answer after a random wait, so
// a large fleet does not answer at once. A failure is logged: the
// workers' traffic brings them online all the same.
func (l *Leader) askAnnounce(ctx context.Context, link Link) {
	if err := link.Publish(ctx, l.cfg.Topics.Announce(), 0, false, []byte(announcePayload)); err != nil && ctx.Err() == nil {
		l.cfg.Logger.Debug("ask the fleet to announce itself", "err", err)
	}
}

// announcePayload is what the leader publishes on the announce topic;
// workers read the topic, not the payload.
const announcePayload = "announce"
