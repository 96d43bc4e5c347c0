package leader

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// asks correlates outstanding deliveries with the acks that answer them.
// Each ask is bound to its receiver: command ids are sequential and easy to
// guess, so an ack counts only from the worker the command went to.
//
// An ask is waiting (Leader.ask: a goroutine waits on its channel) or
// started (startedAsks: nothing waits; the ack, the timeout or the end of
// its context finishes it through the relay's Finish).
//
// The asks live in slots reused from one ask to the next, found by id:
// a map of them by value would allocate each (a started ask is too
// large to be stored in the map itself).
type asks struct {
	mu        sync.Mutex
	byID      map[string]int32 // each pending ask's slot
	slots     []pendingAsk     // pending asks, and free slots (zero) listed in free
	free      []int32
	perWorker map[string]int  // pending asks per worker, so a reconnect with none costs nothing
	seq       atomic.Uint64   // the last started ask's
	ctx       context.Context // the started asks' context, watched (begin)
	// abandoning counts the watches of started asks' contexts that have
	// not returned: each runs once its context ends (runRelay waits).
	abandoning sync.WaitGroup
}

type pendingAsk struct {
	worker string             // the receiver, the only worker whose ack answers it
	ch     chan wire.Envelope // a waiting ask's; nil for a started one
	// A waiting ask's signal that its worker came online on a new
	// connection (buffer 1: signals coalesce): it publishes again itself.
	resend chan struct{}

	// A started ask's.
	fin     outbox.Finish
	ctx     context.Context
	topic   string
	payload []byte
	seq     uint64        // of its last publish: a timer armed for an earlier one misses it
	timer   clock.Timer   // its ask timeout
	sent    time.Duration // its last publish, on the leader's monotonic clock
	again   bool          // its worker came online on a new connection since (publishAgain)
}

// ackFate is what an ack did.
type ackFate int

const (
	ackAnswered ackFate = iota // it answered the ask waiting for it
	ackLate                    // no ask waits for its ref (timed out, duplicate, or never sent)
	ackForged                  // an ask waits for its ref, but from another worker
)

func (a *asks) init() {
	a.byID = make(map[string]int32)
	a.perWorker = make(map[string]int)
}

// register adds the waiting ask id to worker. Its ack arrives on ch;
// again receives a value whenever worker comes online on a new
// connection (markAgain).
func (a *asks) register(id, worker string) (ch chan wire.Envelope, again <-chan struct{}) {
	p := pendingAsk{worker: worker, ch: make(chan wire.Envelope, 1), resend: make(chan struct{}, 1)}
	a.mu.Lock()
	a.putLocked(id, p)
	a.mu.Unlock()
	return p.ch, p.resend
}

func (a *asks) remove(id string) {
	a.mu.Lock()
	if _, ok := a.byID[id]; ok {
		a.deleteLocked(id)
	}
	a.mu.Unlock()
}

// complete hands ack, sent by worker from, to the ask waiting for it, or
// returns the started ask it answers for the caller to finish. An ack
// from any worker but the ask's receiver is forged: the ask is left
// waiting for its receiver's answer.
func (a *asks) complete(ref, from string, ack wire.Envelope) (ackFate, pendingAsk) {
	a.mu.Lock()
	i, ok := a.byID[ref]
	switch {
	case !ok:
		a.mu.Unlock()
		return ackLate, pendingAsk{}
	case a.slots[i].worker != from:
		a.mu.Unlock()
		return ackForged, pendingAsk{}
	}
	p := a.deleteLocked(ref)
	a.mu.Unlock()
	if p.ch != nil {
		p.ch <- ack // buffered, and only one ack is ever sent on it
	}
	return ackAnswered, p
}

// begin registers the started ask p as id, unless ctx has ended. It
// returns the started ask id replaced, if any: the store handed the
// message out again while that one waited. The first ask of a context
// has abandon called once the context ends, to finish the asks still
// pending under it.
func (a *asks) begin(ctx context.Context, id string, p pendingAsk, abandon func(context.Context)) (old pendingAsk, replaced, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ctx.Err() != nil {
		return pendingAsk{}, false, false
	}
	if ctx != a.ctx {
		a.ctx = ctx
		a.abandoning.Add(1)
		context.AfterFunc(ctx, func() {
			defer a.abandoning.Done()
			abandon(ctx)
		})
	}
	if _, replaced = a.byID[id]; replaced {
		old = a.deleteLocked(id)
	}
	a.putLocked(id, p)
	return old, replaced && old.ch == nil, true
}

