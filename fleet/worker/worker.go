package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Worker is one simulated worker. Create it with New and start it with
// Run; the control methods (Disconnect, Partition, Heal, Crash, Reboot,
// Reconnect) and Stats are safe from any goroutine.
//
// A worker's memory is in two parts, as a device's is. Its flash — the
// applied state (version, the highest seq applied per idempotency key,
// the applied counts in Stats) and its own counters (heartbeat seq,
// envelope ids) — survives a Reboot. Everything else is RAM, which a
// Reboot loses: the mailbox, the command in service, asks in flight,
// acks on their way back, the local outbox, its timers.
type Worker struct {
	cfg  Config
	clk  clock.Clock
	rnd  *rand.Rand // owned by the loop
	dial Dialer
	mb   *mailbox.Mailbox[command]
	// local is store-and-forward while the leader cannot take it. The loop
	// reads it freely; it replaces it (Reboot) only under mu, and other
	// goroutines read it under mu.
	local *outbox.Memory

	// The driver's. A worker with a session of its own runs on its own
	// goroutine (Run), which these channels feed. A device on a loop (lp
	// not nil) has none of them: the loop's queue carries its messages
	// and controls, the loop's heap its timers (filed under hat at hidx).
	incoming chan incoming
	control  chan control
	done     chan struct{} // closed when Run returns
	lp       *loop
	hidx     int32        // in lp's heap; -1: not filed
	hat      int64        // the due time it is filed under
	pending  atomic.Int32 // messages posted to lp, not yet handled
	asking   atomic.Int32 // len(asks) as of the last housekeeping (State)
	// syncWaits: syncDue is set, a sync to send or to retry (State).
	syncWaits atomic.Bool

	// Owned by the loop goroutine.
	begun      bool // its loop has called start (a loop's device: ramped in)
	sess       Session
	lost       <-chan struct{}
	down       bool // Disconnect: stay offline until Reconnect
	partition  bool // the network is cut: dials fail until Heal
	attempt    int  // reconnect attempts since the last success
	busy       bool
	current    *wire.Envelope // the command being served while busy
	due        time.Time      // when current's service time is up
	asks       map[string]*ask
	syncDue    time.Time // zero: no sync to send
	syncTries  int
	flushing   bool // one local-outbox message in flight
	flushAfter time.Time
	epoch      string          // of sess, in its "online" and its will's "offline"
	answers    []delayedAnswer // acks on their way back, by due time (Config.RTT)
	announceAt time.Time       // when to announce the worker online again; zero: not asked
	up         string          // the worker's up topic, made at its first send

	// Flash, owned by the loop: kept across a Reboot.
	applied map[string]uint64 // idempotency key -> highest seq applied
	pull    pullState         // work pulling (pull.go)
	version string
	hbSeq   uint64 // the leader ignores a heartbeat seq not above the last
	nextID  uint64 // envelope ids stay unique across reboots

	timers timers // owned by the loop

	// started, if set, is called once, after the loop's first event
	// (normally the first connection attempt): a Pool's limit on first
	// connects. Owned by the loop.
	started func()

	mu sync.Mutex // guards st
	st Stats
}

// command is a command waiting in the mailbox.
type command struct {
	env wire.Envelope
	at  time.Time
}

// incoming is a message from the session's delivery goroutine.
type incoming struct {
	sess    Session
	topic   string
	payload []byte
}

// control is a request to the loop from another goroutine.
type control struct {
	op ctlOp
	d  time.Duration // ctlHeartbeat, ctlTelemetry: the new interval
}

type ctlOp int

const (
	ctlDisconnect ctlOp = iota
	ctlPartition
	ctlHeal
	ctlCrash
	ctlReboot
	ctlReconnect
	ctlHeartbeat
	ctlTelemetry
)

// New checks cfg and builds a worker; nothing runs until Run.
func New(cfg Config, dial Dialer) (*Worker, error) { return newWorker(cfg, dial, nil) }

// newWorker builds a worker for its own goroutine (lp nil) or for a loop.
// What an idle worker does not use is made when it is first needed: the
// maps of asks and of what it applied, the local outbox.
func newWorker(cfg Config, dial Dialer, lp *loop) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		cfg: cfg, clk: cfg.Clock, dial: dial,
		rnd:     rand.New(rand.NewPCG(cfg.Seed, cfg.Index)),
		version: cfg.Version,
		lp:      lp, hidx: -1,
	}
	if lp == nil {
		w.incoming = make(chan incoming, incomingBuffer)
		w.control = make(chan control, 8)
		w.done = make(chan struct{})
	}
	if w.mb, err = mailbox.New[command](cfg.Mailbox); err != nil {
		return nil, fmt.Errorf("worker %s: %w", cfg.ID, err)
	}
	w.st.Version = cfg.Version
	return w, nil
}

