package transport

import (
	"context"
	"slices"
	"sync"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// SubscribeNoWait asks the broker for filter, its messages going to
// ClientOptions.DefaultHandler, and returns without waiting for the
// answer: for a gateway, whose one session carries many devices and must
// not hold any of them up. The broker takes a connection's packets in
// order, so what the session publishes after this reaches the broker
// after the SUBSCRIBE. Only an error the client knows at once (not
// connected) is returned. Redial makes the subscription again.
//
// The broker's answer is read in the background, one subscription after
// another, on a goroutine of the session's that Close stops. A SUBSCRIBE
// refused for its packet id (mochi's 0x91; see subscribe) is sent again,
// as Subscribe does; a refusal for good (an ACL, or 0x91 every time) is
// an ErrSubscribeRefused passed to refused there, if refused is not nil.
// A subscription answered after the connection was lost is not reported:
// Redial makes it again.
func (s *Session) SubscribeNoWait(filter string, qos byte, refused func(error)) error {
	sub := subscription{filter: filter, qos: qos}
	t := s.c.Subscribe(filter, qos, nil)
	if err := now(t); err != nil {
		return err
	}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	s.answers.add(s, pendingSub{t: t, sub: sub, attempt: 1, refused: refused})
	return nil
}

// SendRetainedDone is SendRetained that also returns a channel closed
// when the broker has taken the message (its PUBACK), or when the
// client gives up on it. It may stay open if the connection is lost
// first: wait on Lost too.
func (s *Session) SendRetainedDone(topic string, qos byte, payload []byte) (<-chan struct{}, error) {
	t := s.c.Publish(topic, qos, true, payload)
	return t.Done(), now(t)
}

// pendingSub is a SUBSCRIBE sent by SubscribeNoWait, its answer unread.
type pendingSub struct {
	t       paho.Token
	sub     subscription
	attempt int
	refused func(error)
}

// subAnswers reads the answers to a session's SubscribeNoWait calls in
// order, on one goroutine started by the first call and stopped by
// Session.Close: a gateway's thousand devices subscribing cost one
// goroutine, not a thousand.
type subAnswers struct {
	mu      sync.Mutex
	queue   []pendingSub
	wake    chan struct{} // cap 1: the queue grew
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine has returned
	stopped bool
}

func (a *subAnswers) add(s *Session, p pendingSub) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return
	}
	if a.wake == nil {
		a.wake = make(chan struct{}, 1)
		a.ctx, a.cancel = context.WithCancel(context.Background())
		a.done = make(chan struct{})
		go a.run(s)
	}
	a.queue = append(a.queue, p)
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// stop ends the goroutine, if one started, and waits for it.
func (a *subAnswers) stop() {
	a.mu.Lock()
	a.stopped = true
	done := a.done
	if a.cancel != nil {
		a.cancel()
	}
	a.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (a *subAnswers) next() (pendingSub, bool) {
	for {
		a.mu.Lock()
		if len(a.queue) > 0 {
			p := a.queue[0]
			a.queue[0] = pendingSub{}
			a.queue = a.queue[1:]
			a.mu.Unlock()
			return p, true
		}
		a.mu.Unlock()
		select {
		case <-a.wake:
		case <-a.ctx.Done():
			return pendingSub{}, false
		}
	}
}

func (a *subAnswers) run(s *Session) {
	defer close(a.done)
	for {
		p, ok := a.next()
		if !ok {
			return
		}
		select {
		case <-p.t.Done():
		case <-a.ctx.Done():
			return
		}
		if p.t.Error() != nil {
			continue // the connection was lost: Redial subscribes again
		}
		code := subackCode(p.t, p.sub.filter)
		if d, again := retryAfter(code, p.attempt); again {
			if s.retryPause(a.ctx, d) != nil {
				return
			}
			if !s.subscribed(p.sub.filter) {
				continue // unsubscribed meanwhile
			}
			t := s.c.Subscribe(p.sub.filter, p.sub.qos, nil)
			if now(t) != nil {
				continue // not connected: Redial subscribes again
			}
			p.t, p.attempt = t, p.attempt+1
			a.mu.Lock()
			a.queue = append(a.queue, p)
			a.mu.Unlock()
		} else if err := subackError(p.sub.filter, code); err != nil && p.refused != nil {
			p.refused(err)
		}
	}
}

// subscribed reports whether filter is among the session's subscriptions.
func (s *Session) subscribed(filter string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.subs, func(sub subscription) bool { return sub.filter == filter })
}
