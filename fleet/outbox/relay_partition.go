package outbox

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
)

// counters.
//
// Settling is batched: a finished delivery feeds its verdict to the
// limiter at once (AIMD reacts to every answer as it comes), then hands
// the settlement to the loop over done and pokes it. The loop settles all
// it has collected and polls in one Store.SettleAndDequeue call. done
// never blocks a delivery: the loop starts a delivery only while fewer
// than cap(done) (the limiter's Max) have outcomes it has not collected.
type partition struct {
	r    *Relay
	idx  int
	lim  *flow.Limiter
	slow *slowLane     // its map is owned by the loop, its limiter shared with deliveries
	wake chan struct{} // buffer 1: pokes coalesce
	done chan outcome  // finished deliveries, for the loop to settle

	pool deliverers // the goroutines that run deliveries; opened by loop

	// Owned by the loop goroutine.
	outstanding int // deliveries started whose outcome is not yet collected
	// leases holds, for each message whose delivery is out, the number
	// of the start that delivers its current lease (starts counts them).
	// A lease that runs out while its delivery is still out is handed
	// out again by the store, and the new lease's handling supersedes
	// the old one's: the old delivery's outcome, when it comes, no
	// longer matches and settles nothing. Without this, a late failure
	// would nack the new lease while its delivery ran, and the store
	// would hand the message out a third time.
	leases  map[uint64]uint64
	starts  uint64
	pending []outcome // collected, and the loop's own releases, to settle next
	batch   []Settlement
	// A settling call that failed as a whole keeps pending for the next
	// try, which waits until holdUntil; failures counts the calls failed in
	// a row (the backoff's attempt).
	holdUntil time.Time
	failures  int

	rngMu sync.Mutex // deliveries draw jitter concurrently; rand.Rand is not safe
	rng   *rand.Rand

	c    relayCounters
	hist history
}

// outcome is one settlement the loop owes the store: a finished delivery's,
// or a lease the loop hands back itself.
type outcome struct {
	Settlement
	// parked is the receiver whose head this settlement parks for being
	// offline: if it is back online once the park is settled, the loop
	// wakes it (see settled).
	parked string
	// full is the receiver that answered "full", for the loop to count
	// it slow (slowLane).
	full string
	// start is the start whose delivery this settles (partition.leases);
	// 0 for a lease the loop hands back itself.
	start uint64
}

func newPartition(r *Relay, i int) *partition {
	return &partition{
		r:      r,
		idx:    i,
		lim:    flow.NewLimiter(r.o.Limiter),
		slow:   newSlowLane(r.o),
		leases: make(map[uint64]uint64),
		wake:   make(chan struct{}, 1),
		done:   make(chan outcome, r.o.Limiter.Max),
		rng:    rand.New(rand.NewPCG(r.o.Seed, uint64(i))),
		hist:   newHistory(r.o.History),
	}
}

// poke wakes the loop without blocking; a poke already pending suffices.
func (p *partition) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// loop runs the partition until ctx ends; turned is called after its
// first turn.
func (p *partition) loop(ctx context.Context, wg *sync.WaitGroup, turned func()) {
	t := p.r.o.Clock.NewTicker(p.r.o.Interval)
	defer t.Stop()
	// Settling store calls outlive shutdown: a clean stop leaves nothing
	// leased.
	settle := context.WithoutCancel(ctx)
	p.openPool()
	defer p.closePool() // after drain: nothing is left to deliver
	p.work(ctx, settle, wg)
	turned()
	for {
		select {
		case <-ctx.Done():
			p.drain(settle)
			return
		case <-t.C():
		case <-p.wake:
		}
		p.work(ctx, settle, wg)
	}
}

// work takes turns while there is work at hand: each turn settles what
// has finished and leases what is due in one Store.SettleAndDequeue call,
// then starts the deliveries. It goes round again at once while full
// batches keep coming and permits remain, so a backlog drains at the
// limiter's pace rather than Batch per Interval.
func (p *partition) work(ctx, settle context.Context, wg *sync.WaitGroup) {
	if p.holding() {
		// The store failed a settling call a moment ago: no store call
		// until the backoff has passed. Finished deliveries wait in
		// pending meanwhile (done never fills: see partition).
		p.collect()
		return
	}
	for {
		if p.outstanding > 0 {
			// Let deliveries that are about to finish (started by the
			// last turn, answered at once) hand in their settlements, so
			// this turn takes them all in one store call. Without it the
			// loop outran them and turns alternated big and small: a
			// no-op delivery drained bbolt (relay Batch 50) with 25 messages a
			// turn instead of 38.
			runtime.Gosched()
		}
		p.collect()
		// Leasing a message only to hand it back for want of a permit is
		// wasted store work (a write transaction on bbolt).
		n := min(p.r.o.Batch, p.lim.Limit()-p.lim.InFlight(), cap(p.done)-p.outstanding)
		// ctx after the permits: a permit freed by a delivery that gave up
		// because we are stopping must not lease anything.
		if ctx.Err() != nil || n <= 0 || !p.poll(ctx, settle, wg, n) {
			break // when n <= 0, a finishing delivery pokes the loop
		}
	}
	if len(p.pending) > 0 && !p.holding() {
		// Settlements that found no permit to ride along with, and leases
		// the poll handed back (offline receivers, no permit, shutdown):
		// settle them now, not at the next wake.
		p.settle(settle)
	}
}

