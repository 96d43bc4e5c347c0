package outbox

import (
	"fmt"
	"strings"
	"time"
)

// Conflict says what Enqueue does when a message with the same receiver and
// idempotency key is already queued.
type Conflict int

const (
	// Append queues the message after whatever is there (commands, jobs).
	Append Conflict = iota
	// Overwrite replaces the queued message with the same (receiver, key)
	// in place, keeping its position, unless the new sequence number is
	// lower (then the new message is stale and dropped, counted). Heartbeats,
	// status and config pushes coalesce this way. A message
	// in flight is not replaced but superseded: see Store.
	Overwrite
)

func (c Conflict) String() string {
	switch c {
	case Append:
		return "append"
	case Overwrite:
		return "overwrite"
	}
	return fmt.Sprintf("Conflict(%d)", int(c))
}

// Message is one queued delivery. The caller fills Receiver, Kind, Payload
// and optionally Key, Seq, Conflict, TTL and SendAt; the store fills ID,
// CreatedAt, Attempts and LastError.
type Message struct {
	// ID is assigned by the store at enqueue, increasing in enqueue order.
	ID uint64
	// Receiver is the worker (or actor) id the message is for. Required;
	// it may not contain a NUL byte.
	Receiver string
	// Kind names the command ("config", "job", "ping", ...). Required.
	Kind string
	// Payload is opaque to the store.
	Payload []byte
	// Key is the idempotency key: the receiver dedupes on it, and Overwrite
	// coalesces on (Receiver, Key). Required for Overwrite.
	Key string
	// Seq orders versions of the same Key: an Overwrite with a lower Seq
	// than the queued one is stale.
	Seq uint64
	// Conflict is the policy for a queued message with the same key.
	Conflict Conflict
	// TTL, if positive, drops the message (counted as expired) once
	// CreatedAt+TTL has passed without delivery.
	TTL time.Duration
	// SendAt is when the message becomes due; zero means at once. Nack moves
	// it forward to back off.
	SendAt time.Time
	// Attempts counts failed deliveries so far (persisted).
	Attempts int
	// LastError is the cause given with the last Nack or DeadLetter.
	LastError string
	// CreatedAt is when the message (or, after an overwrite, its newest
	// version) was enqueued.
	CreatedAt time.Time
}

// Expired reports whether m's TTL has run out at now.
func (m *Message) Expired(now time.Time) bool {
	return m.TTL > 0 && !now.Before(m.CreatedAt.Add(m.TTL))
}

// Outcome is what Enqueue did with one message.
type Outcome int

const (
	// Appended: queued as a new message.
	Appended Outcome = iota
	// Replaced: overwrote a queued message with the same (receiver, key).
	Replaced
	// Stale: an Overwrite older (lower Seq) than the queued version; dropped
	// and counted.
	Stale
)

func (o Outcome) String() string {
	switch o {
	case Appended:
		return "appended"
	case Replaced:
		return "replaced"
	case Stale:
		return "stale"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Receipt reports the fate of one enqueued message.
type Receipt struct {
	ID      uint64 // the queued message's id (for Replaced, the id it kept)
	Outcome Outcome
}

// NackResult is what Nack did.
type NackResult int

const (
	// Requeued: the message waits until its new SendAt.
	Requeued NackResult = iota
	// DeadLettered: the message reached MaxAttempts and moved to the dead
	// letters.
	DeadLettered
	// Superseded: while the message was leased an Overwrite appended a
	// newer version of its key, so it was dropped instead of requeued
	// (counted in Stats.Overwritten). The newer version carries on with
	// its Attempts and LastError, and the receiver's next message is due
	// no sooner than it would have been.
	Superseded
)

func (r NackResult) String() string {
	switch r {
	case Requeued:
		return "requeued"
	case DeadLettered:
		return "dead-lettered"
	case Superseded:
		return "superseded"
	}
	return fmt.Sprintf("NackResult(%d)", int(r))
}

// validate checks the fields a caller must fill.
func (m *Message) validate() error {
	switch {
	case m.Receiver == "":
		return fmt.Errorf("%w: receiver is empty", ErrInvalid)
	case strings.IndexByte(m.Receiver, 0) >= 0:
		// MQTT forbids NUL in topics, and the bbolt indexes use it to
		// end a receiver id.
		return fmt.Errorf("%w: receiver %q contains a NUL byte", ErrInvalid, m.Receiver)
	case m.Kind == "":
		return fmt.Errorf("%w: kind is empty (message for %q)", ErrInvalid, m.Receiver)
	case m.Conflict == Overwrite && m.Key == "":
		return fmt.Errorf("%w: overwrite needs an idempotency key (message %q for %q)", ErrInvalid, m.Kind, m.Receiver)
	case m.Conflict != Append && m.Conflict != Overwrite:
		return fmt.Errorf("%w: conflict %d: must be append or overwrite", ErrInvalid, m.Conflict)
	case m.TTL < 0:
		return fmt.Errorf("%w: ttl %v: must be 0 (none) or positive", ErrInvalid, m.TTL)
	}
	return nil
}
