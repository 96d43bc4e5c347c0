package worker

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// A command the mailbox takes and the worker serves at once costs its
// message loop no allocation: nothing of it goes to the heap but what
// is kept (a command served later, an error's details).
func TestCommandServedAtOnceAllocatesNothing(t *testing.T) {
	w, err := New(Config{ID: "w1", Service: dist.Const(time.Nanosecond), Mailbox: mailbox.Options{Capacity: 16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := wire.Envelope{V: wire.Version, ID: "m1", Kind: wire.KindPing, Attempt: 1}
	allocs := testing.AllocsPerRun(100, func() { w.onCommand(env) })
	if allocs != 0 {
		t.Fatalf("onCommand of a ping: %v allocations, want 0", allocs)
	}
	if s := w.Stats(); s.AckedOK < 100 {
		t.Fatalf("stats %+v: want every ping acked ok", s)
	}
}
