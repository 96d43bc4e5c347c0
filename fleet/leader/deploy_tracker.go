package leader

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// deployTracker counts each deploy's targets by the fate of their updates.
//
// It tracks a queued update by its outbox id until its fate is known, and
// then forgets it, so its memory is what is queued. Most fates come
// through deliver (an ack, a refusal) or a later deploy's receipts (an
// update replaced in place). The others happen inside the outbox, where
// no delivery shows them: a TTL that ran out, a Nack at the attempt limit,
// an update superseded while in flight and then handed back undelivered.
// reconcile asks the outbox (Locate) about the updates that may have left
// it so: those with a failed attempt since the last look, those past their
// TTL, those superseded, and those the tracker has not yet looked up (new
// ones, whose ack may have come before they were tracked, and those
// carried over from an earlier leader). An update that left the queue
// undelivered is Expired past its TTL, Superseded if a later deploy queued
// behind it, and otherwise was acked unseen: before it was tracked, or by
// an earlier leader after its last save (see save). (A dead letter purged
// or replayed by 'leader dlq' before a leader saw it counts so too: the
// outbox keeps no trace of it.)
type deployTracker struct {
	history int // finished deploys kept beyond the newest

	// saveMu makes saves one at a time, so that an older snapshot is
	// never written over a newer one.
	saveMu sync.Mutex

	mu      sync.Mutex
	deploys []*deployState // kept, by index
	next    int            // the next deploy's index
	byMsg   map[uint64]*tracked
	byRecv  map[recvKind]uint64 // newest tracked update per worker and kind
	dropped []droppedDeploy     // deploys forgotten since the last save: their records go
}

// droppedDeploy is a deploy forgotten, whose parts (records) are to be
// deleted.
type droppedDeploy struct{ index, parts int }

type deployState struct {
	DeployProgress
	// seq is the sequence number every update of the deploy carries (0
	// for a record saved before it was kept); dead, the target position
	// of each worker whose update went to the dead letters: a replayed
	// one that is delivered counts as delivered in its wave, no longer
	// as dead.
	seq     uint64
	dead    map[string]int
	ttl     time.Duration
	size    int  // targets per wave: the target at position i is in wave i/size
	queue   bool // DeployPlan.Queue
	pending int  // tracked updates
	// The deploy's record is in parts of partTargets targets each (see
	// deploy_record.go); changes[i] counts the changes to part i, and
	// saved[i] is what changes[i] was when the outbox last took it.
	changes, saved []uint64
	// saveFailures counts the saves of the deploy that failed in a row;
	// the next is tried no sooner than retryAt.
	saveFailures int
	retryAt      time.Time
}

// touchPos notes a change to the part that holds target position pos.
func (d *deployState) touchPos(pos int) { d.changes[pos/partTargets]++ }

// touchWave notes a change to the part that holds wave's counts: the
// part of its first target.
func (d *deployState) touchWave(wave int) { d.touchPos(wave * d.size) }

// dirty reports whether a part changed since the outbox took it.
func (d *deployState) dirty() bool {
	for i, c := range d.changes {
		if c != d.saved[i] {
			return true
		}
	}
	return false
}

// tracked is one queued update.
type tracked struct {
	d    *deployState
	wave int
	pos  int      // its target's position in the plan
	key  recvKind // zero for one carried over from a record that did not keep its worker
	gen  uint32   // outcomes seen: a lookup answers for the gen it was asked at
	// look: ask the outbox at the next reconcile.
	look bool
	// overtaken: a later deploy's update was queued behind it while it
	// was in flight; handed back undelivered it is dropped.
	overtaken bool
}

type recvKind struct {
	receiver string
	kind     wire.Kind
}

// fate is how a tracked update ended.
type fate int

const (
	fateDelivered fate = iota
	fateRejected
	fateSuperseded
	fateExpired
	fateDeadLettered
	fateCancelled
)

func (t *deployTracker) init(history int) {
	t.history = history
	t.byMsg = make(map[uint64]*tracked)
	t.byRecv = make(map[recvKind]uint64)
}

