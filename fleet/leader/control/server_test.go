package control

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// bus carries Ask's requests to a leader's Server and its
// answers back, in process, as a broker would, with a broker's faults:
// the leader's QoS 1 publishes failing (a client whose in-flight window a
// flood filled: "no message IDs available"), answers dropped.
type bus struct {
	mu        sync.Mutex
	ctl       *Server
	subs      map[string]func(string, []byte) // the requester's
	qos1Fails bool                            // the leader's QoS 1 publishes fail
	drop      int                             // answers to drop, whatever their QoS; -1: all
	qos       []byte                          // the QoS of each answer delivered
}

// The requester's side: an Session.
func (b *bus) Subscribe(_ context.Context, filter string, _ byte, h func(string, []byte)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[filter] = h
	return nil
}

func (b *bus) Publish(_ context.Context, topic string, _ byte, _ bool, p []byte) error {
	b.ctl.Handle(topic, bytes.Clone(p))
	return nil
}

// leaderSide is the leader's side of a bus: a leader.Link.
type leaderSide struct{ b *bus }

func (l leaderSide) Publish(_ context.Context, topic string, qos byte, _ bool, p []byte) error {
	if qos == 1 && l.b.failQoS1() {
		return errors.New("no message IDs available")
	}
	l.b.deliver(topic, qos, p)
	return nil
}

func (l leaderSide) Send(topic string, qos byte, p []byte) error {
	l.b.deliver(topic, qos, p)
	return nil
}

func (leaderSide) Subscribe(context.Context, string, byte, func(string, []byte)) error { return nil }

func (b *bus) failQoS1() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.qos1Fails
}

func (b *bus) deliver(topic string, qos byte, p []byte) {
	b.mu.Lock()
	h := b.subs[topic]
	switch {
	case b.drop < 0:
		h = nil
	case b.drop > 0:
		b.drop--
		h = nil
	}
	if h != nil {
		b.qos = append(b.qos, qos)
	}
	b.mu.Unlock()
	if h != nil {
		h(topic, p)
	}
}

// busRig is a leader's Server on a bus, on a memory outbox.
type busRig struct {
	b   *bus
	l   *leader.Leader
	ctl *Server
}

// startBus starts a Server over a bus set up by setup; it stops when the
// test does. Run it inside a synctest bubble: ask's waits take no time.
func startBus(t *testing.T, setup func(*bus)) busRig {
	t.Helper()
	b := &bus{subs: map[string]func(string, []byte){}}
	setup(b)
	st, err := outbox.NewMemory(outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := leader.New(leader.Config{Link: leaderSide{b}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	b.ctl = NewServer(l, leaderSide{b}, wire.Topics{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { b.ctl.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = st.Close()
	})
	return busRig{b: b, l: l, ctl: b.ctl}
}

// ask asks the rig's leader as 'leader deploy' does, within timeout.
func (r busRig) ask(req Request, timeout time.Duration) (Answer, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return Ask(ctx, r.b, wire.Topics{}, req)
}

// TestDeployAnswerWithoutPacketIDs: a leader whose client has no QoS 1
// packet id left (a telemetry flood filled its window) still answers: at
// QoS 0, which needs none. It used to log "deploy answer not published"
// while the deploy went out, and 'leader deploy' said nothing was
// deployed.
func TestDeployAnswerWithoutPacketIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(b *bus) { b.qos1Fails = true })
		ans, copies, err := r.ask(Request{ID: "d1", Version: "2.0.0", Workers: []string{"w-1", "w-2"}}, 60*time.Second)
		if err != nil || !ans.OK || ans.Targets != 2 || copies != 1 {
			t.Fatalf("answer %+v after %d copies, %v; want the deploy's, to the first copy", ans, copies, err)
		}
		if got := r.b.qos; len(got) != 1 || got[0] != 0 {
			t.Errorf("answers delivered at QoS %v, want one at QoS 0", got)
		}
		if n := r.ctl.Counts().AnsweredQoS0; n != 1 {
			t.Errorf("answers counted at QoS 0: %d, want 1", n)
		}
	})
}

