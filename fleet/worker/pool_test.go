package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/worker"
)

// TestPoolFirstDials: a pool lets at most FirstDials workers make their
// first connection attempt at once, and starts the rest as those connect.
func TestPoolFirstDials(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name     string
		limit    int
		wantPeak int
	}{
		{"limit 3", 3, 3},
		{"default", 0, n}, // fewer workers than the default limit
		{"no limit", -1, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var d slowDialer
				cfgs := make([]worker.Config, n)
				for i := range cfgs {
					cfgs[i] = worker.Config{ID: fmt.Sprintf("w-%02d", i), NoSync: true}
				}
				p, err := worker.NewPool(cfgs, worker.DialerFunc(d.dial), worker.PoolOptions{FirstDials: tc.limit})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = p.Run(ctx)
				}()
				synctest.Wait()
				if got := d.now(); got != tc.wantPeak {
					t.Errorf("%d workers dialing at the start; want %d", got, tc.wantPeak)
				}
				time.Sleep(time.Minute) // every dial takes a second
				synctest.Wait()
				if d.peak != tc.wantPeak || d.total != n {
					t.Errorf("peak %d dialing at once, %d dials; want peak %d, %d dials", d.peak, d.total, tc.wantPeak, n)
				}
				cancel()
				<-done
			})
		})
	}
}

// slowDialer's dials take a second each and succeed.
type slowDialer struct {
	mu                   sync.Mutex
	dialing, peak, total int
}

func (d *slowDialer) now() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialing
}

func (d *slowDialer) dial(ctx context.Context, _ worker.DialOptions) (worker.Session, error) {
	d.mu.Lock()
	d.dialing++
	d.total++
	d.peak = max(d.peak, d.dialing)
	d.mu.Unlock()
	time.Sleep(time.Second)
	d.mu.Lock()
	d.dialing--
	d.mu.Unlock()
	return idleSession{lost: make(chan struct{})}, nil
}

// idleSession is a connected session on which nothing happens.
type idleSession struct{ lost chan struct{} }

func (idleSession) Publish(context.Context, string, byte, bool, []byte) error { return nil }
func (idleSession) Send(string, byte, []byte) error                           { return nil }
func (idleSession) Subscribe(context.Context, string, byte, func(string, []byte)) error {
	return nil
}
func (idleSession) Close(bool)              {}
func (idleSession) Silence()                {}
func (s idleSession) Lost() <-chan struct{} { return s.lost }
