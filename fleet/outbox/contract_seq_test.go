package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// The NextSeq part of the Store contract, run against every
// implementation as runContract is.

func TestMemorySeqContract(t *testing.T) { runSeqContract(t, openMemory) }

func TestBoltSeqContract(t *testing.T) {
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch, outbox.None} {
		t.Run(d.String(), func(t *testing.T) { runSeqContract(t, openBolt(d)) })
	}
}

func (e *env) seq() uint64 {
	e.t.Helper()
	n, err := e.s.NextSeq(ctx)
	if err != nil {
		e.t.Fatalf("NextSeq: %v", err)
	}
	return n
}

func runSeqContract(t *testing.T, open opener) {
	t.Run("increasing from 1, untouched by messages", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		if got := e.seq(); got != 1 {
			t.Fatalf("a new store's first NextSeq = %d, want 1", got)
		}
		e.enq(msg("a", "1"), over("a", "k", 7, "v7"))
		e.ack(e.want(1, "1")...)
		prev := uint64(1)
		for range 5 {
			n := e.seq()
			if n <= prev {
				t.Fatalf("NextSeq = %d after %d", n, prev)
			}
			prev = n
		}
		if st := e.balanced(); st.Enqueued != 2 || st.Depth != 1 {
			t.Fatalf("NextSeq changed the queue: enqueued %d, depth %d; want 2, 1", st.Enqueued, st.Depth)
		}
	})

	t.Run("concurrent calls get distinct numbers", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		const callers, calls = 8, 40
		got := make([][]uint64, callers)
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() {
				for range calls {
					n, err := e.s.NextSeq(ctx)
					if err != nil {
						t.Errorf("NextSeq: %v", err)
						return
					}
					got[c] = append(got[c], n)
				}
			})
		}
		wg.Wait()
		seen := map[uint64]int{}
		for c, ns := range got {
			for i, n := range ns {
				if i > 0 && n <= ns[i-1] {
					t.Fatalf("caller %d got %d after %d", c, n, ns[i-1])
				}
				if other, dup := seen[n]; dup {
					t.Fatalf("%d handed out to callers %d and %d", n, other, c)
				}
				seen[n] = c
			}
		}
		if len(seen) != callers*calls {
			t.Fatalf("%d distinct numbers, want %d", len(seen), callers*calls)
		}
		if n := e.seq(); n != callers*calls+1 {
			t.Fatalf("after %d calls NextSeq = %d, want %d: numbers were skipped", callers*calls, n, callers*calls+1)
		}
	})

	t.Run("done context and closed store hand out nothing", func(t *testing.T) {
		e := newEnv(t, open, outbox.Options{})
		first := e.seq()
		done, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.s.NextSeq(done); !errors.Is(err, context.Canceled) {
			t.Fatalf("NextSeq with a canceled context: %v, want context.Canceled", err)
		}
		if n := e.seq(); n != first+1 {
			t.Fatalf("NextSeq = %d after %d and a canceled call, want %d", n, first, first+1)
		}
		if err := e.s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.NextSeq(ctx); !errors.Is(err, outbox.ErrClosed) {
			t.Fatalf("NextSeq after Close: %v, want ErrClosed", err)
		}
	})
}
