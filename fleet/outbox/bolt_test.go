package outbox_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"

	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// openBolt opens a fresh bbolt store in the test's temp dir.
func openBolt(d outbox.Durability) opener {
	return func(t *testing.T, o outbox.Options) outbox.Store {
		t.Helper()
		o.Durability = d
		s, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "outbox.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestBoltContract(t *testing.T) {
	for _, d := range []outbox.Durability{outbox.Sync, outbox.Batch, outbox.None} {
		t.Run(d.String(), func(t *testing.T) { runContract(t, openBolt(d)) })
	}
}

func reopen(t *testing.T, path string, o outbox.Options) *outbox.Bolt {
	t.Helper()
	s, err := outbox.OpenBolt(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBoltReopenKeepsEverythingAndExpiresLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	clk := clock.NewFake(t0)
	o := outbox.Options{Clock: clk, MaxAttempts: 2, LeaseTimeout: time.Hour}
	s := reopen(t, path, o)
	e := &env{t: t, s: s, clk: clk}
	e.enq(msg("a", "a1"), msg("a", "a2"), over("b", "cfg", 3, "b-cfg3"), msg("c", "c1"), msg("d", "d1"))
	ms := e.want(10, "a1", "b-cfg3", "c1", "d1")
	if _, err := s.Nack(ctx, ms[2].ID, time.Minute, "busy"); err != nil { // c1: attempts 1
		t.Fatal(err)
	}
	if _, err := s.Nack(ctx, ms[3].ID, 0, "bad"); err != nil { // d1 dead after
		t.Fatal(err)
	}
	ms = append(ms, e.want(10, "d1")...)
	if res, _ := s.Nack(ctx, ms[4].ID, 0, "bad"); res != outbox.DeadLettered {
		t.Fatalf("d1 second nack = %v", res)
	}
	// a1 and b-cfg3 stay leased (for an hour) across the reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = reopen(t, path, o)
	e.s = s
	st := s.Stats()
	if st.Depth != 4 || st.Leased != 0 || st.DeadLetters != 1 || st.Enqueued != 0 {
		t.Fatalf("Stats after reopen = %+v; want depth 4, nothing leased, 1 dead letter, counters reset", st)
	}
	// The leases died with the process: a1 and b are due at once; c1 still
	// backs off with its attempt remembered.
	got := e.want(10, "a1", "b-cfg3")
	if got[0].ID != ms[0].ID {
		t.Fatalf("a1 came back with id %d, want %d", got[0].ID, ms[0].ID)
	}
	if err := s.Ack(ctx, ms[0].ID); err != nil {
		t.Fatal(err)
	}
	if r := e.enq(over("b", "cfg", 2, "b-cfg2"))[0]; r.Outcome != outbox.Stale {
		t.Fatalf("older overwrite after reopen = %v, want stale (the key index survived)", r.Outcome)
	}
	// b-cfg3 is in flight again, so a newer version is appended.
	if r := e.enq(over("b", "cfg", 4, "b-cfg4"))[0]; r.Outcome != outbox.Appended {
		t.Fatalf("overwrite of in-flight after reopen = %v, want appended", r.Outcome)
	}
	clk.Advance(time.Minute)
	c := e.want(10, "a2", "c1")[1]
	if c.Attempts != 1 || c.LastError != "busy" {
		t.Fatalf("c1 after reopen: attempts %d, last error %q", c.Attempts, c.LastError)
	}
	dl, err := s.DeadLetters(ctx, 0)
	if err != nil || len(dl) != 1 || string(dl[0].Payload) != "d1" || dl[0].Attempts != 2 || dl[0].LastError != "bad" {
		t.Fatalf("dead letters after reopen = %+v, %v", dl, err)
	}
	// New ids keep increasing past the old ones.
	if r := e.enq(msg("z", "z"))[0]; r.ID <= ms[4].ID {
		t.Fatalf("new id %d after reopen, not above %d", r.ID, ms[4].ID)
	}
}

// A message an Overwrite superseded while it was leased comes back
// undelivered when the process that leased it dies: the reopen drops it, as
// Release would, and only the newer version is delivered.
func TestBoltReopenDropsSupersededLeases(t *testing.T) {
	for _, parts := range []int{1, 3} { // 3: the reopen rebuilds the ready index too
		t.Run(fmt.Sprintf("partitions %d", parts), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox.db")
			clk := clock.NewFake(t0)
			o := outbox.Options{Clock: clk, LeaseTimeout: time.Hour}
			s := reopen(t, path, o)
			e := &env{t: t, s: s, clk: clk}
			e.enq(over("a", "cfg", 1, "v1"), over("b", "cfg", 1, "b1"))
			v1 := e.want(10, "v1", "b1")[0]
			if _, err := s.Nack(ctx, v1.ID, 0, "timeout"); err != nil {
				t.Fatal(err)
			}
			e.want(10, "v1")
			e.enq(over("a", "cfg", 2, "v2")) // v1 in flight: appended
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			o.Partitions = parts
			s = reopen(t, path, o)
			if st := s.Stats(); st.Depth != 2 || st.Leased != 0 || st.Overwritten != 0 {
				t.Fatalf("Stats after reopen = %+v; want v2 and b1 queued, counters reset", st)
			}
			var got []outbox.Message
			for p := range parts {
				ms, err := s.Dequeue(ctx, p, 10)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ms...)
			}
			slices.SortFunc(got, func(a, b outbox.Message) int { return strings.Compare(a.Receiver, b.Receiver) })
			if p := payloads(got); !slices.Equal(p, []string{"v2", "b1"}) {
				t.Fatalf("after reopen: %q, want [v2 b1]", p)
			}
			if v2 := got[0]; v2.Attempts != 1 || v2.LastError != "timeout" {
				t.Fatalf("v2: attempts %d last error %q; want v1's 1, timeout", v2.Attempts, v2.LastError)
			}
		})
	}
}

