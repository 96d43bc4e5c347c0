package worker

import (
	"container/heap"
	"context"
	"sync"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// loop drives many workers on one goroutine: the devices behind a Pool's
// gateways, which have no goroutine, channels or clock timers of their
// own. It calls the same handlers a worker's own Run does (onMessage,
// onLost, onControl, runTimers, then housekeeping), one event at a time:
// messages and controls come through one queue, and the workers' due
// times wait in one heap, under one clock timer armed at the earliest.
//
// A handler must never wait on the network: on a virtual session
// (deviceSession) Subscribe and Publish hand their packet to the
// gateway's session and return, which keeps the order a device needs
// (its SUBSCRIBE before its "online"), since the broker takes one
// connection's packets in order. What a handler may still wait for is the
// gateway's session taking the packet, when the broker does not read it
// (backpressure, bounded by the session's write timeout): one loop per
// gateway, so that holds up only the devices that share that session.
type loop struct {
	clk clock.Clock
	t   *dueTimer // owned by Run

	mu      sync.Mutex
	queue   []event // posted, not yet taken
	stopped bool    // Run has ended: posts are dropped
	wakeup  chan struct{}

	// Owned by Run.
	due     dueHeap
	workers []*Worker           // started, to stop at the end
	early   map[*Worker][]event // for workers not started yet, in order
	spare   []event             // the queue's other buffer
}

// event is one thing for a worker on a loop to handle.
type event struct {
	w    *Worker
	kind eventKind
	in   incoming // evMessage; evLost: in.sess is the session lost
	c    control  // evControl
}

type eventKind uint8

const (
	evStart eventKind = iota
	evMessage
	evLost
	evControl
)

// spareEvents is the most room for events a loop keeps between bursts.
const spareEvents = 1024

func newLoop(c clock.Clock) *loop {
	return &loop{clk: c, wakeup: make(chan struct{}, 1)}
}

// post queues e for the loop and reports whether it took it: it does not
// once Run has ended. It never waits, and is safe from any goroutine.
func (l *loop) post(e event) bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	l.queue = append(l.queue, e)
	first := len(l.queue) == 1
	l.mu.Unlock()
	if first {
		select {
		case l.wakeup <- struct{}{}:
		default:
		}
	}
	return true
}

// start has the loop start w (connect, arm its tickers): the Pool's ramp.
func (l *loop) start(w *Worker) { l.post(event{w: w, kind: evStart}) }

// Run handles events until ctx ends; then every worker started says
// goodbye (Worker.stop), and Run returns.
func (l *loop) Run(ctx context.Context) error {
	l.t = newDueTimer(l.clk)
	defer l.t.stop()
	late := false // as in Worker.Run
	for {
		if n := l.next(); l.t.arm(n) {
			if !late {
				late = true
				l.fire(ctx)
				continue
			}
			l.t.force(n)
		}
		late = false
		select {
		case <-ctx.Done():
			l.shutdown()
			return nil
		case <-l.wakeup:
			l.drain(ctx)
		case <-l.t.t.C():
			l.t.fired()
			l.fire(ctx)
		}
	}
}

// next is the earliest due time of the loop's workers, 0 if none.
func (l *loop) next() int64 {
	if len(l.due) == 0 {
		return 0
	}
	return l.due[0].hat
}

// drain handles what was posted, in order.
func (l *loop) drain(ctx context.Context) {
	l.mu.Lock()
	q := l.queue
	l.queue = l.spare[:0]
	l.mu.Unlock()
	for i := range q {
		l.handle(ctx, q[i])
		q[i] = event{} // let go of payloads and sessions
	}
	if cap(q) > spareEvents {
		q = nil // a burst's room (a fleet ramping in at once) is not kept
	}
	l.spare = q[:0]
}

func (l *loop) handle(ctx context.Context, e event) {
	w := e.w
	if e.kind == evMessage {
		w.pending.Add(-1)
	}
	if !w.begun {
		if e.kind != evStart {
			if l.early == nil {
				l.early = map[*Worker][]event{}
			}
			l.early[w] = append(l.early[w], e)
			return
		}
		w.begun = true
		l.workers = append(l.workers, w)
		w.start()
		for _, e := range l.early[w] {
			l.handle(ctx, e)
		}
		delete(l.early, w)
		l.file(w)
		return
	}
	switch e.kind {
	case evMessage:
		w.onIncoming(e.in)
	case evLost:
		if e.in.sess != w.sess || w.sess == nil {
			return // an earlier session's
		}
		w.onLost()
	case evControl:
		w.onControl(e.c)
	default:
		return
	}
	w.housekeeping()
	l.file(w)
}

// fire serves the timers of every worker due by now. It takes them all
// and re-arms the loop's timer first (see Worker.Run), then serves them:
// a worker due again at once waits for the next round, as a worker with
// its own timer would.
func (l *loop) fire(ctx context.Context) {
	now := l.clk.Now().UnixNano()
	type dueWorker struct {
		w   *Worker
		due uint8
	}
	var due []dueWorker
	for len(l.due) > 0 && l.due[0].hat <= now {
		w := heap.Pop(&l.due).(*Worker)
		due = append(due, dueWorker{w, w.timers.takeDue(now)}) // its clock is the loop's
	}
	for _, d := range due {
		l.file(d.w)
	}
	if n := l.next(); l.t.arm(n) {
		l.t.force(n)
	}
	for _, d := range due {
		d.w.runTimers(ctx, d.due)
		l.file(d.w)
	}
}

// file puts w in the heap under its next due time, or out of it.
func (l *loop) file(w *Worker) {
	n := w.timers.next()
	switch {
	case n == 0 && w.hidx >= 0:
		heap.Remove(&l.due, int(w.hidx))
	case n == 0:
	case w.hidx >= 0:
		if w.hat != n {
			w.hat = n
			heap.Fix(&l.due, int(w.hidx))
		}
	default:
		w.hat = n
		heap.Push(&l.due, w)
	}
}

// shutdown stops the loop taking posts and stops every worker it started.
func (l *loop) shutdown() {
	l.mu.Lock()
	l.stopped = true
	q := l.queue
	l.queue = nil
	l.mu.Unlock()
	for _, e := range q {
		if e.kind == evMessage {
			e.w.pending.Add(-1)
		}
	}
	for _, w := range l.workers {
		w.stop()
		w.hidx = -1
	}
	l.workers, l.due, l.early = nil, nil, nil
}

// dueHeap orders workers by their next due time.
type dueHeap []*Worker

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].hat < h[j].hat }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i), int32(j)
}

func (h *dueHeap) Push(x any) {
	w := x.(*Worker)
	w.hidx = int32(len(*h))
	*h = append(*h, w)
}

func (h *dueHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.hidx = -1
	return w
}