// phaseSalt separates the random stream of a worker's tickers' phases
// from its own (PCG(seed, index)).
const phaseSalt = 0x9a5e_0000_0000_0000

// ID returns the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Run connects and serves until ctx ends, then disconnects cleanly and
// returns once the session is closed. A Worker runs once. A device a
// Pool runs on one of its loops (see loop) has no Run of its own: Run
// returns an error for it.
func (w *Worker) Run(ctx context.Context) error {
	if w.lp != nil {
		return fmt.Errorf("worker %s: runs on its pool's loop, not on a goroutine of its own", w.cfg.ID)
	}
	defer close(w.done)
	t := newDueTimer(w.clk)
	defer t.stop()
	w.start()
	late := false // the last round fired timers found due as it re-armed
	for {
		if n := w.timers.next(); t.arm(n) {
			if !late {
				// Due already (the handlers took time): fire now.
				late = true
				w.runTimers(ctx, w.timers.takeDue(w.clk.Now().UnixNano()))
				w.afterEvent()
				continue
			}
			t.force(n)
		}
		late = false
		select {
		case <-ctx.Done():
			w.stop()
			return nil
		case in := <-w.incoming:
			w.onIncoming(in)
		case <-w.lost:
			w.onLost()
		case <-t.t.C():
			t.fired()
			// Take what is due and re-arm before serving it, so the clock
			// shows the next timer armed from the moment one fires (as
			// a ticker stays armed): a fake clock's reader can tell a
			// worker between timers from one with none.
			due := w.timers.takeDue(w.clk.Now().UnixNano())
			if n := w.timers.next(); t.arm(n) {
				t.force(n)
			}
			w.runTimers(ctx, due) // keeps house after each timer it fires
			w.afterEvent()
			continue
		case c := <-w.control:
			w.onControl(c)
		}
		w.housekeeping()
		w.afterEvent()
	}
}

// afterEvent calls the started hook after the loop's first event.
func (w *Worker) afterEvent() {
	if w.started != nil {
		w.started()
		w.started = nil
	}
}

// start arms the worker's first connection attempt (at once) and its
// tickers; the driver calls it once, before anything else.
func (w *Worker) start() {
	// The phases have a stream of their own: drawing them from the
	// worker's would shift every jitter after them.
	w.timers.init(w.clk.Now(), w.cfg.Heartbeat, w.cfg.Telemetry, rand.New(rand.NewPCG(w.cfg.Seed, w.cfg.Index^phaseSalt)))
	w.scheduleReconnect(0)
}

// stop says goodbye (a clean disconnect) and closes the mailbox; the
// driver calls it once, last.
func (w *Worker) stop() {
	w.closeSession(true)
	w.mb.Close()
	w.timers.off()
}

// runTimers serves the timers in due (taken by timers.takeDue), each
// followed by housekeeping, as the loop handles any other event.
func (w *Worker) runTimers(ctx context.Context, due uint8) {
	if due&(1<<tReconnect) != 0 {
		w.tryConnect(ctx)
		w.housekeeping()
	}
	if due&(1<<tService) != 0 {
		w.finishCommand()
		w.housekeeping()
	}
	if due&(1<<tHeartbeat) != 0 {
		w.sendHeartbeat()
		w.housekeeping()
	}
	if due&(1<<tTelemetry) != 0 {
		w.sendTelemetry()
		w.housekeeping()
	}
	if due&(1<<tWake) != 0 {
		w.housekeeping()
	}
}

// onIncoming handles a message from a session, unless the session is no
// longer the worker's (it reconnected since).
func (w *Worker) onIncoming(in incoming) {
	if in.sess == w.sess && w.sess != nil {
		w.onMessage(in.topic, in.payload)
	}
}

// Disconnect leaves cleanly (status offline) and stays away until
// Reconnect.
func (w *Worker) Disconnect() { w.send(control{op: ctlDisconnect}) }

// Partition cuts the network: the connection goes silent and reconnects
// fail until Heal.
func (w *Worker) Partition() { w.send(control{op: ctlPartition}) }

// Heal restores the network; the worker reconnects by its policy.
func (w *Worker) Heal() { w.send(control{op: ctlHeal}) }

// Crash drops the connection without a word; the worker reconnects by its
// policy.
func (w *Worker) Crash() { w.send(control{op: ctlCrash}) }

