package outbox

import (
	"context"
	"sync"
)

// deliverers is a partition's pool of delivery goroutines for one Run.
// They live as long as the loop does and take one delivery at a time,
// so a delivery does not start a goroutine (and grow a fresh stack
// through the Delivery's encode and publish) of its own.
//
// The loop starts one more whenever the deliveries out (started, their
// outcomes not yet collected) outnumber the goroutines, so every
// delivery handed over finds a goroutine free to take it at once: a
// goroutine is busy only with a delivery whose outcome is not yet
// collected. Both numbers stay at most the limiter's Max (cap(done)),
// and so does the queue, which therefore never blocks the loop. What is
// in flight is bounded by the permits, as before; the pool only carries
// it.
type deliverers struct {
	queue   chan delivery // buffer cap(done)
	started int           // goroutines started; owned by the loop
}

// delivery is one message handed to the pool with the permits it holds.
type delivery struct {
	m     Message
	ps    permits
	start uint64 // see partition.leases
}

// start begins the delivery of m; p.outstanding already counts it, and
// p.leases[m.ID] is start, the number its outcome will carry. A
// Starter's begins here, on the loop; any other is handed to the pool,
// whose new goroutine, if one is started, joins wg, which Run waits for.
func (p *partition) start(ctx context.Context, wg *sync.WaitGroup, m Message, ps permits, start uint64) {
	if s := p.r.start; s != nil {
		s.Start(ctx, m, Finish{p: p, ctx: ctx, m: m, ps: ps, start: start})
		return
	}
	if p.pool.started < p.outstanding {
		p.pool.started++
		q := p.pool.queue
		wg.Go(func() {
			for d := range q {
				p.deliver(ctx, d)
			}
		})
	}
	p.pool.queue <- delivery{m: m, ps: ps, start: start} // never blocks: see deliverers
}

// openPool gives the loop an empty pool for this Run.
func (p *partition) openPool() {
	p.pool = deliverers{queue: make(chan delivery, cap(p.done))}
}

// closePool lets the pool's goroutines return once the loop has
// collected every outcome (drain): none has a delivery left.
func (p *partition) closePool() {
	close(p.pool.queue)
}