// add records a deploy whose first len(receipts) messages are the
// updates, in plan order, and returns its index.
func (t *deployTracker) add(p DeployPlan, seq uint64, size int, receipts []outbox.Receipt, now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := &deployState{DeployProgress: DeployProgress{Index: t.next, Version: p.Version, Kind: p.Kind, Targets: len(p.Workers), Request: p.Request},
		seq: seq, ttl: p.TTL, size: size, queue: p.Queue}
	d.changes, d.saved = make([]uint64, partsOf(len(p.Workers))), make([]uint64, partsOf(len(p.Workers)))
	for i := range d.changes {
		d.changes[i] = 1 // never saved
	}
	t.next++
	for i, r := range receipts {
		wave := i / size
		if wave == len(d.Waves) {
			d.Waves = append(d.Waves, WaveProgress{Start: now.Add(time.Duration(wave) * p.WaveInterval)})
		}
		w := &d.Waves[wave]
		w.Targets++
		key := recvKind{p.Workers[i], p.Kind}
		switch r.Outcome {
		case outbox.Stale:
			w.StaleDropped++
			continue
		case outbox.Replaced:
			w.Replaced++
			if old := t.byMsg[r.ID]; old != nil { // in place: the id is ours now
				t.resolveLocked(r.ID, old, fateSuperseded, now)
			}
		case outbox.Appended:
			// Behind the update in flight: dropped if it comes back
			// undelivered (see outbox.Store, Overwrite).
			if oldID, ok := t.byRecv[key]; ok && !p.Queue && oldID != r.ID {
				if old := t.byMsg[oldID]; old != nil && !old.overtaken {
					old.overtaken = true
					old.d.touchPos(old.pos)
				}
			}
		}
		t.byMsg[r.ID] = &tracked{d: d, wave: wave, pos: i, key: key, look: true}
		t.byRecv[key] = r.ID
		w.Pending++
		d.pending++
	}
	t.deploys = append(t.deploys, d)
	t.trimLocked()
	return d.Index
}

// outcome counts one delivery attempt's result for the update msg it
// delivered, if that is tracked, or a replayed dead letter of a deploy.
func (t *deployTracker) outcome(msg outbox.Message, err error, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := msg.ID
	m := t.byMsg[id]
	if m == nil {
		if err == nil {
			t.replayedLocked(msg, now)
		}
		return
	}
	m.gen++
	switch flow.Classify(err) {
	case flow.OK:
		t.resolveLocked(id, m, fateDelivered, now)
	case flow.Reject:
		t.resolveLocked(id, m, fateRejected, now)
	case flow.Backpressure:
		m.d.Waves[m.wave].Full++
		m.d.touchWave(m.wave)
		m.look = true // the Nack may dead-letter it, or drop it if overtaken
	default:
		m.look = true
	}
}

// resolveLocked counts m's fate and forgets it.
func (t *deployTracker) resolveLocked(id uint64, m *tracked, f fate, now time.Time) {
	w := &m.d.Waves[m.wave]
	switch f {
	case fateDelivered:
		w.Delivered++
	case fateRejected:
		w.Rejected++
	case fateSuperseded:
		w.Superseded++
	case fateExpired:
		w.Expired++
	case fateDeadLettered:
		w.DeadLettered++
		if m.key.receiver != "" {
			if m.d.dead == nil {
				m.d.dead = map[string]int{}
			}
			m.d.dead[m.key.receiver] = m.pos
		}
	case fateCancelled:
		w.Cancelled++
	}
	w.Pending--
	m.d.pending--
	m.d.touchWave(m.wave)
	m.d.touchPos(m.pos)
	if w.Done.IsZero() && w.Delivered+w.Rejected+w.StaleDropped == w.Targets {
		w.Done, w.Duration = now, now.Sub(w.Start)
	}
	delete(t.byMsg, id)
	if m.key != (recvKind{}) && t.byRecv[m.key] == id {
		delete(t.byRecv, m.key)
	}
}

// trimLocked forgets the oldest deploys past the newest t.history that
// have nothing queued.
func (t *deployTracker) trimLocked() {
	excess := len(t.deploys) - t.history
	if excess <= 0 {
		return
	}
	kept := t.deploys[:0]
	for i, d := range t.deploys {
		if i < excess && d.pending == 0 {
			t.dropped = append(t.dropped, droppedDeploy{d.Index, len(d.changes)})
			continue
		}
		kept = append(kept, d)
	}
	clear(t.deploys[len(kept):])
	t.deploys = kept
}

