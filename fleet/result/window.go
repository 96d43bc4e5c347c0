package result

// EventResult is a named timeline event as the run resolved it.
type EventResult struct {
	// At is when the event was scheduled, in simulated seconds (the
	// scenario's input, not a measurement).
	At float64 `expr:"at" json:"at"`
	// Workers is how many workers the event selected (0 for events that
	// select none): the count a selector such as 20% gives at this fleet's
	// size, so that an expectation can follow --workers.
	Workers int `expr:"workers" json:"workers"`
}

// WindowResult is what happened in a window: counters are the change
// between its edges, depths the largest sampled inside it, and wait
// quantiles are over the messages taken from the mailbox inside it.
type WindowResult struct {
	// From and To are the window's edges, in simulated seconds.
	From float64 `expr:"from" json:"from"`
	To   float64 `expr:"to" json:"to"`
	// Leader is the leader's mailbox and answers in the window (capacity
	// and policy as at its end).
	Leader WindowLeader `expr:"leader" json:"leader"`
	// Relay is the relay's deliveries in the window.
	Relay WindowRelay `expr:"relay" json:"relay"`
	// Workers is the workers' requests and answers in the window.
	Workers WindowWorkers `expr:"workers" json:"workers"`
}

// WindowLeader is the leader's side of a window.
type WindowLeader struct {
	Mailbox        MailboxResult `expr:"mailbox" json:"mailbox"`
	RequestsServed uint64        `expr:"requests_served" json:"requests_served"`
	AnsweredFull   uint64        `expr:"answered_full" json:"answered_full"`
}

// WindowRelay is the relay's side of a window, over every partition.
type WindowRelay struct {
	Delivered    uint64 `expr:"delivered" json:"delivered"`
	Backpressure uint64 `expr:"backpressure" json:"backpressure"`
	Retries      uint64 `expr:"retries" json:"retries"`
	Errors       uint64 `expr:"errors" json:"errors"`
	OfflineSkips uint64 `expr:"offline_skips" json:"offline_skips"`
}

// WindowWorkers is the workers' side of a window.
type WindowWorkers struct {
	Connects  uint64 `expr:"connects" json:"connects"`
	SyncSent  uint64 `expr:"sync_sent" json:"sync_sent"`
	SyncOK    uint64 `expr:"sync_ok" json:"sync_ok"`
	SyncFull  uint64 `expr:"sync_full" json:"sync_full"`
	AckedFull uint64 `expr:"acked_full" json:"acked_full"`
}

// Minus is the relay's counts between two marks: b less a (a is earlier).
func (b WindowRelay) Minus(a WindowRelay) WindowRelay {
	return WindowRelay{
		Delivered: b.Delivered - a.Delivered, Backpressure: b.Backpressure - a.Backpressure,
		Retries: b.Retries - a.Retries, Errors: b.Errors - a.Errors, OfflineSkips: b.OfflineSkips - a.OfflineSkips,
	}
}

// Minus is the workers' counts between two marks: b less a (a is earlier).
func (b WindowWorkers) Minus(a WindowWorkers) WindowWorkers {
	return WindowWorkers{
		Connects: b.Connects - a.Connects, SyncSent: b.SyncSent - a.SyncSent, SyncOK: b.SyncOK - a.SyncOK,
		SyncFull: b.SyncFull - a.SyncFull, AckedFull: b.AckedFull - a.AckedFull,
	}
}
