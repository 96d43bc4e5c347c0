package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Delivery hands one message to its receiver (an ask over MQTT, a mailbox
// offer in a test). It returns nil when the receiver took the message, or an
// error the relay sorts with flow.Classify: a *flow.CapacityError (receiver
// full), a *flow.PermanentError (never retry), or anything else (retried with
// backoff). Deliver is called from many goroutines at once and must return
// soon after ctx ends. The store hands out only a receiver's head, so a
// receiver sees one message at a time, unless a Deliver call outlives the
// store's LeaseTimeout and the message is handed out again beside it; the
// newer delivery's outcome then settles it, and the older one's is
// counted in PartitionStats.Superseded and settles nothing.
type Delivery interface {
	Deliver(ctx context.Context, m Message) error
}

// DeliveryFunc adapts a function to Delivery.
type DeliveryFunc func(ctx context.Context, m Message) error

// Deliver calls f(ctx, m).
func (f DeliveryFunc) Deliver(ctx context.Context, m Message) error { return f(ctx, m) }

// Starter is a Delivery that the relay need not wait for: Start hands m
// to its receiver and returns at once, and the outcome comes later, from
// any goroutine, through f.Finish, with the error Deliver would have
// returned. A relay whose Delivery is also a Starter calls Start on its
// partition's loop, with no goroutine per delivery between (nor the two
// hand-offs to and from one): Start must not block, and must call
// f.Finish exactly once, soon after ctx ends at the latest. Start may
// call f.Finish before it returns (a message it cannot send).
type Starter interface {
	Start(ctx context.Context, m Message, f Finish)
}

// Finish settles one delivery begun by Starter.Start. It is a value, so
// a Starter keeps it beside what it is waiting for without an allocation.
type Finish struct {
	p     *partition
	ctx   context.Context
	m     Message
	ps    permits
	start uint64 // which start of m's on the loop (partition.leases)
}

// Message is the message being delivered.
func (f Finish) Message() Message { return f.m }

// Finish feeds err to the limiter and hands the settlement to the loop,
// as the return of Deliver does. It never blocks; call it exactly once.
func (f Finish) Finish(err error) { f.p.finish(f.ctx, f.m, f.ps, f.start, err) }

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
	start Starter // d, if it is one: deliveries start on the loop
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
	r.start, _ = d.(Starter)
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
