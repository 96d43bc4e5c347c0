package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// sent is a command the leader published, and to whom.
type sent struct {
	worker string
	env    wire.Envelope
}

// sentLink hands the test each command with its worker.
type sentLink struct {
	*fakeLink
	sent chan sent
}

func (s *sentLink) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	env, err := wire.Decode(topic, payload, wire.Down, 0)
	if err != nil {
		return nil // the leader's own status
	}
	worker, _, _ := (wire.Topics{}).Parse(topic)
	s.sent <- sent{worker, env}
	return nil
}

// startTracked starts a leader over a sentLink, on a memory store with
// so, that reconciles its deploys every minute of its fake clock.
func startTracked(t *testing.T, cfg leader.Config, so outbox.Options) (*rig, chan sent) {
	t.Helper()
	ch := make(chan sent, 16)
	cfg.HeartbeatInterval = time.Hour
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = time.Minute
	}
	r := startLeaderWith(t, cfg, nil, nil, so, func(f *fakeLink) leader.Link { return &sentLink{f, ch} })
	return r, ch
}

// answer waits for the next command, checks it went to worker, and
// answers it as the worker would.
func (r *rig) answer(t *testing.T, cmds chan sent, worker string, ack wire.Envelope) {
	t.Helper()
	c := fleettest.Receive(t, 10*time.Second, "a command for "+worker, cmds, r.seen)
	if c.worker != worker {
		t.Fatalf("command %s went to %s, want %s", c.env.ID, c.worker, worker)
	}
	ack.Kind, ack.Ref = wire.KindAck, c.env.ID
	b, err := wire.Encode(ack)
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up(worker), b)
}

// answerReconnected answers worker's commands as a worker that has just
// reconnected would, until done holds. A copy published to its previous
// connection may still be queued in cmds: its ack can arrive before the
// leader resends the command on the new connection, and then answers
// nothing (the ask it named has ended). The resend comes next and is
// answered in turn.
func (r *rig) answerReconnected(t *testing.T, cmds chan sent, worker string, ack wire.Envelope, what string, done func() error) {
	t.Helper()
	r.answer(t, cmds, worker, ack)
	deadline := time.Now().Add(10 * time.Second)
	for done() != nil {
		select {
		case c := <-cmds:
			if c.worker != worker {
				t.Fatalf("command %s went to %s, want %s", c.env.ID, c.worker, worker)
			}
			a := ack
			a.Kind, a.Ref = wire.KindAck, c.env.ID
			b, err := wire.Encode(a)
			if err != nil {
				t.Fatal(err)
			}
			r.link.handler(r.tp.AllUp())(r.tp.Up(worker), b)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s: %v", what, done())
		}
	}
}

// answerEach answers the next len(acks) commands, whatever their order,
// each with the ack its worker gives in acks.
func (r *rig) answerEach(t *testing.T, cmds chan sent, acks map[string]wire.Envelope) {
	t.Helper()
	for range acks {
		c := fleettest.Receive(t, 10*time.Second, fmt.Sprintf("commands for %d workers", len(acks)), cmds, r.seen)
		ack, ok := acks[c.worker]
		if !ok {
			t.Fatalf("command %s went to %s", c.env.ID, c.worker)
		}
		ack.Kind, ack.Ref = wire.KindAck, c.env.ID
		b, err := wire.Encode(ack)
		if err != nil {
			t.Fatal(err)
		}
		r.link.handler(r.tp.AllUp())(r.tp.Up(c.worker), b)
	}
}

// wave renders a wave's counts.
func wave(w leader.WaveProgress) string {
	return fmt.Sprintf("targets %d: delivered %d, full %d, rejected %d, superseded %d, expired %d, dead-lettered %d, pending %d",
		w.Targets, w.Delivered, w.Full, w.Rejected, w.Superseded, w.Expired, w.DeadLettered, w.Pending)
}

// progress is a check that deploy index's one wave reads want.
func (r *rig) progress(index int, want string) func() error {
	return func() error {
		p, ok := r.l.Progress(index)
		if !ok {
			return fmt.Errorf("the leader does not keep deploy %d; it keeps %d deploys", index, len(r.l.Deploys()))
		}
		got := wave(p.Waves[0])
		return fleettest.Unless(got == want, "deploy %d: %s; %s", index, got, r.seen())
	}
}