// arm gives the started ask id its timer, unless the ask has ended or
// moved on to a later publish: then the timer is stopped.
func (a *asks) arm(id string, seq uint64, t clock.Timer) {
	a.mu.Lock()
	p := a.startedLocked(id, seq)
	if p != nil {
		p.timer = t
	}
	a.mu.Unlock()
	if p == nil {
		t.Stop()
	}
}

// stopTimer stops a started ask's timer, if it has one yet.
func (p *pendingAsk) stopTimer() bool { return p.timer != nil && p.timer.Stop() }

// take removes and returns the started ask id, if its last publish is seq.
func (a *asks) take(id string, seq uint64) (pendingAsk, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.startedLocked(id, seq) == nil {
		return pendingAsk{}, false
	}
	return a.deleteLocked(id), true
}

// takeAll removes and returns the started asks of ctx.
func (a *asks) takeAll(ctx context.Context) []pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []pendingAsk
	for id, i := range a.byID {
		if p := &a.slots[i]; p.ch == nil && p.ctx == ctx {
			out = append(out, a.deleteLocked(id))
		}
	}
	return out
}

// markAgain tells the asks to worker, which came online on a new
// connection, that what went to the old one will not be answered: a
// waiting ask is signalled and publishes again itself; a started one is
// marked, for publishAgain. It reports whether it marked a started ask.
func (a *asks) markAgain(worker string) (started bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perWorker[worker] == 0 {
		return false
	}
	for _, i := range a.byID {
		p := &a.slots[i]
		switch {
		case p.worker != worker:
		case p.ch != nil:
			select {
			case p.resend <- struct{}{}:
			default:
			}
		default:
			p.again, started = true, true
		}
	}
	return started
}

// rearm returns the started asks to worker marked again, each with a
// new seq and a new timeout from arm, and clears the mark; an ask whose
// timeout is firing already is left to it.
func (a *asks) rearm(worker string, now time.Duration, arm func(id string, seq uint64) clock.Timer) []pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perWorker[worker] == 0 { // every wake asks, most with nothing out
		return nil
	}
	var out []pendingAsk
	for id, i := range a.byID {
		p := &a.slots[i]
		// An ask not armed yet is not published yet either: it reaches
		// the new connection without help.
		if p.worker != worker || !p.again || !p.stopTimer() {
			continue
		}
		p.seq = a.seq.Add(1)
		p.timer, p.sent, p.again = arm(id, p.seq), now, false
		out = append(out, *p)
	}
	return out
}

// startedLocked is the started ask id if its last publish is seq, or nil.
func (a *asks) startedLocked(id string, seq uint64) *pendingAsk {
	i, ok := a.byID[id]
	if !ok {
		return nil
	}
	if p := &a.slots[i]; p.ch == nil && p.seq == seq {
		return p
	}
	return nil
}

// putLocked stores p as id, in a free slot if there is one.
func (a *asks) putLocked(id string, p pendingAsk) {
	var i int32
	if n := len(a.free); n > 0 {
		i, a.free = a.free[n-1], a.free[:n-1]
	} else {
		i = int32(len(a.slots))
		a.slots = append(a.slots, pendingAsk{})
	}
	a.slots[i] = p
	a.byID[id] = i
	a.perWorker[p.worker]++
}

// deleteLocked removes the pending ask id and returns it; its slot is
// cleared (nothing of the ask stays reachable) and freed.
func (a *asks) deleteLocked(id string) pendingAsk {
	i := a.byID[id]
	p := a.slots[i]
	a.slots[i] = pendingAsk{}
	a.free = append(a.free, i)
	delete(a.byID, id)
	if n := a.perWorker[p.worker]; n > 1 {
		a.perWorker[p.worker] = n - 1
	} else {
		delete(a.perWorker, p.worker)
	}
	return p
}
