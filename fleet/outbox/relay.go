package outbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/flow"
)

// Delivery hands one message to its receiver (an ask over MQTT, a mailbox
// offer in a test). It returns nil when the receiver took the message, or an
// error the relay sorts with flow.Classify: a *flow.CapacityError (receiver
// full), a *flow.PermanentError (never retry), or anything else (retried with
// backoff). Deliver is called from many goroutines at once and must return
// soon after ctx ends. The store hands out only a receiver's head, so a
// receiver sees one message at a time, unless a Deliver call outlives the
// store's LeaseTimeout and the message is handed out again beside it.
type Delivery interface {
	Deliver(ctx context.Context, m Message) error
}

// DeliveryFunc adapts a function to Delivery.
type DeliveryFunc func(ctx context.Context, m Message) error

// Deliver calls f(ctx, m).
func (f DeliveryFunc) Deliver(ctx context.Context, m Message) error { return f(ctx, m) }

// RelayOptions configures a Relay. The zero value of each field takes the
// default shown in DefaultRelayOptions.
type RelayOptions struct {
	// Clock must be the store's clock: the relay computes offline parking
	// times and limit samples on it. Default: wall clock.
	Clock clock.Clock
	// Interval is how often each partition polls its store when nothing
	// wakes it sooner. A finished delivery and Wake both wake the partition
	// at once, so the interval bounds only the latency of newly due
	// messages (enqueued, or out of backoff). Default 5 ms.
	Interval time.Duration
	// Batch bounds the messages one poll leases. A poll never leases more
	// than the limiter has permits for. Default 20.
	Batch int
	// Limiter configures each partition's AIMD limiter, and its slow
	// lane's (see SlowFor); zero fields take flow.DefaultLimiterOptions
	// (10 / 1 / 50, AIMD).
	Limiter flow.LimiterOptions
	// SlowFor is how long a receiver that answered "full" counts as slow
	// after its latest "full". Deliveries to slow receivers share a lane
	// with its own AIMD limiter (options as Limiter) under the partition's
	// limit: their "full" answers halve the lane's limit, not the
	// partition's, so a few slow receivers do not throttle the rest of the
	// partition. A "full" from a receiver not known to be slow halves the
	// partition's limit, as before. A receiver quiet for SlowFor leaves
	// the lane and is forgotten. Default 30 s.
	SlowFor time.Duration
	// SharedLimit turns the slow lane off: every delivery takes only its
	// partition's limiter, and every "full" halves it (once per window),
	// whichever receiver said it. For comparison runs that show what the
	// slow lane saves.
	SharedLimit bool
	// Backoff spaces retries after failures: full jitter over
	// [0, min(Cap, Base × 2^Attempts)]. Zero fields take flow.DefaultBackoff.
	Backoff flow.Backoff
	// Seed drives the jitter. Partition i draws from its own PCG seeded with
	// (Seed, i), so a run can be repeated.
	Seed uint64
	// OfflineRecheck is how long an offline receiver's head message stays
	// parked (Store.Park) when the relay meets it, if no Wake releases it
	// sooner. It only bounds the work spent on a receiver that came back
	// without anyone calling Wake: Wake makes a parked head due again at
	// once. No attempt is charged. Default 1 minute.
	OfflineRecheck time.Duration
	// History bounds the limit samples kept per partition (the newest are
	// kept). Default 256.
	History int
	// TryOffline makes SetOffline a no-op: the relay tries receivers known
	// to be offline, spending an attempt (and an ask timeout) on each. For
	// comparison runs that show what skipping them saves. It overrides
	// AssumeOffline.
	TryOffline bool
	// AssumeOffline counts a receiver as offline until SetOnline or Wake
	// names it, instead of online until SetOffline does. A leader that has
	// just (re)started does not know who is connected: with it, a due
	// message for a receiver not yet heard from is parked rather than sent
	// into the void to hold its slot for an ask timeout, and the
	// receiver's "online" wakes it.
	AssumeOffline bool
	// OnRunning, if set, is called once per Run when every partition's
	// loop has taken its first turn (settled nothing yet, leased what was
	// due): from then on the relay delivers. It runs on a goroutine of
	// Run's and must return promptly. A leader announces itself online
	// from it.
	OnRunning func()
}

