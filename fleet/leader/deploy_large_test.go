package leader_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// recordLog is a store that counts what goes into its records, and
// refuses every write that holds a key starting with refuse ("": none).
type recordLog struct {
	outbox.Store
	refuse string

	mu       sync.Mutex
	calls    int // PutRecords calls that wrote
	refused  int // PutRecords calls refused
	records  int // records written
	bytes    int // bytes written
	maxValue int // the largest value written
}

func (r *recordLog) PutRecords(ctx context.Context, rs ...outbox.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range rs {
		if r.refuse != "" && strings.HasPrefix(rec.Key, r.refuse) {
			r.refused++
			return errors.New("disk refuses it")
		}
	}
	if err := r.Store.PutRecords(ctx, rs...); err != nil {
		return err
	}
	r.calls++
	for _, rec := range rs {
		r.records++
		r.bytes += len(rec.Value)
		r.maxValue = max(r.maxValue, len(rec.Value))
	}
	return nil
}

// writes returns the PutRecords calls that wrote, so far.
func (r *recordLog) writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// take returns the counts so far and starts them again.
func (r *recordLog) take() (calls, records, bytes, maxValue, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, records, bytes, maxValue, refused = r.calls, r.records, r.bytes, r.maxValue, r.refused
	r.calls, r.records, r.bytes, r.maxValue, r.refused = 0, 0, 0, 0, 0
	return
}

func workerIDs(n int) []string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("w-%05d", i)
	}
	return ws
}

// TestLargeDeployIsSavedInParts: a deploy of 80,000 workers in waves of
// one is 80,000 waves, about 18 MB as one record, which the outbox
// refuses (16 MiB at most): the deploy's progress went unsaved every
// second, and with it every later deploy's, which shared its write. Its
// record is in parts of far less now; a later deploy's progress is saved
// and survives a restart with it; a save rewrites only the part that
// changed, and nothing while nothing does; and the stats message sums
// each deploy instead of carrying every wave.
func TestLargeDeployIsSavedInParts(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	st := &recordLog{Store: mem}
	ctx := context.Background()
	first := startOnStore(t, clk, st)
	first.status("w-b", "offline x") // deploy 1's update waits, parked
	first.status("w-00000", "offline y")

	big := leader.DeployPlan{Version: "2.0.0", Workers: workerIDs(80_000), WaveSize: 1, WaveInterval: time.Hour}
	if i, err := first.l.Deploy(ctx, big); err != nil || i != 0 {
		t.Fatalf("the large deploy: index %d, %v", i, err)
	}
	calls, records, bytes, maxValue, _ := st.take()
	if calls != 1 || records != 79 || maxValue > 512<<10 {
		t.Fatalf("the large deploy's record: %d writes of %d records, %d bytes, the largest %d; want one write of 79 parts, none over 512 KiB",
			calls, records, bytes, maxValue)
	}
	if _, err := first.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-b"}}); err != nil {
		t.Fatalf("the small deploy: %v", err)
	}
	first.status("w-00000", "online y2") // wakes wave 0 of the large deploy
	first.answer(t, first.sent, "w-00000", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "w-00000 acked", first.acked(1))
	st.take()

	fleettest.Advance(t, clk, time.Minute, "the progress tick")
	fleettest.Eventually(t, 10*time.Second, "the changed part saved", func() error {
		d, _ := first.l.Progress(0)
		return fleettest.Unless(st.writes() == 1 && d.Delivered() == 1, "%d writes, %d delivered", st.writes(), d.Delivered())
	})
	if calls, records, _, maxValue, _ := st.take(); calls != 1 || records != 1 || maxValue > 512<<10 {
		t.Fatalf("one ack saved as %d writes of %d records, the largest %d bytes; want the one part that changed", calls, records, maxValue)
	}
	for range 3 { // each tick handled before the next: a fake ticker keeps one
		done := first.l.ProgressRounds()
		fleettest.Advance(t, clk, time.Minute, "the progress tick")
		fleettest.Eventually(t, 10*time.Second, "the progress tick handled", func() error {
			return fleettest.Unless(first.l.ProgressRounds() > done, "%d rounds", first.l.ProgressRounds())
		})
	}
	if calls, records, _, _, _ := st.take(); calls != 0 {
		t.Fatalf("an idle leader saved %d times (%d records) in three progress ticks; want none", calls, records)
	}
	first.status("w-b", "online x2")
	first.answer(t, first.sent, "w-b", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "w-b acked", first.acked(2))
	if calls, records, _, _, _ := st.take(); calls != 0 {
		t.Fatalf("an ack saved %d times (%d records) before the next progress tick; want saves on the tick only", calls, records)
	}

	rep, err := json.Marshal(first.l.StatsReport())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) > 16<<10 {
		t.Fatalf("the stats message is %d bytes with the large deploy; want its waves summed, under 16 KiB", len(rep))
	}
	first.stop(t) // saves deploy 1's delivery

	second := startOnStore(t, clk, st)
	ds := second.l.Deploys()
	if len(ds) != 2 || len(ds[0].Waves) != 80_000 || ds[0].Delivered() != 1 || ds[0].Pending() != 79_999 || ds[1].Delivered() != 1 || ds[1].Pending() != 0 {
		var got []string
		for _, d := range ds {
			got = append(got, fmt.Sprintf("deploy %d: %d waves, %d delivered, %d pending", d.Index, len(d.Waves), d.Delivered(), d.Pending()))
		}
		t.Fatalf("after a restart: %v; want deploy 0 in 80,000 waves with 1 delivered, 79,999 pending, and deploy 1 delivered", got)
	}
}

