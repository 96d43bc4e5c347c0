package leader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// stuckReplies is a Link on which the leader's replies never leave, as on
// a session whose writer is stuck: publishing or sending a reply blocks
// until the test ends (Publish: or until its ctx does). Commands go
// through.
type stuckReplies struct {
	*fakeLink
	release chan struct{}
}

func isReply(topic string, payload []byte) bool {
	env, err := wire.Decode(topic, payload, wire.Down, 0)
	return err == nil && env.Kind == wire.KindReply
}

func (s *stuckReplies) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if isReply(topic, payload) {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.fakeLink.Publish(ctx, topic, qos, retained, payload)
}

func (s *stuckReplies) Send(topic string, qos byte, payload []byte) error {
	if isReply(topic, payload) {
		<-s.release
	}
	return s.fakeLink.Send(topic, qos, payload)
}

// TestReplyFloodNeverBlocksDelivery: the MQTT client delivers every
// worker message on one goroutine, which also reads the PUBACKs every
// publish of the leader waits for. Here the leader's replies cannot leave
// and ten times more requests arrive than its reply queue holds. Handling
// them must not block that goroutine (the test's own, here): the replies
// that do not fit are dropped and counted, and the leader goes on taking
// acks, so its asks complete. A leader that waited for room in the reply
// queue deadlocked here: the replier waited on a publish that only the
// blocked goroutine could complete.
func TestReplyFloodNeverBlocksDelivery(t *testing.T) {
	const queue, flood = 8, 80
	stuck := &stuckReplies{release: make(chan struct{})}
	r := startLeaderWith(t, leader.Config{ReplyQueue: queue, HeartbeatInterval: time.Hour}, nil, nil, outbox.Options{}, func(f *fakeLink) leader.Link {
		stuck.fakeLink = f
		return stuck
	})
	t.Cleanup(func() { close(stuck.release) }) // before the rig stops the leader
	up := r.link.handler(r.tp.AllUp())

	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for i := range flood {
			b, err := wire.Encode(wire.Envelope{ID: fmt.Sprintf("s%d", i), Kind: wire.KindRequest, Body: wire.Body(wire.Request{What: "sync"})})
			if err != nil {
				panic(err)
			}
			up(r.tp.Up("w-00001"), b)
		}
	}()
	fleettest.Receive(t, 10*time.Second, fmt.Sprintf("the leader handling %d requests with room for %d replies", flood, queue), handled, r.seen)
	if s := r.l.Stats(); s.RepliesDroppedFull < flood-queue-1 || s.RequestsReceived != flood {
		t.Fatalf("%d requests received, %d replies dropped for a full queue; want %d and at least %d", s.RequestsReceived, s.RepliesDroppedFull, flood, flood-queue-1)
	}

	// The leader still takes acks: a command is asked and acked.
	if _, err := r.l.Send(context.Background(), "w-00002", wire.KindJob, nil); err != nil {
		t.Fatal(err)
	}
	r.status("w-00002", "online e1") // wakes the relay
	cmd := fleettest.Receive(t, 10*time.Second, "the job", r.link.out, r.seen)
	b, err := wire.Encode(wire.Envelope{Kind: wire.KindAck, Ref: cmd.ID, Result: wire.ResultOK})
	if err != nil {
		t.Fatal(err)
	}
	acked := make(chan struct{})
	go func() {
		defer close(acked)
		up(r.tp.Up("w-00002"), b)
	}()
	fleettest.Receive(t, 10*time.Second, "the ack handled", acked, r.seen)
	fleettest.Eventually(t, 10*time.Second, "the job acked", r.acked(1))
}

// pubackLess is a Link that never gets a PUBACK: Publish waits until its
// ctx ends, while Send hands the message over. It is what the leader's
// session looks like while the client's delivery goroutine, which reads
// the PUBACKs, is busy.
type pubackLess struct{ *fakeLink }

func (p pubackLess) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if topic != (wire.Topics{}).LeaderStatus() {
		<-ctx.Done()
		return ctx.Err()
	}
	return p.fakeLink.Publish(ctx, topic, qos, retained, payload)
}

// TestRepliesDoNotWaitForPuback: replies leave without waiting for the
// broker's PUBACK, so a request is answered while no PUBACK comes.
func TestRepliesDoNotWaitForPuback(t *testing.T) {
	r := startLeaderWith(t, leader.Config{HeartbeatInterval: time.Hour}, nil, nil, outbox.Options{}, func(f *fakeLink) leader.Link {
		return pubackLess{f}
	})
	for range 3 {
		if got := r.request(t); got != wire.ResultOK {
			t.Fatalf("request answered %s", got)
		}
	}
	fleettest.Eventually(t, 10*time.Second, "3 replies counted as sent", func() error {
		s := r.l.Stats()
		return fleettest.Unless(s.RepliesSent == 3 && s.RepliesDroppedFull == 0, "%d replies sent, %d dropped", s.RepliesSent, s.RepliesDroppedFull)
	})
}
