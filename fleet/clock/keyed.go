package clock

import (
	"context"
	"time"
)

// Keyed returns c as one owner of timers sees it: on a Virtual clock,
// timers due at one instant fire in the order of their owners' keys
// (lowest first, 0 for timers armed on the clock itself), and one
// owner's in the order it armed them. Give a key to what arms its timers
// from one goroutine at a time (a worker, a gateway's loop, a runner's
// own loops): then the order of two owners' timers at one instant never
// depends on which of their goroutines happened to run first. On any
// other clock Keyed returns c. Keyed views of one clock with one key are
// equal (==).
func Keyed(c Clock, key uint64) Clock {
	switch c := c.(type) {
	case *Virtual:
		return keyed{c, key}
	case keyed:
		return keyed{c.v, key}
	}
	return c
}

// keyed is a Virtual clock whose timers carry key.
type keyed struct {
	v   *Virtual
	key uint64
}

func (k keyed) Now() time.Time      { return k.v.Now() }
func (k keyed) Mono() time.Duration { return k.v.Mono() }

func (k keyed) NewTimer(d time.Duration) Timer { return k.v.newTimer(k.key, d) }

func (k keyed) AfterFunc(d time.Duration, f func()) Timer { return k.v.afterFunc(k.key, d, f) }

func (k keyed) NewTicker(d time.Duration) Ticker { return k.v.newTicker(k.key, d) }

// Settle is Virtual.Settle, its timer the owner's.
func (k keyed) Settle(ctx context.Context) error { return k.v.settle(ctx, k.key) }