// DefaultRelayOptions lists the defaults (the seed's relay settings).
var DefaultRelayOptions = RelayOptions{
	Clock:          clock.Real{},
	Interval:       5 * time.Millisecond,
	Batch:          20,
	Limiter:        flow.DefaultLimiterOptions,
	Backoff:        flow.DefaultBackoff,
	OfflineRecheck: time.Minute,
	History:        256,
	SlowFor:        30 * time.Second,
}

// withDefaults fills zero fields from DefaultRelayOptions and checks the rest.
func (o RelayOptions) withDefaults() (RelayOptions, error) {
	d := DefaultRelayOptions
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Interval == 0 {
		o.Interval = d.Interval
	}
	if o.Batch == 0 {
		o.Batch = d.Batch
	}
	if o.Limiter.Initial == 0 {
		o.Limiter.Initial = d.Limiter.Initial
	}
	if o.Limiter.Min == 0 {
		o.Limiter.Min = d.Limiter.Min
	}
	if o.Limiter.Max == 0 {
		o.Limiter.Max = max(d.Limiter.Max, o.Limiter.Initial)
	}
	if o.OfflineRecheck == 0 {
		o.OfflineRecheck = d.OfflineRecheck
	}
	if o.History == 0 {
		o.History = d.History
	}
	if o.SlowFor == 0 {
		o.SlowFor = d.SlowFor
	}
	switch {
	case o.Interval < 0:
		return o, fmt.Errorf("outbox: relay interval %v: must be positive", o.Interval)
	case o.Batch < 0:
		return o, fmt.Errorf("outbox: relay batch %d: must be positive", o.Batch)
	case o.Backoff.Base < 0 || o.Backoff.Cap < 0:
		return o, fmt.Errorf("outbox: relay backoff base %v, cap %v: must be 0 (default) or positive", o.Backoff.Base, o.Backoff.Cap)
	case o.OfflineRecheck < 0:
		return o, fmt.Errorf("outbox: relay offline recheck %v: must be positive", o.OfflineRecheck)
	case o.History < 0:
		return o, fmt.Errorf("outbox: relay history %d: must be positive", o.History)
	case o.SlowFor < 0:
		return o, fmt.Errorf("outbox: relay slow-for %v: must be positive", o.SlowFor)
	}
	if err := o.Limiter.Validate(); err != nil {
		return o, fmt.Errorf("outbox: relay %w", err)
	}
	return o, nil
}

// ErrRelayRunning is returned by Run while another Run of the same Relay has
// not returned: two loops per partition would fight over one limiter.
var ErrRelayRunning = errors.New("outbox: relay already running")

// Relay drains a Store: one loop per store partition, each with its own
// AIMD limiter, delivers due messages through a Delivery and settles each by
// its outcome:
//
//	nil               Ack                                   limit +1
//	capacity error    Nack, delay max(RetryAfter, backoff)  limit /2, once per window
//	other error       Nack, delay backoff                   limit unchanged
//	permanent error   DeadLetter                            limit unchanged
//
// Capacity answers to deliveries that were in flight together halve the
// limit once (flow.Limiter's window); a delivery started after the
// decrease must be turned away too before it halves again.
//
// A receiver that answered "full" is slow for RelayOptions.SlowFor: its
// deliveries also take a permit from its partition's slow lane, a second
// AIMD limiter under the partition's, and its "full" answers move that
// one instead. The partition's limit is the ceiling over all deliveries;
// only a "full" from a receiver not yet known to be slow halves it. So a
// class of slow receivers is paced by its own limit and does not throttle
// the rest of its partition (RelayOptions.SharedLimit turns this off).
//
// A Nack at the store's MaxAttempts dead-letters the message. Receivers
// marked offline (SetOffline; with AssumeOffline, any not yet marked
// online) are not tried: their due messages are parked in the store until
// Wake (or RelayOptions.OfflineRecheck). Methods are safe for concurrent
// use.
//
// The limit moves as each answer comes in, but settling is batched: a
// partition's loop settles every delivery that finished since its last
// turn and leases the next due messages in one Store.SettleAndDequeue
// call (one bbolt transaction). A
// Nack's delay therefore runs from that call, a moment after the answer:
// a retry may come that moment late, never early.
type Relay struct {
	st    Store
	d     Delivery
	o     RelayOptions
	parts []*partition

	running atomic.Bool

	mu sync.RWMutex
	// online is what SetOffline, SetOnline and Wake said last of each
	// receiver: false offline, true online. Without AssumeOffline a
	// receiver not in it is online, and only offline ones are kept.
	online map[string]bool
}

