package scenario

// settingWarnings returns the settings that load and run but work against
// each other: the scenario is not refused, and its run is what it asks
// for, but probably not what its author meant.
func settingWarnings(s *Scenario, src *source) Errors {
	var ws Errors
	if lease, ask := s.Leader.Outbox.LeaseTimeout, s.Leader.AskTimeout; lease > 0 && lease <= ask {
		// The relay settles such a command by its newer delivery, so
		// nothing is lost or counted twice; but a worker slow to ack gets
		// the command a second time, and the retries and attempts read
		// as a flaky link.
		w := src.at("leader.outbox.lease_timeout", "%v is not above leader.ask_timeout (%v): a command whose ack takes longer than the lease is handed out again while its first ask still waits, and its worker gets it twice; want more than %v", lease, ask, ask)
		w.Warning = true
		ws = append(ws, w)
	}
	return ws
}
