package mailbox_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// A bounded mailbox under Reject refuses the message that finds it full,
// with a hint of when to retry, and counts it: every offered message is
// taken, dropped, rejected or still queued.
func ExampleMailbox_Offer() {
	ctx := context.Background()
	mb, err := mailbox.New[string](mailbox.Options{
		Capacity:        2,
		Policy:          mailbox.Reject,
		ServiceTimeHint: 10 * time.Millisecond,
		Clock:           clock.NewFake(time.Unix(0, 0)),
	})
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{"a", "b", "c"} {
		err := mb.Offer(ctx, cmd)
		var full *mailbox.FullError
		if errors.As(err, &full) {
			fmt.Printf("%s refused: retry after %v\n", cmd, full.RetryAfter)
		}
	}
	first, _ := mb.Take(ctx)
	fmt.Println("took", first)

	s := mb.Stats()
	fmt.Printf("offered %d = taken %d + dropped %d + rejected %d + queued %d\n",
		s.Offered, s.Taken, s.Dropped(), s.Rejected(), s.Depth)
	// Output:
	// c refused: retry after 20ms
	// took a
	// offered 3 = taken 1 + dropped 0 + rejected 1 + queued 1
}

// Under DropOldest a full mailbox makes room by dropping the oldest
// message, counted by reason; Offer succeeds.
func ExampleMailbox_Offer_dropOldest() {
	ctx := context.Background()
	mb, _ := mailbox.New[int](mailbox.Options{Capacity: 2, Policy: mailbox.DropOldest})
	for i := 1; i <= 3; i++ {
		_ = mb.Offer(ctx, i)
	}
	for mb.Len() > 0 {
		v, _ := mb.TryTake()
		fmt.Println("took", v)
	}
	fmt.Println("dropped oldest:", mb.Stats().DroppedOldest)
	// Output:
	// took 2
	// took 3
	// dropped oldest: 1
}
