package leader

import "sync"

// resends reaches the asks waiting for a worker's ack when the worker
// comes online on a new connection. The command was published to the old
// one, which is gone (a clean session drops what the broker had not
// delivered), so no ack will come: the ask publishes it again at once
// instead of waiting out its timeout.
type resends struct {
	mu       sync.Mutex
	byWorker map[string]map[chan struct{}]struct{}
}

func (r *resends) init() { r.byWorker = make(map[string]map[chan struct{}]struct{}) }

// watch registers an ask to worker. The channel it returns receives a
// value (buffer 1, so signals coalesce) whenever worker reconnects; stop
// unregisters it.
func (r *resends) watch(worker string) (again <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	set := r.byWorker[worker]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		r.byWorker[worker] = set
	}
	set[ch] = struct{}{}
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(set, ch)
		if len(set) == 0 { // set is still worker's: it leaves the map only empty
			delete(r.byWorker, worker)
		}
		r.mu.Unlock()
	}
}

// signal tells every ask waiting on worker that it has a new connection.
// It never blocks, so the MQTT delivery goroutine may call it.
func (r *resends) signal(worker string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch := range r.byWorker[worker] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// reconnected reaches the asks to worker, which is online on a new
// connection: a waiting ask publishes again itself; the started ones are
// marked, and the waker publishes them again (publishAgain), since this
// runs where nothing may be published.
func (l *Leader) reconnected(worker string) {
	l.resends.signal(worker)
	if l.asks.markAgain(worker) {
		l.wakes.add(worker)
	}
}