// pastTTL reports whether m's update has outlived its TTL at now: the
// outbox drops it at its next Dequeue, if it has not already.
func (m *tracked) pastTTL(now time.Time) bool {
	return m.d.ttl > 0 && !now.Before(m.d.Waves[m.wave].Start.Add(m.d.ttl))
}

// reconcile looks up in st the tracked updates that may have left the
// queue unseen (see deployTracker) and counts those that did. Only
// lookups run outside the lock.
func (t *deployTracker) reconcile(ctx context.Context, st outbox.Locator, now time.Time) error {
	type ask struct {
		id  uint64
		gen uint32
	}
	var asks []ask
	t.mu.Lock()
	for id, m := range t.byMsg {
		if m.look || m.overtaken || m.pastTTL(now) {
			asks = append(asks, ask{id, m.gen})
		}
	}
	t.mu.Unlock()
	if len(asks) == 0 {
		return nil
	}
	ids := make([]uint64, len(asks))
	for i, a := range asks {
		ids[i] = a.id
	}
	places, err := st.Locate(ctx, ids...)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, a := range asks {
		m := t.byMsg[a.id]
		if m == nil || m.gen != a.gen {
			continue // settled meanwhile, or tried again: look again next time
		}
		switch places[i] {
		case outbox.Queued:
			m.look = false // its last attempt is settled and it waits
		case outbox.Leased:
			// An attempt is out; its settlement may drop it still.
		case outbox.Dead:
			t.resolveLocked(a.id, m, fateDeadLettered, now)
		case outbox.Gone:
			switch {
			case m.overtaken && m.d.Cancelled:
				// Out for delivery when the deploy was cancelled, and
				// handed back undelivered: the outbox dropped it for
				// the version behind it, which Cancel made one that
				// expires unsent.
				t.resolveLocked(a.id, m, fateCancelled, now)
			case m.overtaken:
				t.resolveLocked(a.id, m, fateSuperseded, now)
			case m.pastTTL(now):
				t.resolveLocked(a.id, m, fateExpired, now)
			default:
				t.resolveLocked(a.id, m, fateDelivered, now)
			}
		}
	}
	t.trimLocked()
	return nil
}

func (t *deployTracker) snapshot() []DeployProgress {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]DeployProgress, len(t.deploys))
	for i, d := range t.deploys {
		out[i] = d.copy()
	}
	return out
}

func (t *deployTracker) get(index int) (DeployProgress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := slices.BinarySearchFunc(t.deploys, index, func(d *deployState, index int) int { return d.Index - index })
	if !ok {
		return DeployProgress{}, false
	}
	return t.deploys[i].copy(), true
}

func (d *deployState) copy() DeployProgress {
	p := d.DeployProgress
	p.Waves = slices.Clone(p.Waves)
	return p
}

// tracking returns how many updates the tracker holds, for tests of its
// bound.
func (t *deployTracker) tracking() (updates, workers int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byMsg), len(t.byRecv)
}

// replayedLocked counts msg, delivered and not tracked, as delivered in
// its deploy if it is the update of a worker whose update that deploy
// counted as a dead letter: a dead letter replayed (leader dlq replay, or
// a scenario's replay_dead_letters) and delivered.
func (t *deployTracker) replayedLocked(msg outbox.Message, now time.Time) {
	if msg.Seq == 0 {
		return
	}
	for _, d := range t.deploys {
		if d.seq != msg.Seq || string(d.Kind) != msg.Kind {
			continue
		}
		pos, ok := d.dead[msg.Receiver]
		if !ok {
			return
		}
		delete(d.dead, msg.Receiver)
		wave := pos / d.size
		w := &d.Waves[wave]
		w.DeadLettered--
		w.Delivered++
		d.touchWave(wave)
		d.touchPos(pos)
		if w.Done.IsZero() && w.Delivered+w.Rejected+w.StaleDropped == w.Targets {
			w.Done, w.Duration = now, now.Sub(w.Start)
		}
		return
	}
}

// summaries sums the waves of each kept deploy.
func (t *deployTracker) summaries() []DeploySummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]DeploySummary, len(t.deploys))
	for i, d := range t.deploys {
		out[i] = d.Summary()
	}
	return out
}

// byRequest returns the kept deploy that request started.
func (t *deployTracker) byRequest(request string) (DeployProgress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.deploys {
		if d.Request == request {
			return d.copy(), true
		}
	}
	return DeployProgress{}, false
}
