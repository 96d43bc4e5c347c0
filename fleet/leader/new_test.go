package leader_test

import (
	"runtime"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// newDefaultLeader builds a leader with every default (a million heartbeat
// slots among them), as cmd/leader and a scenario's leader restart do.
func newDefaultLeader(tb testing.TB) *leader.Leader {
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	link := &fakeLink{handlers: map[string]func(string, []byte){}, out: make(chan wire.Envelope, 1)}
	l, err := leader.New(leader.Config{Link: link, Store: st})
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestNewIsCheap: building a leader with the default million heartbeat
// slots allocates for what is queued, not for the capacity. Every leader
// start (and a scenario's every leader restart) pays this; it was 140 MB
// and tens to hundreds of milliseconds when the heartbeat mailbox
// allocated its ring up front. Most of what is left is the reply queue's
// 4,096 slots.
func TestNewIsCheap(t *testing.T) {
	newDefaultLeader(t) // warm up: package-level state, the runtime's size classes
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	newDefaultLeader(t)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("leader.New allocated %d bytes, want under 1 MiB", got)
	}
}

// BenchmarkNew is the leader's start cost with the default config.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newDefaultLeader(b)
	}
}
