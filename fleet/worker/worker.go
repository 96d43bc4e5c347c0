package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
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

	incoming chan incoming
	control  chan control
	done     chan struct{} // closed when Run returns

	// Owned by the loop goroutine.
	sess       Session
	lost       <-chan struct{}
	down       bool // Disconnect: stay offline until Reconnect
	partition  bool // the network is cut: dials fail until Heal
	attempt    int  // reconnect attempts since the last success
	busy       bool
	current    wire.Envelope // the command being served while busy
	due        time.Time     // when current's service time is up
	asks       map[string]*ask
	syncDue    time.Time // zero: no sync to send
	syncTries  int
	flushing   bool // one local-outbox message in flight
	flushAfter time.Time
	epoch      string          // of sess, in its "online" and its will's "offline"
	answers    []delayedAnswer // acks on their way back, by due time (Config.RTT)

	// Flash, owned by the loop: kept across a Reboot.
	applied map[string]uint64 // idempotency key -> highest seq applied
	version string
	hbSeq   uint64 // the leader ignores a heartbeat seq not above the last
	nextID  uint64 // envelope ids stay unique across reboots

	timers timers

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
func New(cfg Config, dial Dialer) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		cfg: cfg, clk: cfg.Clock, dial: dial,
		rnd:      rand.New(rand.NewPCG(cfg.Seed, cfg.Index)),
		incoming: make(chan incoming, incomingBuffer),
		control:  make(chan control, 8),
		done:     make(chan struct{}),
		applied:  make(map[string]uint64),
		version:  cfg.Version,
		asks:     make(map[string]*ask),
	}
	if w.mb, err = mailbox.New[command](cfg.Mailbox); err != nil {
		return nil, fmt.Errorf("worker %s: %w", cfg.ID, err)
	}
	if w.local, err = newLocal(cfg); err != nil {
		return nil, fmt.Errorf("worker %s: %w", cfg.ID, err)
	}
	w.st.Version = cfg.Version
	return w, nil
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Run connects and serves until ctx ends, then disconnects cleanly and
// returns once the session is closed. A Worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	defer close(w.done)
	w.timers.init(w.clk, w.cfg.Heartbeat, w.cfg.Telemetry)
	defer w.timers.stop()
	w.scheduleReconnect(0)
	for {
		select {
		case <-ctx.Done():
			w.closeSession(true)
			w.mb.Close()
			return nil
		case in := <-w.incoming:
			if in.sess == w.sess && w.sess != nil {
				w.onMessage(in.topic, in.payload)
			}
		case <-w.lost:
			w.onLost()
		case <-w.timers.reconnect.C():
			w.tryConnect(ctx)
		case <-w.timers.service.C():
			w.finishCommand()
		case <-w.timers.heartbeat():
			w.sendHeartbeat()
		case <-w.timers.telemetry():
			w.sendTelemetry()
		case <-w.timers.wake.C():
		case c := <-w.control:
			w.onControl(c)
		}
		w.housekeeping()
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
