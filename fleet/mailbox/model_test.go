package mailbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"pgregory.net/rapid"
)

// boxModel is the reference: a plain slice with each policy's rule written
// out the obvious way.
type boxModel struct {
	policy   mailbox.Policy
	capacity int
	q        []msg
	closed   bool
	offered  uint64
	taken    uint64
	dropped  uint64
	rejected uint64
}

func (b *boxModel) offer(key string, v msg) error {
	b.offered++
	if b.closed {
		b.rejected++
		return mailbox.ErrClosed
	}
	if b.policy == mailbox.Coalesce && key != "" {
		for i := range b.q {
			if b.q[i].key == key {
				b.q[i] = v
				b.dropped++
				return nil
			}
		}
	}
	if len(b.q) < b.capacity || b.policy == mailbox.Unbounded {
		b.q = append(b.q, v)
		return nil
	}
	switch b.policy {
	case mailbox.DropOldest:
		b.q = append(b.q[1:], v)
		b.dropped++
		return nil
	case mailbox.DropNewest:
		b.dropped++
		return mailbox.ErrDropped
	case mailbox.Block: // the test offers to a full Block box with a cancelled context
		b.rejected++
		return context.Canceled
	default:
		b.rejected++
		return mailbox.ErrFull
	}
}

// TestMailboxModel runs random interleavings of offers (keyed and not),
// takes and a close against the model, for every policy: the same answers,
// the same order of what is taken, depth within capacity, and the
// accounting identity after every step. It runs twice: with rings
// allocated up front (capacities under the initial ring), and with rings
// that start at one slot and grow as they fill, wrapped or not.
func TestMailboxModel(t *testing.T) {
	t.Run("allocated", testMailboxModel)
	t.Run("growing", func(t *testing.T) {
		defer mailbox.SetInitialRing(1)()
		testMailboxModel(t)
	})
}

func testMailboxModel(t *testing.T) {
	policies := []mailbox.Policy{mailbox.Reject, mailbox.DropOldest, mailbox.DropNewest, mailbox.Block, mailbox.Coalesce, mailbox.Unbounded}
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				capacity := rapid.IntRange(1, 6).Draw(t, "capacity")
				m, err := mailbox.New[msg](mailbox.Options{Capacity: capacity, Policy: p})
				if err != nil {
					t.Fatal(err)
				}
				model := &boxModel{policy: p, capacity: capacity}
				cancelled, cancel := context.WithCancel(context.Background())
				cancel()
				next := 0
				t.Repeat(map[string]func(*rapid.T){
					"offer": func(t *rapid.T) {
						next++
						key := rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "key")
						v := msg{key, next}
						ctx := context.Background()
						if p == mailbox.Block && !model.closed && len(model.q) >= capacity {
							ctx = cancelled // never block the test
						}
						got, want := m.OfferKey(ctx, key, v), model.offer(key, v)
						if !errors.Is(got, want) && !(got == nil && want == nil) {
							t.Fatalf("OfferKey(%q, %d) = %v, model says %v", key, next, got, want)
						}
					},
					"take": func(t *rapid.T) {
						v, ok := m.TryTake()
						if ok != (len(model.q) > 0) {
							t.Fatalf("TryTake ok = %v with model depth %d", ok, len(model.q))
						}
						if ok {
							if v != model.q[0] {
								t.Fatalf("took %v, model's head is %v", v, model.q[0])
							}
							model.q = model.q[1:]
							model.taken++
						}
					},
					"close": func(t *rapid.T) {
						if rapid.IntRange(0, 9).Draw(t, "rarely") == 0 {
							m.Close()
							model.closed = true
						}
					},
					"": func(t *rapid.T) {
						s := m.Stats()
						checkIdentity(t, s)
						if s.Depth != len(model.q) {
							t.Fatalf("depth %d, model %d", s.Depth, len(model.q))
						}
						if p != mailbox.Unbounded && s.Depth > capacity {
							t.Fatalf("depth %d > capacity %d", s.Depth, capacity)
						}
						if s.Offered != model.offered || s.Taken != model.taken || s.Dropped() != model.dropped || s.Rejected() != model.rejected {
							t.Fatalf("stats %s, model offered %d taken %d dropped %d rejected %d",
								fmt.Sprintf("offered %d taken %d dropped %d rejected %d", s.Offered, s.Taken, s.Dropped(), s.Rejected()),
								model.offered, model.taken, model.dropped, model.rejected)
						}
						if p == mailbox.Coalesce {
							seen := map[string]bool{}
							for _, v := range model.q {
								if v.key != "" && seen[v.key] {
									t.Fatalf("two queued messages with key %q", v.key)
								}
								seen[v.key] = true
							}
						}
					},
				})
			})
		})
	}
}