// TestDeployTrackerForgetsFinished: a deploy's four updates end four ways
// — acked, superseded by a later deploy, dead-lettered out of attempts,
// expired — and the leader counts each where it belongs and then forgets
// it: once nothing is queued it tracks no update and no worker. The last
// three end inside the outbox, with no ack or refusal the leader sees;
// a leader that kept an update until it saw one kept them for ever.
func TestDeployTrackerForgetsFinished(t *testing.T) {
	r, cmds := startTracked(t, leader.Config{}, outbox.Options{MaxAttempts: 1})
	ctx := context.Background()
	for w, epoch := range map[string]string{"w-1": "a", "w-2": "b", "w-3": "c", "w-4": "d"} {
		r.status(w, "offline "+epoch)
	}
	if _, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2", "w-3", "w-4"}, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if n, w := r.l.TrackedUpdates(); n != 4 || w != 4 {
		t.Fatalf("tracking %d updates for %d workers, want 4 for 4", n, w)
	}
	// w-1 and w-4 come online: each one's online wakes its partition,
	// whose relay sends their updates and parks w-2's and w-3's.
	r.status("w-1", "online a2")
	r.status("w-4", "online d2")
	r.answerEach(t, cmds, map[string]wire.Envelope{
		"w-1": {Result: wire.ResultOK},
		"w-4": {Result: wire.ResultFull, RetryAfterMs: 1000}, // its one attempt
	})
	fleettest.Eventually(t, 10*time.Second, "w-1's acked, w-4's dead-lettered", func() error {
		s := r.st.Stats()
		return fleettest.Unless(s.Acked == 1 && s.DeadLetters == 1 && s.Leased == 0, "outbox %+v", s)
	})

	// w-3's update is still queued: a new deploy replaces it in place.
	if i, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "3.0.0", Workers: []string{"w-3"}}); err != nil || i != 1 {
		t.Fatalf("second deploy: index %d, %v", i, err)
	}
	fleettest.Eventually(t, time.Second, "the replaced update counted at once", r.progress(0,
		"targets 4: delivered 1, full 1, rejected 0, superseded 1, expired 0, dead-lettered 0, pending 2"))

	// Past the TTL: the progress tick finds w-4's in the dead letters;
	// w-2's is dropped once its worker is back and the relay meets it.
	fleettest.Advance(t, r.clk, 2*time.Minute, "the progress tick")
	r.status("w-2", "online b2")
	fleettest.Eventually(t, 10*time.Second, "w-2's expired", func() error {
		return fleettest.Unless(r.st.Stats().Expired == 1, "outbox %+v", r.st.Stats())
	})
	r.status("w-3", "online c2")
	r.answer(t, cmds, "w-3", wire.Envelope{Result: wire.ResultOK})
	fleettest.Eventually(t, 10*time.Second, "the second deploy delivered", r.progress(1,
		"targets 1: delivered 1, full 0, rejected 0, superseded 0, expired 0, dead-lettered 0, pending 0"))
	fleettest.Advance(t, r.clk, time.Minute, "the progress tick")
	fleettest.Eventually(t, 10*time.Second, "every fate counted", r.progress(0,
		"targets 4: delivered 1, full 1, rejected 0, superseded 1, expired 1, dead-lettered 1, pending 0"))
	if n, w := r.l.TrackedUpdates(); n != 0 || w != 0 {
		t.Fatalf("nothing queued, yet the leader tracks %d updates for %d workers", n, w)
	}
}

// TestDeployTrackerForgetsOvertaken: an update in flight when a later
// deploy queues its own behind it, and then refused "full", is dropped by
// the outbox; the leader counts it superseded and forgets it.
func TestDeployTrackerForgetsOvertaken(t *testing.T) {
	r, cmds := startTracked(t, leader.Config{}, outbox.Options{})
	ctx := context.Background()
	r.status("w-1", "online a")
	if _, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1"}}); err != nil {
		t.Fatal(err)
	}
	r.status("w-1", "offline a") // and back: its online wakes its partition
	r.status("w-1", "online a1")
	c := fleettest.Receive(t, 10*time.Second, "the first update", cmds, r.seen)
	if _, err := r.l.Deploy(ctx, leader.DeployPlan{Version: "3.0.0", Workers: []string{"w-1"}}); err != nil {
		t.Fatal(err)
	}
	b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: c.env.ID, Result: wire.ResultFull, RetryAfterMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.link.handler(r.tp.AllUp())(r.tp.Up("w-1"), b)
	fleettest.Eventually(t, 10*time.Second, "the first update dropped", func() error {
		return fleettest.Unless(r.st.Stats().Overwritten == 1, "outbox %+v", r.st.Stats())
	})
	fleettest.Advance(t, r.clk, time.Minute, "the progress tick")
	fleettest.Eventually(t, 10*time.Second, "the first deploy superseded", r.progress(0,
		"targets 1: delivered 0, full 1, rejected 0, superseded 1, expired 0, dead-lettered 0, pending 0"))
	// w-1 reconnects: its online wakes its partition, whose relay sends
	// the newer version.
	r.status("w-1", "offline a1")
	r.status("w-1", "online a2")
	r.answerReconnected(t, cmds, "w-1", wire.Envelope{Result: wire.ResultOK}, "the second deploy delivered", r.progress(1,
		"targets 1: delivered 1, full 0, rejected 0, superseded 0, expired 0, dead-lettered 0, pending 0"))
	if n, w := r.l.TrackedUpdates(); n != 0 || w != 0 {
		t.Fatalf("nothing queued, yet the leader tracks %d updates for %d workers", n, w)
	}
}

