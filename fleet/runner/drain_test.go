package runner

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
)

// TestDrainWaitsForSyncRetries: workers refused a sync by a small, slow
// leader back off before asking again, with nothing of theirs in any
// queue meanwhile. The drain must wait for their retries, or the run ends
// with syncs never answered.
func TestDrainWaitsForSyncRetries(t *testing.T) {
	const n = 30
	sc := rtFleet(n, 1)
	sc.Leader.Mailbox.Capacity = 3
	sc.Leader.Service = rtPtr(dist.Const(100 * time.Millisecond))
	rep := rtRun(t, sc)
	defer rtDump(t, rep)
	w := rep.Result.Workers
	if w.SyncFull == 0 {
		t.Fatalf("no sync was refused (sent %d): the test proves nothing", w.SyncSent)
	}
	if w.SyncOK != n {
		t.Errorf("%d of %d workers' syncs answered ok at the end (%d refused, %d sent): the drain ended while workers were backing off", w.SyncOK, n, w.SyncFull, w.SyncSent)
	}
}