// TestDeploySaveFailureIsolated: a deploy whose record the outbox
// refuses does not keep the others' progress from being saved, and is
// tried again less and less often, not encoded again every second.
func TestDeploySaveFailureIsolated(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	st := &recordLog{Store: mem, refuse: "leader/deploy/0000000000"}
	ch := make(chan sent, 8)
	r := runLeaderWith(t, leader.Config{ProgressEvery: time.Second}, clk, clk, st, func(f *fakeLink) leader.Link { return &sentLink{f, ch} })
	ctx := context.Background()
	r.status("w-a", "offline a")
	r.status("w-b", "offline b")
	if _, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-a"}}); err == nil || !strings.Contains(err.Error(), "its record was not saved") {
		t.Fatalf("deploy 0, whose record is refused: %v; want it queued and said unsaved", err)
	}
	if _, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-b"}}); err != nil {
		t.Fatalf("deploy 1: %v", err)
	}
	r.status("w-b", "online b2")
	r.answer(t, ch, "w-b", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "w-b acked", r.acked(1))
	st.take()
	for range 60 {
		fleettest.Advance(t, clk, time.Second, "the progress tick")
	}
	r.stop()
	if _, _, _, _, refused := st.take(); refused > 10 {
		t.Errorf("deploy 0's record refused %d times in 60 one-second ticks (and once at the stop); want a backoff", refused)
	}
	second := runLeader(t, leader.Config{}, clk, clk, mem)
	if d, ok := second.l.Progress(1); !ok || d.Delivered() != 1 {
		t.Fatalf("after a restart, deploy 1: %+v (kept %v); want its delivery saved beside deploy 0's refusals", d, ok)
	}
}

// TestDeployRecordVersion1Loads: a deploy saved as one record, before
// records came in parts, is read (its counts, its queued update looked up
// in the outbox) and written again in parts at the next save.
func TestDeployRecordVersion1Loads(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	mem, err := outbox.NewMemory(outbox.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rs, err := mem.Enqueue(ctx, outbox.Message{Receiver: "w-2", Kind: "firmware", Key: "firmware", Seq: 5, Conflict: outbox.Overwrite, Payload: wire.Body(wire.Apply{Version: "2.0.0"})})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := json.Marshal([]byte{byte(rs[0].ID)}) // one varint delta, base64 in JSON
	v1 := fmt.Sprintf(`{"v":1,"index":0,"version":"2.0.0","kind":"firmware","targets":2,"seq":5,"waves":[`+
		`{"Targets":1,"Delivered":1,"Start":"2023-11-14T22:13:20Z"},{"Targets":1,"Start":"2023-11-14T22:13:20Z","ids":%s}]}`, ids)
	if err := mem.PutRecords(ctx, outbox.Record{Key: "leader/deploy/0000000000", Value: []byte(v1)}); err != nil {
		t.Fatal(err)
	}
	r := runLeader(t, leader.Config{}, clk, clk, mem)
	d, ok := r.l.Progress(0)
	if !ok || d.Delivered() != 1 || d.Pending() != 1 || len(d.Waves) != 2 || d.Waves[1].Pending != 1 {
		t.Fatalf("a version 1 record reads %+v (kept %v); want 2 waves, 1 delivered, wave 1's update pending", d, ok)
	}
	r.stop() // saves
	b, err := mem.GetRecord(ctx, "leader/deploy/0000000000")
	if err != nil || !strings.Contains(string(b), `"v":2`) || !strings.Contains(string(b), `"wave_size":1`) {
		t.Fatalf("after a save the record is %s, %v; want it written again as version 2", b, err)
	}
}

// TestDeployRefusesPlans: Deploy refuses a version the workers would
// refuse to install (they answer reject, and every update would go to
// the dead letters), and more waves than it can count, before it queues
// anything.
func TestDeployRefusesPlans(t *testing.T) {
	r := startLeader(t, leader.Config{})
	for _, tc := range []struct {
		name string
		plan leader.DeployPlan
		want string
	}{
		{"version -1", leader.DeployPlan{Version: "-1", Workers: []string{"w-0003"}}, `version "-1": starts with '-'`},
		{"version with a space", leader.DeployPlan{Version: "2 0", Workers: []string{"w-0003"}}, `character ' ' not allowed`},
		{"too many waves", leader.DeployPlan{Version: "2.0.0", Workers: workerIDs(leader.MaxWaves + 1), WaveSize: 1},
			"100001 targets in waves of 1 make 100001 waves, at most 100000: want a wave size of at least 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.l.Deploy(context.Background(), tc.plan)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if d := r.l.Stats().Outbox.Depth; d != 0 {
				t.Fatalf("%d updates queued by a refused deploy", d)
			}
		})
	}
}
