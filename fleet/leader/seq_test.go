package leader_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// leaderOnFile builds (does not run) a leader on the bbolt outbox at path,
// reading clk. Deploy and Send only enqueue, so no relay is needed.
func leaderOnFile(t *testing.T, path string, clk clock.Clock) (*leader.Leader, *outbox.Bolt) {
	t.Helper()
	st, err := outbox.OpenBolt(path, outbox.Options{Clock: clk, Durability: outbox.Batch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	link := &fakeLink{handlers: map[string]func(string, []byte){}, out: make(chan wire.Envelope, 1)}
	l, err := leader.New(leader.Config{Link: link, Store: st, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return l, st
}

// TestDeployAfterRestartWithClockBehind: a leader restarted from its
// outbox file on a machine whose clock is an hour behind deploys a newer
// version, and it replaces the older one still queued: the sequence
// number comes from the file, not the clock. Numbered by the clock, the
// new deploy was dropped as stale and the workers kept the old version.
func TestDeployAfterRestartWithClockBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	now := time.Unix(1_764_633_600, 0)
	l1, st1 := leaderOnFile(t, path, clock.NewFake(now))
	plan := leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2"}}
	if _, err := l1.Deploy(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	clk2 := clock.NewFake(now.Add(-time.Hour))
	l2, st2 := leaderOnFile(t, path, clk2)
	plan.Version = "2.1.0"
	i, err := l2.Deploy(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	// The first leader saved its deploy's record before answering, so the
	// second numbers its own after it.
	d, ok := l2.Progress(i)
	if i != 1 || !ok {
		t.Fatalf("the second leader's deploy: index %d (kept: %v), want 1: deploy 0 is the first leader's", i, ok)
	}
	w := d.Waves[0]
	if w.StaleDropped != 0 || w.Replaced != 2 {
		t.Fatalf("second deploy: %d stale, %d replaced; want 0 and 2", w.StaleDropped, w.Replaced)
	}
	clk2.Advance(time.Hour) // a replaced update keeps the due time of the one it replaced
	ms, err := st2.Dequeue(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d messages queued, want one per worker", len(ms))
	}
	for _, m := range ms {
		var a wire.Apply
		_ = json.Unmarshal(m.Payload, &a)
		if a.Version != "2.1.0" || m.Key != "firmware" || m.Seq != 2 {
			t.Errorf("%s: queued %s %q seq %d, want 2.1.0 under key firmware with seq 2 (the file's second number)", m.Receiver, a.Version, m.Key, m.Seq)
		}
	}
}

// TestSendKeysEveryCommand: every command Send enqueues has a key of its
// own and a sequence number from the store, so the worker's dedupe
// covers it; the numbers fit the protocol's range.
func TestSendKeysEveryCommand(t *testing.T) {
	l, st := leaderOnFile(t, filepath.Join(t.TempDir(), "outbox.db"), clock.NewFake(time.Unix(1_764_633_600, 0)))
	ctx := context.Background()
	if _, err := l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1"}, Via: []string{"cs-1"}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []wire.Kind{wire.KindJob, wire.KindPing, wire.KindJob} {
		if _, err := l.Send(ctx, "w-1", k, nil); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[string]bool{}
	var got []string
	for {
		ms, err := st.Dequeue(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			if m.Key == "" || m.Seq == 0 || m.Seq > wire.MaxSeq {
				t.Errorf("%s for %s: key %q seq %d; want a key and a seq in 1..2^53-1", m.Kind, m.Receiver, m.Key, m.Seq)
			}
			if m.Kind != string(wire.KindFirmware) && keys[m.Key] {
				t.Errorf("key %q used twice", m.Key)
			}
			keys[m.Key] = true
			got = append(got, m.Key)
			if err := st.Ack(ctx, m.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]bool{"firmware": true, "download/w-1": true, "job/2": true, "ping/3": true, "job/4": true}
	if len(got) != len(want) {
		t.Fatalf("keys %q, want %v", got, want)
	}
	for _, k := range got {
		if !want[k] {
			t.Fatalf("keys %q, want %v", got, want)
		}
	}
}
