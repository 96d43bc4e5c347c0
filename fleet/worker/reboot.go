package worker

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// newLocal is a worker's local outbox, empty.
func newLocal(cfg Config) (*outbox.Memory, error) {
	return outbox.NewMemory(outbox.Options{Clock: cfg.Clock, MaxDepth: cfg.LocalOutbox, MaxAttempts: 1 << 30})
}

// localOutbox returns the local outbox, made when the worker first stores
// something (most workers of a large fleet never do): after New and after
// a reboot, it has none.
func (w *Worker) localOutbox() (*outbox.Memory, error) {
	if w.local != nil {
		return w.local, nil
	}
	local, err := newLocal(w.cfg)
	if err != nil { // the options New accepted: cannot happen
		return nil, fmt.Errorf("worker %s: local outbox: %w", w.cfg.ID, err)
	}
	w.mu.Lock()
	w.local = local
	w.mu.Unlock()
	return local, nil
}

// localLen is how many messages wait in the local outbox.
func (w *Worker) localLen() int {
	if w.local == nil {
		return 0
	}
	return w.local.Len()
}

// reboot loses the worker's RAM and keeps its flash (see Worker). What
// was lost is counted, by kind: a command the worker had acked ok (in its
// mailbox or in service) is gone for good — the leader settled it as
// delivered — while telemetry and heartbeats were the worker's own.
func (w *Worker) reboot() {
	var telemetry uint64
	for id, a := range w.asks {
		if a.kind == wire.KindTelemetry && a.storeID == 0 {
			telemetry++ // sent directly, unanswered: it was only in RAM
		}
		delete(w.asks, id) // a stored one goes with the local outbox
	}
	w.closeSession(false) // no goodbye: the broker publishes the will
	var commands uint64
	if w.busy {
		commands++
		w.busy, w.current = false, nil
	}
	// The mailbox counts these as taken: taken out by the reboot.
	for _, ok := w.mb.TryTake(); ok; _, ok = w.mb.TryTake() {
		commands++
	}
	if w.pull.held != "" {
		commands-- // a pulled job is the leader's queue's, not a command: its lease runs out
		w.update(func(s *Stats) { s.JobsAbandoned++ })
	}
	w.pullReboot()
	w.answers = nil // acks on their way: the leader's asks time out and it redelivers
	w.setSyncDue(time.Time{})
	w.syncTries = 0
	w.flushing, w.flushAfter = false, time.Time{}
	w.timers.reboot(w.clk.Now())
	old, queued := w.local, w.st.TelemetryQueued
	heartbeats := 0
	if old != nil {
		heartbeats = max(old.Len()-queued, 0)
	}
	w.mu.Lock()
	w.local = nil // made again when first needed
	s := &w.st
	s.Reboots++
	s.Busy = false
	s.JobsHeld = 0
	s.CommandsLostInReboot += commands
	s.TelemetryLostInReboot += telemetry + uint64(queued)
	s.TelemetryQueued -= queued
	s.HeartbeatsLostInReboot += uint64(heartbeats)
	w.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	if !w.down {
		w.attempt = 1
		w.scheduleReconnect(w.attempt)
	}
}