// Reboot restarts the device: its RAM is lost, its flash kept (see
// Worker). The session drops without a word, as in Crash, whatever was
// queued or in flight is dropped and counted (Stats.CommandsLostInReboot,
// TelemetryLostInReboot, HeartbeatsLostInReboot), and the worker
// reconnects by its policy — unless it is disconnected (Disconnect), when
// it stays away until Reconnect. A command redelivered after the reboot
// is deduplicated by what the flash remembers.
func (w *Worker) Reboot() { w.send(control{op: ctlReboot}) }

// Reconnect ends a Disconnect (or a wait between attempts): the worker
// connects at once.
func (w *Worker) Reconnect() { w.send(control{op: ctlReconnect}) }

// SetHeartbeat changes the heartbeat interval from now on (a scenario's
// heartbeat storm, and its end); 0 turns heartbeats off. The first
// heartbeat at the new interval comes d after the loop takes the change.
// A negative d is an error and changes nothing.
func (w *Worker) SetHeartbeat(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("worker %s: heartbeat interval %v: must be 0 (off) or positive", w.cfg.ID, d)
	}
	w.send(control{op: ctlHeartbeat, d: d})
	return nil
}

// SetTelemetry changes the telemetry interval from now on; 0 turns
// telemetry off (a scenario's drain: no new load while what is stored
// drains). A negative d is an error and changes nothing.
func (w *Worker) SetTelemetry(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("worker %s: telemetry interval %v: must be 0 (off) or positive", w.cfg.ID, d)
	}
	w.send(control{op: ctlTelemetry, d: d})
	return nil
}

// SetMailboxCapacity changes the capacity of the worker's command mailbox
// at once (see mailbox.Mailbox.SetCapacity: lowering it drops nothing
// queued). A capacity below 1 is an error and changes nothing.
func (w *Worker) SetMailboxCapacity(n int) error {
	if err := w.mb.SetCapacity(n); err != nil {
		return fmt.Errorf("worker %s: %w", w.cfg.ID, err)
	}
	return nil
}

func (w *Worker) send(c control) {
	if w.lp != nil {
		w.lp.post(event{w: w, kind: evControl, c: c})
		return
	}
	select {
	case w.control <- c:
	case <-w.done:
	}
}

// deliver is the session's message handler. It runs on the client's
// delivery goroutine and waits while the worker's loop is behind, which
// slows the session rather than dropping anything.
func (w *Worker) deliver(s Session) func(topic string, payload []byte) {
	return func(topic string, payload []byte) {
		select {
		case w.incoming <- incoming{sess: s, topic: topic, payload: payload}:
		case <-w.done:
		}
	}
}

// sharedSession is a session that other workers' messages travel on too
// (a gateway's device session).
type sharedSession interface{ shared() }

// offer is the message handler on a shared session. It never waits: the
// session's one delivery goroutine serves every device of the gateway,
// and a worker whose loop is behind would hold up all of them, forever if
// the loop never catches up. A message that finds the worker's queue
// (incomingBuffer) full is dropped and counted (Stats.DeliveriesDropped), as a real
// gateway with a bounded buffer per device drops: a command's ask times
// out at the leader, which delivers it again; a reply the worker waited
// for times out and the worker asks again.
func (w *Worker) offer(s Session) func(topic string, payload []byte) {
	return func(topic string, payload []byte) {
		select {
		case w.incoming <- incoming{sess: s, topic: topic, payload: payload}:
		default:
			w.update(func(s *Stats) { s.DeliveriesDropped++ })
		}
	}
}

// post is the message handler of a device on a loop: the loop's queue
// takes the message, unless incomingBuffer of the device's are waiting
// there already; then it is dropped and counted, as offer drops it. It
// never waits, whatever the loop is doing.
func (w *Worker) post(s Session) func(topic string, payload []byte) {
	return func(topic string, payload []byte) {
		if w.pending.Add(1) > incomingBuffer {
			w.pending.Add(-1)
			w.update(func(s *Stats) { s.DeliveriesDropped++ })
			return
		}
		if !w.lp.post(event{w: w, kind: evMessage, in: incoming{sess: s, topic: topic, payload: payload}}) {
			w.pending.Add(-1)
		}
	}
}

// ctxBackground is for mailbox and store calls that cannot block.
var ctxBackground = context.Background()

func (w *Worker) update(f func(*Stats)) {
	w.mu.Lock()
	f(&w.st)
	w.mu.Unlock()
}

// incomingBuffer is how many messages the session's delivery goroutine can
// hand the loop before it waits for it (on a shared session: before the
// next is dropped). A few smooth a burst; more only cost memory in every
// idle worker (56 bytes a slot), and the mailbox behind the loop is where
// commands queue.
const incomingBuffer = 16
