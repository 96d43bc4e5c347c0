package flow

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels for errors.Is. Each typed error below matches its sentinel.
var (
	// ErrCapacity matches a *CapacityError: the receiver is full.
	ErrCapacity = errors.New("receiver at capacity")
	// ErrTransient matches a *TransientError: try again later.
	ErrTransient = errors.New("transient delivery failure")
	// ErrPermanent matches a *PermanentError: retrying cannot help.
	ErrPermanent = errors.New("permanent delivery failure")
)

// CapacityError says the receiver is full (its mailbox rejected the
// message). It is the congestion signal: the AIMD limiter halves on it (once
// per window of deliveries in flight together), and the message is retried
// no sooner than RetryAfter.
type CapacityError struct {
	// RetryAfter is the receiver's hint for when it expects room; zero if it
	// gave none.
	RetryAfter time.Duration
	// Reason is a short human-readable cause ("mailbox full").
	Reason string
}

func (e *CapacityError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = "receiver full"
	}
	return fmt.Sprintf("capacity: %s (retry after %v)", reason, e.RetryAfter)
}

// Is reports whether target is ErrCapacity.
func (e *CapacityError) Is(target error) bool { return target == ErrCapacity }

// TransientError wraps a failure that may go away by itself: a timeout, an
// offline receiver, a broken connection. The limiter is left unchanged.
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return "transient: " + errText(e.Err) }

// Unwrap returns the cause.
func (e *TransientError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTransient.
func (e *TransientError) Is(target error) bool { return target == ErrTransient }

// PermanentError wraps a failure that retrying cannot fix: a malformed
// message, a receiver that refuses it. The message goes to the dead letters.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + errText(e.Err) }

// Unwrap returns the cause.
func (e *PermanentError) Unwrap() error { return e.Err }

// Is reports whether target is ErrPermanent.
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Capacity returns a *CapacityError.
func Capacity(retryAfter time.Duration, reason string) error {
	return &CapacityError{RetryAfter: retryAfter, Reason: reason}
}

// Transient wraps err as a *TransientError.
func Transient(err error) error { return &TransientError{Err: err} }

// Permanent wraps err as a *PermanentError.
func Permanent(err error) error { return &PermanentError{Err: err} }

// Class is how a delivery outcome steers the sender.
type Class int

const (
	// OK: delivered.
	OK Class = iota
	// Backpressure: the receiver is full (a *CapacityError in the chain).
	Backpressure
	// Retry: a transient failure, or any error of no known class.
	Retry
	// Reject: a permanent failure (a *PermanentError in the chain).
	Reject
)

var classNames = [...]string{"ok", "backpressure", "retry", "reject"}

func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Classify sorts a delivery result. An error of no known type is treated as
// transient: an unexplained failure is retried (and eventually dead-lettered
// by the attempt limit) rather than either dropped or taken as congestion.
// When a chain holds more than one typed error, Permanent wins over
// Capacity, which wins over Transient.
func Classify(err error) Class {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, ErrPermanent):
		return Reject
	case errors.Is(err, ErrCapacity):
		return Backpressure
	default:
		return Retry
	}
}

// RetryAfter returns the RetryAfter hint of the first *CapacityError in err's
// chain, and whether there was one.
func RetryAfter(err error) (time.Duration, bool) {
	var ce *CapacityError
	if errors.As(err, &ce) {
		return ce.RetryAfter, true
	}
	return 0, false
}
