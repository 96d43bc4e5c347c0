package leader

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// BrokerStats is the leader's session with its broker.
type BrokerStats struct {
	// Connected says the session is up now. A Link that is not a
	// Redialer always counts as connected.
	Connected bool
	// Disconnects counts the sessions lost, Reconnects those dialed
	// again, FailedRedials the attempts to dial again that failed.
	Disconnects, Reconnects, FailedRedials uint64
	// Downtime is the time spent without a session since New, the outage
	// in progress included.
	Downtime time.Duration
}

// linkState is the leader's session as keepLink sees it: up, or lost and
// being dialed again.
type linkState struct {
	mu                                     sync.Mutex
	up                                     bool
	changed                                chan struct{} // closed and replaced when up changes
	since                                  time.Time     // when the outage in progress began
	downtime                               time.Duration // of the outages that have ended
	disconnects, reconnects, failedRedials uint64
}

func (s *linkState) init() { s.up, s.changed = true, make(chan struct{}) }

// watch returns whether the session is up and a channel closed when that
// changes.
func (s *linkState) watch() (up bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up, s.changed
}

// set records the session going down or coming back at now, and returns
// the outage that ended (0 when it went down).
func (s *linkState) set(up bool, now time.Time) (outage time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up == up {
		return 0
	}
	s.up = up
	close(s.changed)
	s.changed = make(chan struct{})
	if !up {
		s.disconnects++
		s.since = now
		return 0
	}
	s.reconnects++
	outage = now.Sub(s.since)
	s.downtime += outage
	return outage
}

func (s *linkState) failed() {
	s.mu.Lock()
	s.failedRedials++
	s.mu.Unlock()
}

// stats reads clk only during an outage: a reading is not free (a scaled
// clock's), and Stats is called often.
func (s *linkState) stats(clk clock.Clock) BrokerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := BrokerStats{Connected: s.up, Disconnects: s.disconnects, Reconnects: s.reconnects, FailedRedials: s.failedRedials, Downtime: s.downtime}
	if !s.up {
		b.Downtime += clk.Now().Sub(s.since)
	}
	return b
}

// keepLink keeps the leader's session until ctx ends: when it is lost,
// the relay pauses (runRelay) and keepLink dials again with
// Config.Reconnect's backoff, jittered from the leader's seed; once the
// session is back (its subscriptions with it), the relay resumes and the
// leader says "online" again: the broker published its last will when the
// connection dropped, or lost its retained status in a restart. A link its
// owner closes (Redialer.Closed) is not dialed again.
//
// Each loss and each recovery is logged once, and the first failed
// attempt of an outage: not every attempt.
func (l *Leader) keepLink(ctx context.Context, rd Redialer) {
	r := rand.New(rand.NewPCG(l.cfg.Seed, 0x5e55))
	for {
		select {
		case <-ctx.Done():
			return
		case <-rd.Lost():
		}
		if rd.Closed() || ctx.Err() != nil {
			return
		}
		l.link.set(false, l.clk.Now())
		l.cfg.Logger.Warn("lost the session with the broker: deliveries pause, reconnecting", "err", rd.Err())
		attempts := 0
		err := l.cfg.Reconnect.Retry(ctx, l.clk, r, func(ctx context.Context) error {
			attempts++
			err := rd.Redial(ctx)
			switch {
			case err == nil:
				return nil
			case rd.Closed():
				return flow.Permanent(err)
			}
			l.link.failed()
			if attempts == 1 {
				l.cfg.Logger.Warn("broker unreachable; retrying with backoff", "err", err, "max_wait", l.cfg.Reconnect.Cap)
			}
			return err
		})
		if err != nil {
			return // ctx ended, or the link was closed: Run is ending
		}
		outage := l.link.set(true, l.clk.Now())
		l.cfg.Logger.Info("reconnected to the broker: deliveries resume", "down", outage, "attempts", attempts)
		if err := rd.Publish(ctx, l.cfg.Topics.LeaderStatus(), 1, true, []byte(wire.StatusOnline)); err != nil && ctx.Err() == nil {
			l.cfg.Logger.Debug("announce online after reconnecting", "err", err) // a new loss shows on Lost
			continue
		}
		l.askAnnounce(ctx, rd)
	}
}

// sessionLost reports whether the leader's session is gone and the
// leader is about to notice: a Redialer that is not connected and not
// closed by its owner (keepLink then pauses the relay).
func (l *Leader) sessionLost() bool {
	rd, ok := l.cfg.Link.(Redialer)
	return ok && !rd.Connected() && !rd.Closed()
}

// runRelay runs the relay while the session is up. A lost session stops
// it: the deliveries in flight are handed back without an attempt charged,
// as at a clean stop (their asks could only time out, and commands sent
// into a dead session would burn their retries toward the dead letters),
// and nothing is leased meanwhile. The relay starts again once the
// session is back and goes on from the outbox.
func (l *Leader) runRelay(ctx context.Context) error {
	for {
		up, changed := l.link.watch()
		if !up {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
				continue
			}
		}
		rctx, pause := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-changed:
				pause()
			case <-rctx.Done():
			}
		}()
		err := l.relay.Run(rctx)
		pause()
		<-watched
		l.asks.abandoning.Wait() // the watch of rctx's started asks, if any
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
}