// NewRelay returns a relay over st that delivers through d. It fails on a
// nil store or delivery and on options that cannot work, naming the option.
func NewRelay(st Store, d Delivery, o RelayOptions) (*Relay, error) {
	if st == nil {
		return nil, errors.New("outbox: relay needs a store")
	}
	if d == nil {
		return nil, errors.New("outbox: relay needs a delivery")
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Relay{st: st, d: d, o: o, online: make(map[string]bool)}
	n := st.Partitions()
	if n < 1 {
		return nil, fmt.Errorf("outbox: relay: store reports %d partitions", n)
	}
	r.parts = make([]*partition, n)
	for i := range r.parts {
		r.parts[i] = newPartition(r, i)
	}
	return r, nil
}

// Run polls every partition and delivers until ctx ends. On shutdown it
// stops polling, lets in-flight Deliver calls see the canceled ctx, hands
// back without an attempt charged every message whose delivery failed
// because of the shutdown, and returns nil only after every goroutine it
// started has returned. Settling store calls use a context that shutdown
// does not cancel, so a message is never left leased by a clean stop.
// Run returns ErrRelayRunning if the relay is already running; it may be
// run again after it returns.
func (r *Relay) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRelayRunning
	}
	defer r.running.Store(false)
	var wg sync.WaitGroup     // loops and deliveries alike
	var turned sync.WaitGroup // loops that have not taken their first turn
	turned.Add(len(r.parts))
	for _, p := range r.parts {
		p.sample() // where each chart starts
		wg.Go(func() { p.loop(ctx, &wg, turned.Done) })
	}
	if r.o.OnRunning != nil {
		wg.Go(func() {
			turned.Wait()
			r.o.OnRunning()
		})
	}
	wg.Wait()
	return nil
}

// SetOffline marks receiver offline: its messages stay queued, parked for
// OfflineRecheck at a time, and no Deliver call or attempt is spent on them
// until it is online again. A delivery already in flight is not recalled.
// It never blocks on the store.
func (r *Relay) SetOffline(receiver string) {
	if r.o.TryOffline {
		return
	}
	r.mu.Lock()
	r.online[receiver] = false
	r.mu.Unlock()
}

// SetOnline marks receiver online: the relay tries its messages again from
// the next poll on. What is already parked for it stays parked until
// Unpark (or its recheck). It never blocks on the store, so a caller that
// learns of the reconnect where it must not wait (an MQTT delivery
// goroutine) marks it here and leaves Unpark to a goroutine of its own.
func (r *Relay) SetOnline(receiver string) {
	r.mu.Lock()
	if r.o.AssumeOffline {
		r.online[receiver] = true
	} else {
		delete(r.online, receiver)
	}
	r.mu.Unlock()
}

// Unpark releases what the store holds parked for receiver (Store.Wake)
// and wakes its partition at once rather than at the next Interval, if
// the relay sees receiver online; if receiver is offline by now it does
// nothing, so an Unpark that runs late cannot undo a SetOffline. Messages
// waiting for their due time (a wave, a backoff) stay put. The error is
// the store's (ErrClosed).
func (r *Relay) Unpark(ctx context.Context, receiver string) error {
	if r.isOffline(receiver) {
		return nil
	}
	err := r.st.Wake(ctx, receiver)
	r.parts[PartitionOf(receiver, len(r.parts))].poke()
	if err != nil {
		return fmt.Errorf("outbox: wake %q: %w", receiver, err)
	}
	return nil
}