// TestDeployAskedAgain: the leader's answers are lost (the broker drops
// them); 'leader deploy' sends its request again and the leader, which
// starts one deploy per request id, answers the third copy with the
// deploy the first one started. One deploy, however many copies.
func TestDeployAskedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(b *bus) { b.drop = 2 })
		ans, copies, err := r.ask(Request{ID: "d1", Version: "2.0.0", Workers: []string{"w-1"}}, 60*time.Second)
		if err != nil || !ans.OK || !ans.Again || ans.Deploy != 0 || copies != 3 {
			t.Fatalf("answer %+v after %d copies, %v; want deploy 0, answered again to the third copy", ans, copies, err)
		}
		if ds := r.l.Deploys(); len(ds) != 1 || ds[0].Request != "d1" {
			t.Fatalf("deploys %+v; want one, for request d1", ds)
		}
		c := r.ctl.Counts()
		if c.Started != 1 || c.Repeated != 2 {
			t.Errorf("started %d, repeated %d; want 1 and 2", c.Started, c.Repeated)
		}
		// An id that started a deploy cannot start another one.
		ans, _, err = r.ask(Request{ID: "d1", Version: "3.0.0", Workers: []string{"w-1"}}, 60*time.Second)
		if err != nil || ans.OK || !strings.Contains(ans.Error, "id: request d1 started deploy 0 of firmware 2.0.0 before") {
			t.Fatalf("another deploy under id d1: %+v, %v; want it refused", ans, err)
		}
	})
}

// TestNoAnswer: when no answer comes (the broker drops every one), Ask
// keeps asking, after 2 s, 4 s, then every 8 s, and says there was none:
// the outcome is unknown, not a refusal.
func TestNoAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(b *bus) { b.drop = -1 })
		ans, copies, err := r.ask(Request{ID: "d1", Version: "2.0.0", Workers: []string{"w-1"}}, time.Minute)
		if !errors.Is(err, ErrNoAnswer) || ans.OK || copies != 9 {
			t.Fatalf("answer %+v after %d copies, %v; want ErrNoAnswer after 9 copies in a minute", ans, copies, err)
		}
		if ds := r.l.Deploys(); len(ds) != 1 {
			t.Errorf("deploys %+v; want the one the copies started once", ds)
		}
	})
}

// TestCancelRequest: a cancel request withdraws the deploy's queued
// updates and says how many; asked again it finds the deploy cancelled;
// a deploy the leader does not keep is refused with the reason.
func TestCancelRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(*bus) {})
		if ans, _, err := r.ask(Request{ID: "d1", Version: "2.0.0", Workers: []string{"w-1", "w-2", "w-3"}, WaveSize: 1, WaveIntervalMs: 60_000}, time.Minute); err != nil || !ans.OK {
			t.Fatalf("deploy: %+v, %v", ans, err)
		}
		zero, seven := 0, 7
		ans, _, err := r.ask(Request{ID: "c1", Cancel: &zero}, time.Minute)
		if err != nil || !ans.OK || ans.Deploy != 0 || ans.Withdrawn+ans.InFlight != 3 || ans.Again {
			t.Fatalf("cancel: %+v, %v; want deploy 0's 3 updates withdrawn or in flight", ans, err)
		}
		if d, _ := r.l.Progress(0); !d.Cancelled {
			t.Errorf("deploy 0 not marked cancelled: %+v", d)
		}
		if ans, _, err := r.ask(Request{ID: "c2", Cancel: &seven}, time.Minute); err != nil || ans.OK || !strings.Contains(ans.Error, "cancel deploy 7: leader: no such deploy") {
			t.Fatalf("cancel of deploy 7: %+v, %v; want it refused as unknown", ans, err)
		}
		if n := r.ctl.Counts().Cancelled; n != 1 {
			t.Errorf("cancelled %d, want 1", n)
		}
	})
}
