package outbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	bolt "go.etcd.io/bbolt"
)

// TestCommitQueue holds one commit open while 40 more calls arrive: they
// must all go into the next transaction, one commit for the lot; a call
// that fails or panics gets its own error and takes nothing of the
// others' down with it. Inside a synctest bubble, synctest.Wait returns
// once every call is parked on the queue.
func TestCommitQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), 0o600, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		bucket := []byte("b")
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
			t.Fatal(err)
		}
		var q commitQueue
		var mu sync.Mutex
		txs := map[*bolt.Tx]bool{} // transactions that ran a call
		put := func(i int) func(*bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				mu.Lock()
				txs[tx] = true
				mu.Unlock()
				return tx.Bucket(bucket).Put(fmt.Appendf(nil, "k%02d", i), nil)
			}
		}

		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			err := q.update(db, func(tx *bolt.Tx) error {
				<-release
				return put(0)(tx)
			})
			if err != nil {
				t.Errorf("first call: %v", err)
			}
		})
		synctest.Wait() // the first call leads and holds its transaction open
		const n = 40
		boom := errors.New("boom")
		errs := make([]error, n+1)
		for i := 1; i <= n; i++ {
			fn := put(i)
			switch i {
			case 10:
				fn = func(*bolt.Tx) error { return boom }
			case 20:
				fn = func(tx *bolt.Tx) error {
					if err := put(i)(tx); err != nil {
						return err
					}
					panic("damaged page")
				}
			}
			wg.Go(func() { errs[i] = q.update(db, fn) })
		}
		synctest.Wait() // all queued behind the open commit
		close(release)
		wg.Wait()

		for i, err := range errs[1:] {
			switch i + 1 {
			case 10:
				if !errors.Is(err, boom) {
					t.Errorf("call 10 = %v, want its own error", err)
				}
			case 20:
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("call 20 = %v, want its panic as ErrCorrupt", err)
				}
			default:
				if err != nil {
					t.Errorf("call %d = %v", i+1, err)
				}
			}
		}
		var keys int
		err = db.View(func(tx *bolt.Tx) error {
			keys = tx.Bucket(bucket).Stats().KeyN
			for _, i := range []int{10, 20} {
				if tx.Bucket(bucket).Get(fmt.Appendf(nil, "k%02d", i)) != nil {
					t.Errorf("the failed call %d left its write behind", i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if keys != n+1-2 {
			t.Errorf("%d keys stored, want %d (all but the two failed calls)", keys, n+1-2)
		}
		// The first commit, then the 40 queued calls in one transaction
		// (tried three times: rolled back after each failure).
		if len(txs) != 4 {
			t.Errorf("calls ran in %d transactions, want 4 (the first, and the rest together, tried thrice)", len(txs))
		}
		if q.busy || len(q.next) != 0 {
			t.Errorf("queue left busy %v with %d calls", q.busy, len(q.next))
		}
	})
}
