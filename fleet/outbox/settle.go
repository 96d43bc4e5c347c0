package outbox

import (
	"context"
	"fmt"
	"math"
	"time"
)

// SettleOp says what Store.Settle does with a leased message.
type SettleOp int

const (
	// SettleAck removes the message: it was delivered (as Store.Ack).
	SettleAck SettleOp = iota
	// SettleNack records a failed attempt: Attempts+1, LastError = Cause,
	// due again Delay after the settle, or dead-lettered at MaxAttempts
	// (as Store.Nack).
	SettleNack
	// SettleRelease hands the lease back without an attempt, due again at
	// SendAt, zero meaning at once (as Store.Release).
	SettleRelease
	// SettleDeadLetter moves the message to the dead letters with
	// LastError = Cause (as Store.DeadLetter).
	SettleDeadLetter
	// SettlePark hands the lease back without an attempt, parked for its
	// offline receiver until Store.Wake, or until SendAt, zero meaning no
	// recheck (as Store.Park).
	SettlePark
)

func (op SettleOp) String() string {
	switch op {
	case SettleAck:
		return "ack"
	case SettleNack:
		return "nack"
	case SettleRelease:
		return "release"
	case SettleDeadLetter:
		return "dead-letter"
	case SettlePark:
		return "park"
	}
	return fmt.Sprintf("SettleOp(%d)", int(op))
}

// Settlement is one leased message to settle and how. Fields an Op does
// not use are ignored.
type Settlement struct {
	ID     uint64
	Op     SettleOp
	Delay  time.Duration // SettleNack: how long the message backs off (negative counts as 0)
	SendAt time.Time     // SettleRelease: when it is due again (zero: now); SettlePark: the recheck (zero: none)
	Cause  string        // SettleNack, SettleDeadLetter: the new LastError
}

// never is the recheck of a message parked with none: it sorts after
// every real due time, and a bbolt record holds it exactly (the largest
// time unixNano can encode).
var never = time.Unix(0, math.MaxInt64)

// SettleResult is what Store.Settle did with one Settlement.
type SettleResult struct {
	ID uint64
	// Err is nil if the message was settled, or wraps ErrNotLeased if it
	// was not leased when its turn came (nothing was changed for it).
	Err error
	// Nack is Requeued or DeadLettered for a SettleNack that succeeded.
	Nack NackResult
}

// validateSettlements checks what a Settle call can reject before it
// changes anything.
func validateSettlements(ss []Settlement) error {
	for i, s := range ss {
		if s.Op < SettleAck || s.Op > SettlePark {
			return fmt.Errorf("%w: settlement %d (id %d): op %d: must be ack, nack, release, dead-letter or park", ErrInvalid, i, s.ID, s.Op)
		}
	}
	return nil
}

// settleOne is a single-message settle (Ack, Nack, ...) on top of Settle:
// the call's error, or else the message's own.
func settleOne(ctx context.Context, st Store, s Settlement) (SettleResult, error) {
	rs, err := st.Settle(ctx, s)
	if err != nil {
		return SettleResult{}, err
	}
	return rs[0], rs[0].Err
}
