package leader

// TrackedUpdates returns how many deploy updates the leader tracks, and
// for how many workers it remembers the newest: what its memory of
// deploys grows with.
func (l *Leader) TrackedUpdates() (updates, workers int) { return l.deploys.tracking() }
