package flow

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff computes retry delays: exponential with full jitter,
//
//	delay = random in [0, min(Cap, Base × 2^attempt)]
//
// Full jitter spreads a herd of retries evenly over the window instead of
// bunching them at its edge (the AWS architecture blog's "Exponential
// Backoff And Jitter" measured it as the cheapest of the jittered schemes).
type Backoff struct {
	// Base is the window for attempt 0. Default 100 ms.
	Base time.Duration
	// Cap bounds the window. Default 30 s.
	Cap time.Duration
}

// DefaultBackoff is Base 100 ms, Cap 30 s.
var DefaultBackoff = Backoff{Base: 100 * time.Millisecond, Cap: 30 * time.Second}

// Ceiling returns min(Cap, Base × 2^attempt), the upper bound of the jitter
// window. It does not overflow for any attempt. Zero or negative fields take
// their defaults; a negative attempt counts as 0.
func (b Backoff) Ceiling(attempt int) time.Duration {
	base, limit := b.Base, b.Cap
	if base <= 0 {
		base = DefaultBackoff.Base
	}
	if limit <= 0 {
		limit = DefaultBackoff.Cap
	}
	if base >= limit {
		return limit
	}
	if attempt < 0 {
		attempt = 0
	}
	// base << attempt stays below limit iff base <= limit >> attempt; the
	// check also stops a shift of 63 or more from wrapping around.
	if attempt >= 63 || base > limit>>uint(attempt) {
		return limit
	}
	return base << uint(attempt)
}

// Delay returns a random delay in [0, Ceiling(attempt)], drawn from r. r is
// not safe for concurrent use: give each goroutine its own, seeded from the
// scenario's seed so runs repeat.
func (b Backoff) Delay(attempt int, r *rand.Rand) time.Duration {
	c := int64(b.Ceiling(attempt))
	if c == math.MaxInt64 { // c+1 would wrap
		return time.Duration(r.Int64N(c))
	}
	return time.Duration(r.Int64N(c + 1))
}