// Wake is SetOnline then Unpark: receiver is back. The error is the
// store's (ErrClosed); the receiver is online regardless.
func (r *Relay) Wake(ctx context.Context, receiver string) error {
	r.SetOnline(receiver)
	return r.Unpark(ctx, receiver)
}

func (r *Relay) isOffline(receiver string) bool {
	if r.o.TryOffline {
		return false
	}
	r.mu.RLock()
	online, known := r.online[receiver]
	r.mu.RUnlock()
	if !known {
		return r.o.AssumeOffline
	}
	return !online
}

// partition is one relay loop with its own limiter, jitter source and
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

	// Owned by the loop goroutine.
	outstanding int       // deliveries started whose outcome is not yet collected
	pending     []outcome // collected, and the loop's own releases, to settle next
	batch       []Settlement
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
}

func newPartition(r *Relay, i int) *partition {
	return &partition{
		r:    r,
		idx:  i,
		lim:  flow.NewLimiter(r.o.Limiter),
		slow: newSlowLane(r.o),
		wake: make(chan struct{}, 1),
		done: make(chan outcome, r.o.Limiter.Max),
		rng:  rand.New(rand.NewPCG(r.o.Seed, uint64(i))),
		hist: newHistory(r.o.History),
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
		p.pending = append(p.pending, <-p.done)
		p.outstanding--
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
			if o.full != "" && !p.r.o.SharedLimit {
				p.slow.mark(o.full, p.r.o.Clock.Now())
			}
			o.full = ""
			p.pending = append(p.pending, o)
			p.outstanding--
		default:
			return
		}
	}
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
		wg.Go(func() { p.deliver(ctx, m, ps) })
	}
	return again
}

// release queues the hand-back of a lease without an attempt, due when
// settled.
func (p *partition) release(id uint64) {
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettleRelease}})
}

// releaseAt queues the hand-back of a lease without an attempt, due at at.
func (p *partition) releaseAt(id uint64, at time.Time) {
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettleRelease, SendAt: at}})
}

// park queues the hand-back of a lease of offline receiver's without an
// attempt, parked until Wake or recheck.
func (p *partition) park(id uint64, recheck time.Time, receiver string) {
	p.pending = append(p.pending, outcome{Settlement: Settlement{ID: id, Op: SettlePark, SendAt: recheck}, parked: receiver})
}

// settle collects the finished deliveries and settles everything pending
// in one store call.
func (p *partition) settle(ctx context.Context) {
	p.collect()
	if len(p.pending) == 0 {
		return
	}
	p.countRetry()
	res, err := p.r.st.Settle(ctx, p.settlements()...)
	p.settled(ctx, res, err)
}

// settlements returns pending's settlements, in a buffer reused from call
// to call.
func (p *partition) settlements() []Settlement {
	p.batch = p.batch[:0]
	for _, o := range p.pending {
		p.batch = append(p.batch, o.Settlement)
	}
	return p.batch
}

// settled counts the results of settling pending and empties pending.
// err means the call failed and settled none of them: unless the store is
// closed, pending is kept to be settled again after a backoff, since the
// deliveries happened and dropping their settlements would have them
// delivered again once their leases run out.
func (p *partition) settled(ctx context.Context, res []SettleResult, err error) {
	if err != nil && len(p.pending) > 0 && retryable(err) {
		p.c.storeErrors.Add(1)
		p.holdOff()
		return
	}
	if len(p.pending) > 0 && p.failures > 0 {
		p.failures, p.holdUntil = 0, time.Time{}
	}
	for i, o := range p.pending {
		switch {
		case err != nil || res[i].Err != nil:
			p.c.storeErrors.Add(1)
		case o.Op == SettleDeadLetter, o.Op == SettleNack && res[i].Nack == DeadLettered:
			p.c.deadLettered.Add(1)
		case o.Op == SettleNack:
			p.c.retries.Add(1)
		}
		// Unpark may have run between our offline check and this park,
		// found the head leased and left it alone; release it ourselves.
		if o.parked != "" && !p.r.isOffline(o.parked) {
			if err := p.r.st.Wake(ctx, o.parked); err != nil {
				p.c.storeErrors.Add(1)
			}
			p.poke()
		}
	}
	clear(p.pending) // drop the causes' strings
	p.pending = p.pending[:0]
}