// drain waits, once ctx has ended, for every delivery still out, settling
// outcomes as they come, and settles whatever the loop still holds.
// Deliveries return soon after ctx ends (the Delivery contract).
//
// Shutdown does not wait out a settle backoff: each outcome is tried as it
// comes and once more at the end. What a failing store still refuses then
// is counted in StoreErrors and left leased; its lease expires (at once
// when a bbolt file is reopened) and it is delivered again.
func (p *partition) drain(ctx context.Context) {
	for p.outstanding > 0 {
		p.collected(<-p.done)
		p.settle(ctx) // with any others that finished meanwhile
	}
	p.settle(ctx)
	if len(p.pending) > 0 {
		p.c.storeErrors.Add(uint64(len(p.pending)))
		clear(p.pending)
		p.pending = p.pending[:0]
	}
	p.holdUntil, p.failures = time.Time{}, 0
}

// collect moves the finished deliveries' settlements to pending.
func (p *partition) collect() {
	for {
		select {
		case o := <-p.done:
			p.collected(o)
		default:
			return
		}
	}
}

// collected takes one finished delivery's outcome: pending, unless the
// lease it settles was handed out again meanwhile (see leases).
func (p *partition) collected(o outcome) {
	p.outstanding--
	if o.full != "" && !p.r.o.SharedLimit {
		p.slow.mark(o.full, p.r.o.Clock.Now())
	}
	o.full = ""
	if p.leases[o.ID] != o.start {
		p.c.superseded.Add(1)
		return
	}
	delete(p.leases, o.ID)
	p.pending = append(p.pending, o)
}

// poll settles what is pending, leases up to n due messages and starts
// their deliveries. It reports whether to poll again at once: a full batch
// came and every message got a permit.
func (p *partition) poll(ctx, settle context.Context, wg *sync.WaitGroup, n int) bool {
	// Settlements must reach the store even when we are stopping; a bare
	// poll may as well stop with ctx.
	call := ctx
	if len(p.pending) > 0 {
		call = settle
		p.countRetry()
	}
	res, msgs, err := p.r.st.SettleAndDequeue(call, p.idx, n, p.settlements()...)
	p.settled(settle, res, err)
	if err != nil {
		if ctx.Err() == nil && len(p.pending) == 0 { // else settled counted it
			p.c.storeErrors.Add(1)
		}
		return false
	}
	again := len(msgs) == n
	now := p.r.o.Clock.Now()
	p.slow.expire(now)
	for i, m := range msgs {
		if ctx.Err() != nil {
			for _, m := range msgs[i:] {
				p.release(m.ID)
			}
			return false
		}
		if p.r.isOffline(m.Receiver) {
			p.c.offlineSkips.Add(1)
			p.park(m.ID, p.r.o.Clock.Now().Add(p.r.o.OfflineRecheck), m.Receiver)
			continue
		}
		var ps permits
		var ok bool
		ps.part, ok = p.lim.TryAcquire()
		if !ok { // the limit fell since we counted: stays due, no attempt
			p.c.deferred.Add(1)
			p.release(m.ID)
			again = false
			continue
		}
		if p.slow.has(m.Receiver, now) {
			ps.slow = true
			if ps.lane, ok = p.slow.lim.TryAcquire(); !ok {
				// The slow lane is full: the message waits one
				// Interval, uncharged. Due later than what is due now,
				// it sorts behind it, so the next poll reaches the
				// other receivers' messages instead of leasing the
				// slow receivers' heads again.
				ps.part.Release()
				p.c.deferred.Add(1)
				p.c.slowDeferred.Add(1)
				p.releaseAt(m.ID, now.Add(p.r.o.Interval))
				again = false
				continue
			}
		}
		p.outstanding++
		p.starts++
		p.leases[m.ID] = p.starts
		p.start(ctx, wg, m, ps, p.starts)
	}
	return again
}

// release queues the hand-back of a lease without an attempt, due when
// settled. Like every handling of a new lease, it supersedes an older
// lease of the same message whose delivery is still out (see leases).
func (p *partition) release(id uint64) {
	delete(p.leases, id)
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettleRelease}})
}

// releaseAt queues the hand-back of a lease without an attempt, due at at.
func (p *partition) releaseAt(id uint64, at time.Time) {
	delete(p.leases, id)
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettleRelease, SendAt: at}})
}

// park queues the hand-back of a lease of offline receiver's without an
// attempt, parked until Wake or recheck.
func (p *partition) park(id uint64, recheck time.Time, receiver string) {
	delete(p.leases, id)
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettlePark, SendAt: recheck}, parked: receiver})
}
