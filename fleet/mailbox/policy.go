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
