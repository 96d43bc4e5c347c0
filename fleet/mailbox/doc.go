// Package mailbox is an actor's bounded mailbox: many producers, one
// consumer that takes one message at a time, and a policy for what happens
// when the box is full.
//
// Capacity bounds the worst wait: a message that finds the box full waits
// about Capacity × service time before it is taken (200 slots at 1 ms each:
// about 200 ms; unbounded, seconds and growing with the overload; the
// overload test measures it). Choose it from the latency you can tolerate.
//
// The policies, for a full box:
//
//	Reject      Offer returns a *FullError with a RetryAfter hint; the sender decides
//	DropOldest  the oldest queued message is dropped to make room (state updates)
//	DropNewest  the offered message is dropped; Offer returns ErrDropped
//	Block       Offer waits for room, up to BlockTimeout or the context's end
//	Coalesce    at most one message per key; a newer one replaces it in place
//	Unbounded   never full: for comparison runs only, to show what goes wrong
//
// Every offered message ends as exactly one of taken, dropped (counted by
// reason) or rejected (returned to the caller as an error, counted by
// reason), so Stats always satisfies
//
//	Offered == Taken + Dropped + Rejected + Depth
//
// Usage:
//
//	mb, _ := mailbox.New[Cmd](mailbox.Options{Capacity: 200, Policy: mailbox.Reject})
//	go func() { // producer
//		if err := mb.Offer(ctx, cmd); err != nil {
//			var full *mailbox.FullError
//			if errors.As(err, &full) { /* retry after full.RetryAfter */ }
//		}
//	}()
//	for { // the actor: one message at a time
//		cmd, err := mb.Take(ctx)
//		if err != nil { return } // ctx ended, or closed and drained
//		handle(cmd)
//	}
package mailbox
