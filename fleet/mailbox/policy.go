package mailbox

import "fmt"

// Policy is what a full mailbox does with an offered message.
type Policy int

const (
	// Reject returns a *FullError to the sender, with a RetryAfter hint.
	Reject Policy = iota
	// DropOldest drops the oldest queued message to make room.
	DropOldest
	// DropNewest drops the offered message; Offer returns ErrDropped.
	DropNewest
	// Block waits for room up to Options.BlockTimeout or the context's end,
	// then rejects.
	Block
	// Coalesce keeps at most one queued message per key: a message whose key
	// is queued replaces it in place (the older one is dropped, reason
	// coalesced). A new key finding the box full is rejected as with Reject.
	Coalesce
	// Unbounded never refuses: memory and wait grow without limit. Only for
	// showing what a bound prevents.
	Unbounded
)

var policyNames = [...]string{"reject", "drop-oldest", "drop-newest", "block", "coalesce", "unbounded"}

func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses a policy name as written in scenario files:
// reject, drop-oldest, drop-newest, block, coalesce or unbounded.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown mailbox policy %q (valid: reject, drop-oldest, drop-newest, block, coalesce, unbounded)", s)
}

// MarshalText writes the policy's name.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a policy name.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// RetryHint is how a mailbox reckons the RetryAfter of a refusal (a Reject
// or Coalesce mailbox full, a Block that waited in vain).
type RetryHint int

const (
	// RetryDrain tells every refused sender the time the box takes to
	// drain: the consumer's service time × the messages queued. Senders
	// refused together come back together: a herd that honours the hint
	// meets a full box again, and again.
	RetryDrain RetryHint = iota
	// RetrySpread gives each refused sender a slot of its own: the first
	// is told the drain time, each next one a service time later than the
	// one refused before it, for as long as refusals come faster than the
	// slots pass. A herd that honours the hint comes back at the pace the
	// consumer serves, and each sender is refused about once, however large
	// the herd.
	RetrySpread
)

var retryNames = [...]string{"drain", "spread"}

// String returns the hint's name as scenario files write it.
func (h RetryHint) String() string {
	if h >= 0 && int(h) < len(retryNames) {
		return retryNames[h]
	}
	return fmt.Sprintf("RetryHint(%d)", int(h))
}

// ParseRetryHint parses a retry hint's name as written in scenario files:
// drain or spread.
func ParseRetryHint(s string) (RetryHint, error) {
	for i, n := range retryNames {
		if s == n {
			return RetryHint(i), nil
		}
	}
	return 0, fmt.Errorf("unknown retry hint %q (valid: drain, spread)", s)
}

// MarshalText writes the hint's name.
func (h RetryHint) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText parses a hint's name.
func (h *RetryHint) UnmarshalText(b []byte) error {
	v, err := ParseRetryHint(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}
