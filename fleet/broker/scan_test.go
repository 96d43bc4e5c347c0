package broker

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// TestExpiryScanIdle: an idle broker with 500 sessions allocates next to
// nothing over 9.5 s with the default ExpiryScan; with mochi's one-second
// scans it allocates at least once per session per scan (the in-flight
// scan copies and sorts every client's in-flight messages).
func TestExpiryScanIdle(t *testing.T) {
	const n = 500
	for _, tc := range []struct {
		name         string
		scan         time.Duration
		atLeast, max uint64
	}{
		{"default", 0, 0, n},
		{"mochi's 1s", time.Second, 9 * n, 1 << 62},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := StartBroker(BrokerOptions{ExpiryScan: tc.scan})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				sessions := make([]*transport.Session, n)
				for i := range sessions {
					s, err := transport.Connect(ctx, transport.ClientOptions{ID: fmt.Sprintf("w-%d", i), Broker: "mem://", CleanSession: true}, b)
					if err != nil {
						t.Fatal(err)
					}
					sessions[i] = s
				}
				synctest.Wait()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				time.Sleep(9500 * time.Millisecond)
				synctest.Wait()
				runtime.ReadMemStats(&after)
				for _, s := range sessions {
					s.Close(true)
				}
				if err := b.Close(ctx); err != nil {
					t.Fatal(err)
				}
				allocs := after.Mallocs - before.Mallocs
				if allocs < tc.atLeast || allocs > tc.max {
					t.Errorf("%d allocations over 9.5 idle seconds with %d sessions; want %d to %d", allocs, n, tc.atLeast, tc.max)
				}
			})
		})
	}
}