// TestDeployHistory: the leader keeps its newest DeployHistory deploys,
// and older ones only while they have updates queued; its outbox holds
// the records of those it keeps.
func TestDeployHistory(t *testing.T) {
	r, _ := startTracked(t, leader.Config{DeployHistory: 3}, outbox.Options{})
	ctx := context.Background()
	r.status("w-1", "offline a") // nothing is delivered: each deploy replaces the last
	for i := range 6 {
		workers := []string{"w-1"}
		if i == 0 {
			workers = append(workers, "w-2") // stays queued: deploy 0 is kept
		}
		if got, err := r.l.Deploy(ctx, leader.DeployPlan{Version: fmt.Sprintf("2.0.%d", i), Workers: workers}); err != nil || got != i {
			t.Fatalf("deploy %d: index %d, %v", i, got, err)
		}
	}
	var kept []int
	for _, d := range r.l.Deploys() {
		kept = append(kept, d.Index)
	}
	if fmt.Sprint(kept) != "[0 3 4 5]" {
		t.Fatalf("the leader keeps deploys %v, want [0 3 4 5]: the newest 3, and 0 with an update queued", kept)
	}
	if _, ok := r.l.Progress(1); ok {
		t.Fatal("Progress(1) found a deploy the leader forgot")
	}
	fleettest.Advance(t, r.clk, time.Minute, "the progress tick")
	fleettest.Eventually(t, 10*time.Second, "the kept deploys' records", func() error {
		rs, err := r.st.ListRecords(ctx, "")
		if err != nil {
			return err
		}
		var keys []string
		for _, rec := range rs {
			keys = append(keys, rec.Key)
		}
		return fleettest.Unless(len(keys) == 4, "records %v", keys)
	})
}

// TestReplayedDeadLetterCountsDelivered: an update that went to the dead
// letters and, replayed, is delivered counts as delivered in its deploy's
// wave, no longer as a dead letter: by the leader that saw it dead, and by
// a leader started on the outbox after the replay (an operator replays
// with leader dlq replay while the leader is stopped).
func TestReplayedDeadLetterCountsDelivered(t *testing.T) {
	const dead = "targets 2: delivered 1, full 1, rejected 0, superseded 0, expired 0, dead-lettered 1, pending 0"
	const replayed = "targets 2: delivered 2, full 1, rejected 0, superseded 0, expired 0, dead-lettered 0, pending 0"
	deploy := func(t *testing.T, r *rig, cmds chan sent) {
		t.Helper()
		// Away while the deploy is queued; back, each wakes its update.
		r.status("w-1", "offline a")
		r.status("w-2", "offline b")
		if _, err := r.l.Deploy(context.Background(), leader.DeployPlan{Version: "2.0.0", Workers: []string{"w-1", "w-2"}}); err != nil {
			t.Fatal(err)
		}
		r.status("w-1", "online a2")
		r.status("w-2", "online b2")
		r.answerEach(t, cmds, map[string]wire.Envelope{
			"w-1": {Result: wire.ResultOK},
			"w-2": {Result: wire.ResultFull, RetryAfterMs: 1000}, // its one attempt: a dead letter
		})
		fleettest.Eventually(t, 10*time.Second, "w-2's update in the dead letters", func() error {
			s := r.st.Stats()
			return fleettest.Unless(s.DeadLetters == 1 && s.Leased == 0, "outbox %+v", s)
		})
		fleettest.Advance(t, r.clk, time.Minute, "the progress tick")
		fleettest.Eventually(t, 10*time.Second, "w-2's update counted a dead letter", r.progress(0, dead))
	}
	t.Run("same leader", func(t *testing.T) {
		r, cmds := startTracked(t, leader.Config{}, outbox.Options{MaxAttempts: 1})
		deploy(t, r, cmds)
		if n, err := r.st.Replay(context.Background()); err != nil || n != 1 {
			t.Fatalf("replay: %d, %v; want 1", n, err)
		}
		r.partitionPoker("w-2")()
		r.answer(t, cmds, "w-2", wire.Envelope{Result: wire.ResultOK})
		fleettest.Eventually(t, 10*time.Second, "the replayed update counted delivered", r.progress(0, replayed))
	})
	t.Run("after a restart", func(t *testing.T) {
		clk := clock.NewFake(time.Unix(1_700_000_000, 0))
		mem, err := outbox.NewMemory(outbox.Options{Clock: clk, MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		first := startOnStore(t, clk, mem)
		first.st = mem
		deploy(t, first.rig, first.sent)
		first.stop(t) // a clean stop saves the progress
		if n, err := mem.Replay(context.Background()); err != nil || n != 1 {
			t.Fatalf("replay: %d, %v; want 1", n, err)
		}
		second := startOnStore(t, clk, mem)
		second.status("w-2", "online b3")
		second.answer(t, second.sent, "w-2", wire.Envelope{Result: wire.ResultOK})
		fleettest.Eventually(t, 10*time.Second, "the replayed update counted delivered by the next leader", second.progress(0, replayed))
	})
}
