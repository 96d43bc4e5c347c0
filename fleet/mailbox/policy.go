package mailbox

import (
	"fmt"
	"slices"
	"strings"
)

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

var policyNames = names{"reject", "drop-oldest", "drop-newest", "block", "coalesce", "unbounded"}

func (p Policy) String() string { return policyNames.name(int(p), "Policy") }

// ParsePolicy parses a policy name as written in scenario files:
// reject, drop-oldest, drop-newest, block, coalesce or unbounded.
func ParsePolicy(s string) (Policy, error) {
	i, err := policyNames.parse(s, "mailbox policy")
	return Policy(i), err
}

// MarshalText writes the policy's name.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a policy name.
func (p *Policy) UnmarshalText(b []byte) error { return unmarshal(p, ParsePolicy, b) }

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

var retryNames = names{"drain", "spread"}

// String returns the hint's name as scenario files write it.
func (h RetryHint) String() string { return retryNames.name(int(h), "RetryHint") }

// ParseRetryHint parses a retry hint's name as written in scenario files:
// drain or spread.
func ParseRetryHint(s string) (RetryHint, error) {
	i, err := retryNames.parse(s, "retry hint")
	return RetryHint(i), err
}

// MarshalText writes the hint's name.
func (h RetryHint) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText parses a hint's name.
func (h *RetryHint) UnmarshalText(b []byte) error { return unmarshal(h, ParseRetryHint, b) }

// names are the names of an enum's values, in the order of the values, as
// scenario files write them.
type names []string

// name is v's name, or typ(v) for a value without one.
func (n names) name(v int, typ string) string {
	if v >= 0 && v < len(n) {
		return n[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// parse returns the value named s, or an error naming what (a "mailbox
// policy") and every valid name.
func (n names) parse(s, what string) (int, error) {
	if i := slices.Index(n, s); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("unknown %s %q (valid: %s)", what, s, strings.Join(n, ", "))
}

// unmarshal sets *v to what parse makes of b, or leaves it as it was.
func unmarshal[T any](v *T, parse func(string) (T, error), b []byte) error {
	x, err := parse(string(b))
	if err != nil {
		return err
	}
	*v = x
	return nil
}
