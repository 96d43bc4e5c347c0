package mailbox

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrClosed is returned by Offer after Close, and by Take once the
	// mailbox is closed and drained.
	ErrClosed = errors.New("mailbox: closed")
	// ErrFull matches every *FullError.
	ErrFull = errors.New("mailbox: full")
	// ErrDropped is returned by Offer under DropNewest when the offered
	// message was dropped (counted; the sender need not act).
	ErrDropped = errors.New("mailbox: full, message dropped")
)

// FullError rejects a message: the mailbox was full (Reject, Coalesce with a
// new key), or stayed full for the whole wait (Block).
type FullError struct {
	// RetryAfter estimates when there will be room for this sender: the
	// measured service time of the consumer × the messages queued ahead,
	// and with RetrySpread the slots told the senders refused before it
	// (see Mailbox.RetryAfter).
	RetryAfter time.Duration
	// Capacity of the mailbox.
	Capacity int
	// Waited is how long Offer waited for room (Block only).
	Waited time.Duration
}

func (e *FullError) Error() string {
	if e.Waited > 0 {
		return fmt.Sprintf("mailbox full (capacity %d) for %v; retry after %v", e.Capacity, e.Waited, e.RetryAfter)
	}
	return fmt.Sprintf("mailbox full (capacity %d); retry after %v", e.Capacity, e.RetryAfter)
}

// Is makes errors.Is(err, ErrFull) true.
func (e *FullError) Is(target error) bool { return target == ErrFull }