// What a leader parked for offline workers stays parked when its process
// is restarted (the flag is in the record), and a wave due later still
// waits for its time: after the reopen, a Wake releases the parked message
// and only it.
func TestBoltReopenKeepsParking(t *testing.T) {
	for _, parts := range []int{1, 3} { // 3: the reopen rebuilds the ready index too
		t.Run(fmt.Sprintf("partitions %d", parts), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox.db")
			clk := clock.NewFake(t0)
			o := outbox.Options{Clock: clk}
			s := reopen(t, path, o)
			e := &env{t: t, s: s, clk: clk}
			wave := msg("b", "b1")
			wave.SendAt = t0.Add(time.Hour)
			e.enq(msg("a", "a1"), wave)
			e.park(e.want(10, "a1")[0], time.Time{})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			o.Partitions = parts
			e.s = reopen(t, path, o)
			all := func() []string {
				var got []string
				for p := range parts {
					got = append(got, payloads(e.deq(p, 10))...)
				}
				return got
			}
			e.wake("b")
			clk.Advance(time.Hour - time.Nanosecond)
			if got := all(); len(got) != 0 {
				t.Fatalf("before a's wake and b's wave: %q, want nothing", got)
			}
			e.wake("a")
			if got := all(); !slices.Equal(got, []string{"a1"}) {
				t.Fatalf("after a's wake: %q, want [a1]", got)
			}
			clk.Advance(time.Nanosecond)
			if got := all(); !slices.Equal(got, []string{"b1"}) {
				t.Fatalf("at b's wave: %q, want [b1]", got)
			}
		})
	}
}

func TestBoltReopenWithOtherPartitionsRebuildsReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	clk := clock.NewFake(t0)
	s := reopen(t, path, outbox.Options{Clock: clk, Partitions: 3})
	var all []outbox.Message
	for i := range 30 {
		all = append(all, msg(fmt.Sprintf("w-%d", i), fmt.Sprintf("%d-first", i)), msg(fmt.Sprintf("w-%d", i), fmt.Sprintf("%d-second", i)))
	}
	if _, err := s.Enqueue(ctx, all...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dequeue(ctx, 1, 5); err != nil { // some leased at close
		t.Fatal(err)
	}
	s.Close()

	const n = 4
	s = reopen(t, path, outbox.Options{Clock: clk, Partitions: n})
	seen := map[string]bool{}
	for p := range n {
		ms, err := s.Dequeue(ctx, p, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if outbox.PartitionOf(m.Receiver, n) != p {
				t.Fatalf("partition %d returned %s", p, m.Receiver)
			}
			if !strings.HasSuffix(string(m.Payload), "-first") {
				t.Fatalf("partition %d returned %q before its receiver's first message", p, m.Payload)
			}
			seen[m.Receiver] = true
		}
	}
	if len(seen) != 30 {
		t.Fatalf("after repartitioning, %d receivers' heads were found, want 30", len(seen))
	}
}

// The store's depth is counted in the write transaction, and bbolt may roll
// a batch back and rerun it without a failing call: MaxDepth must still
// hold exactly, and Stats must agree with what is stored.
func TestBoltMaxDepthExactUnderGroupCommit(t *testing.T) {
	const max = 37 // not a multiple of the producers, so some batch fails part-way
	s := reopen(t, filepath.Join(t.TempDir(), "outbox.db"),
		outbox.Options{Clock: clock.NewFake(t0), Durability: outbox.Batch, MaxDepth: max})
	var ok, full atomic.Int64
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := range 10 {
				_, err := s.Enqueue(ctx, msg(fmt.Sprintf("r%d", p), fmt.Sprint(i)))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, outbox.ErrFull):
					full.Add(1)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != max || full.Load() != 80-max {
		t.Fatalf("%d enqueued, %d full; want %d and %d", ok.Load(), full.Load(), max, 80-max)
	}
	if st := s.Stats(); st.Depth != max || st.Enqueued != max {
		t.Fatalf("Stats: depth %d enqueued %d, want %d", st.Depth, st.Enqueued, max)
	}
	n := 0
	for ms, _ := s.Dequeue(ctx, 0, 100); len(ms) > 0; ms, _ = s.Dequeue(ctx, 0, 100) {
		for _, m := range ms {
			n++
			if err := s.Ack(ctx, m.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != max {
		t.Fatalf("drained %d messages, want %d", n, max)
	}
}
