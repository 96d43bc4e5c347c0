package leader

import (
	"context"
	"sync"
)

// unpark releases what the outbox holds parked for worker, which has come
// online. If the worker is offline again by now the relay does nothing; a
// store error (closed under a crashing leader) is only logged.
//
// It first publishes again what was started to worker on its old
// connection (publishAgain), so that what the unpark starts is not
// published twice.
func (l *Leader) unpark(ctx context.Context, worker string) {
	l.publishAgain(ctx, worker)
	if err := l.relay.Unpark(ctx, worker); err != nil {
		l.cfg.Logger.Debug("unpark", "worker", worker, "err", err)
	}
}

// wakes hands the release of a worker's parked commands from the MQTT
// delivery goroutine, which must not block (a store's Wake is a write
// transaction, an fsync under durability sync, and subscribing brings
// every worker's retained status at once), to the waker goroutine.
// Pending wakes coalesce per worker: the queue never holds a worker
// twice, so it is bounded by the fleet's size and never drops a wake.
type wakes struct {
	mu      sync.Mutex
	pending map[string]struct{}
	order   []string      // pending, in arrival order
	ready   chan struct{} // buffer 1: signals coalesce
}

func (w *wakes) init() {
	w.pending = make(map[string]struct{})
	w.ready = make(chan struct{}, 1)
}

// add queues a wake for worker, unless one is pending; it never blocks.
func (w *wakes) add(worker string) {
	w.mu.Lock()
	if _, ok := w.pending[worker]; !ok {
		w.pending[worker] = struct{}{}
		w.order = append(w.order, worker)
	}
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// take returns the pending wakes, oldest first, and empties the queue.
func (w *wakes) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.order
	w.order = nil
	clear(w.pending)
	return out
}

// run calls wake for each pending worker, oldest first, until ctx ends;
// wakes still pending then are dropped with the relay that would have
// acted on them.
func (w *wakes) run(ctx context.Context, wake func(ctx context.Context, worker string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.ready:
		}
		for _, worker := range w.take() {
			if ctx.Err() != nil {
				return
			}
			wake(ctx, worker)
		}
	}
}
