package leader

// TrackedUpdates returns how many deploy updates the leader tracks, and
// for how many workers it remembers the newest: what its memory of
// deploys grows with.
func (l *Leader) TrackedUpdates() (updates, workers int) { return l.deploys.tracking() }

// GatewaysKnown returns how many gateways the leader keeps a state for.
func (l *Leader) GatewaysKnown() int {
	l.fleet.mu.Lock()
	defer l.fleet.mu.Unlock()
	return len(l.fleet.gateways)
}

// ProgressRounds returns how many progress ticks the leader has handled
// (reconciled and saved, or found nothing to save).
func (l *Leader) ProgressRounds() int64 { return l.progressRounds.Load() }
