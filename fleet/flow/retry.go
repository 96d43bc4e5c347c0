package flow

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Retry calls try until it returns nil, waiting Delay(n, r) on clk before
// try number n (counted from 0, so even the first call is jittered: a
// whole fleet that lost one broker does not come back in one instant).
// The window doubles with each failure up to Cap. It returns nil once try
// has succeeded; try's error at once if it is a *PermanentError (trying
// again cannot help); ctx.Err() if ctx ends first. try gets ctx and should
// return soon after it ends.
//
// r is not safe for concurrent use: give each caller its own, seeded so
// runs repeat.
func (b Backoff) Retry(ctx context.Context, clk clock.Clock, r *rand.Rand, try func(context.Context) error) error {
	for n := 0; ; n++ {
		if err := clock.Sleep(ctx, clk, b.Delay(n, r)); err != nil {
			return err
		}
		err := try(ctx)
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrPermanent) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
