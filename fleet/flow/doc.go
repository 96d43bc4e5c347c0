// Package flow holds the flow-control pieces a sender uses to find the rate
// a receiver can take: typed delivery errors, an AIMD concurrency limiter and
// exponential backoff with full jitter.
//
// A delivery ends in one of four ways, and each steers the sender
// differently:
//
//	nil                 delivered        limiter +1
//	*CapacityError      receiver full    limiter /2 once per window, retry after max(RetryAfter, backoff)
//	*TransientError     timeout/offline  limiter unchanged, retry with backoff
//	*PermanentError     malformed/refused  no retry: dead letters
//
// Decisions use errors.As (or the Classify helper), never the error text.
//
// The limiter halves at most once per window, as TCP halves its window
// once per round trip: deliveries that were in flight together when the
// receiver filled up are turned away together, and their answers are one
// signal, not one each. A rejection halves the limit only if its permit
// was granted after the last decrease.
//
// Usage:
//
//	lim := flow.NewLimiter(flow.DefaultLimiterOptions)
//	if p, ok := lim.TryAcquire(); ok {
//		err := deliver(msg)
//		p.Done(err) // +1, /2 (once per window) or unchanged, by the error's type
//	}
package flow