// settleRetryCap bounds the backoff between settling calls after a store
// error: the settlements must land well within the store's lease (30 s by
// default), or their messages are handed out again.
const settleRetryCap = time.Second

// holding reports whether a settle backoff is in progress.
func (p *partition) holding() bool {
	return p.failures > 0 && p.r.o.Clock.Now().Before(p.holdUntil)
}

// holdOff starts the backoff after a failed settling call: full jitter
// over min(settleRetryCap, Backoff.Base × 2^failures). The loop's ticker
// (every Interval) notices its end.
func (p *partition) holdOff() {
	b := flow.Backoff{Base: p.r.o.Backoff.Base, Cap: settleRetryCap}
	p.holdUntil = p.r.o.Clock.Now().Add(p.backoffWith(b, p.failures))
	p.failures++
}

// countRetry counts a settling call that carries settlements a failed one
// kept.
func (p *partition) countRetry() {
	if p.failures > 0 {
		p.c.settleRetries.Add(1)
	}
}

// retryable: a failed settling call is worth repeating unless the store is
// closed for good or refused the settlements themselves.
func retryable(err error) bool {
	return !errors.Is(err, ErrClosed) && !errors.Is(err, ErrInvalid)
}

// deliver runs one delivery, feeds its answer to the limiter and hands the
// settlement to the loop. It owns ps.
func (p *partition) deliver(ctx context.Context, m Message, ps permits) {
	err := p.r.d.Deliver(ctx, m)
	p.done <- p.verdict(ctx, m, ps, err) // never blocks: see partition
	// The receiver's next message is visible only once the loop has
	// settled this one; the poke has it do so now.
	p.poke()
}

// verdict returns ps with the limits moved by err (+1, /2 once per
// window, or unchanged, by flow.Classify; see permits.done) and says how
// to settle m.
func (p *partition) verdict(ctx context.Context, m Message, ps permits, err error) outcome {
	s := Settlement{ID: m.ID}
	if err != nil && ctx.Err() != nil {
		// Failed because we are stopping (or at least while we are): not the
		// receiver's fault, so no attempt and no limit change.
		ps.release()
		p.c.abandoned.Add(1)
		s.Op = SettleRelease
		return outcome{Settlement: s}
	}
	ps.done(err)
	var full string
	switch flow.Classify(err) {
	case flow.OK:
		p.sample()
		p.c.delivered.Add(1)
		s.Op = SettleAck
	case flow.Backpressure:
		p.sample()
		p.c.backpressure.Add(1)
		retryAfter, _ := flow.RetryAfter(err)
		s.Op, s.Delay, s.Cause = SettleNack, max(retryAfter, p.backoff(m.Attempts)), err.Error()
		full = m.Receiver
	case flow.Reject:
		s.Op, s.Cause = SettleDeadLetter, err.Error()
	default: // flow.Retry
		p.c.errors.Add(1)
		s.Op, s.Delay, s.Cause = SettleNack, p.backoff(m.Attempts), err.Error()
	}
	return outcome{Settlement: s, full: full}
}

func (p *partition) backoff(attempt int) time.Duration {
	return p.backoffWith(p.r.o.Backoff, attempt)
}

func (p *partition) backoffWith(b flow.Backoff, attempt int) time.Duration {
	p.rngMu.Lock()
	defer p.rngMu.Unlock()
	return b.Delay(attempt, p.rng)
}

// sample records the limits if they moved since the last sample.
func (p *partition) sample() {
	p.hist.add(p.r.o.Clock, p.lim)
	p.slow.hist.add(p.r.o.Clock, p.slow.lim)
}
