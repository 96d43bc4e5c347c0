// Package flow holds the flow-control pieces a sender uses to find the rate
// a receiver can take: typed delivery errors, an AIMD concurrency limiter and
// exponential backoff with full jitter.
//
// A delivery ends in one of four ways, and each steers the sender
// differently:
//
//	nil                 delivered        limiter +1
//	*CapacityError      receiver full    limiter /2, retry after max(RetryAfter, backoff)
//	*TransientError     timeout/offline  limiter unchanged, retry with backoff
//	*PermanentError     malformed/refused  no retry: dead letters
//
// Decisions use errors.As (or the Classify helper), never the error text.
//
// Usage:
//
//	lim := flow.NewLimiter(flow.DefaultLimiterOptions)
//	if p, ok := lim.TryAcquire(); ok {
//		err := deliver(msg)
//		p.Done(err) // +1, /2 or unchanged, by the error's type
//	}
package flow
