package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// bus carries 'leader deploy”s requests to a leader's control and its
// answers back, in process, as a broker would, with a broker's faults:
// the leader's QoS 1 publishes failing (a client whose in-flight window a
// flood filled: "no message IDs available"), answers dropped.
type bus struct {
	mu        sync.Mutex
	ctl       *control
	subs      map[string]func(string, []byte) // the requester's
	qos1Fails bool                            // the leader's QoS 1 publishes fail
	drop      int                             // answers to drop, whatever their QoS; -1: all
	qos       []byte                          // the QoS of each answer delivered
}

// The requester's side: an askSession.
func (b *bus) Subscribe(_ context.Context, filter string, _ byte, h func(string, []byte)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[filter] = h
	return nil
}

func (b *bus) Publish(_ context.Context, topic string, _ byte, _ bool, p []byte) error {
	b.ctl.onRequest(topic, bytes.Clone(p))
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

// busRig is a leader's control on a bus, on a memory outbox.
type busRig struct {
	b   *bus
	l   *leader.Leader
	ctl *control
}

// startBus starts a control over a bus set up by setup; it stops when the
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
	b.ctl = &control{l: l, link: leaderSide{b}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.ctl.start(ctx, &wg)
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = st.Close()
	})
	return busRig{b: b, l: l, ctl: b.ctl}
}

// ask asks the rig's leader as 'leader deploy' would, within timeout.
func (r busRig) ask(req deployRequest, timeout time.Duration) (deployAnswer, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return ask(ctx, r.b, wire.Topics{}, req)
}

// TestDeployAnswerWithoutPacketIDs: a leader whose client has no QoS 1
// packet id left (a telemetry flood filled its window) still answers: at
// QoS 0, which needs none. It used to log "deploy answer not published"
// while the deploy went out, and 'leader deploy' said nothing was
// deployed.
func TestDeployAnswerWithoutPacketIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(b *bus) { b.qos1Fails = true })
		ans, copies, err := r.ask(deployRequest{ID: "d1", Version: "2.0.0", Workers: []string{"w-1", "w-2"}}, 60*time.Second)
		if err != nil || !ans.OK || ans.Targets != 2 || copies != 1 {
			t.Fatalf("answer %+v after %d copies, %v; want the deploy's, to the first copy", ans, copies, err)
		}
		if got := r.b.qos; len(got) != 1 || got[0] != 0 {
			t.Errorf("answers delivered at QoS %v, want one at QoS 0", got)
		}
		if n := r.ctl.counts.answeredQoS0.Load(); n != 1 {
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
		ans, copies, err := r.ask(deployRequest{ID: "d1", Version: "2.0.0", Workers: []string{"w-1"}}, 60*time.Second)
		if err != nil || !ans.OK || !ans.Again || ans.Deploy != 0 || copies != 3 {
			t.Fatalf("answer %+v after %d copies, %v; want deploy 0, answered again to the third copy", ans, copies, err)
		}
		if ds := r.l.Deploys(); len(ds) != 1 || ds[0].Request != "d1" {
			t.Fatalf("deploys %+v; want one, for request d1", ds)
		}
		c := &r.ctl.counts
		if c.started.Load() != 1 || c.repeated.Load() != 2 {
			t.Errorf("started %d, repeated %d; want 1 and 2", c.started.Load(), c.repeated.Load())
		}
		// An id that started a deploy cannot start another one.
		ans, _, err = r.ask(deployRequest{ID: "d1", Version: "3.0.0", Workers: []string{"w-1"}}, 60*time.Second)
		if err != nil || ans.OK || !strings.Contains(ans.Error, "id: request d1 started deploy 0 of firmware 2.0.0 before") {
			t.Fatalf("another deploy under id d1: %+v, %v; want it refused", ans, err)
		}
	})
}

// TestNoAnswerIsUnknown: when no answer comes, 'leader deploy' does not
// say that nothing was deployed: it says the outcome is unknown, how to
// look, and how to ask again safely, and exits 5, not 1 (refused).
func TestNoAnswerIsUnknown(t *testing.T) {
	o := deployOptions{timeout: 60 * time.Second, broker: "tcp://127.0.0.1:1883", prefix: "fleet"}
	three := 3
	for _, tc := range []struct {
		name string
		req  deployRequest
		want []string
	}{
		{"deploy", deployRequest{ID: "d1", Version: "2.0.0", Workers: []string{"w-1"}},
			[]string{"no answer from a leader on fleet/_leader/deploy within 1m0s (asked 9 times)", "the deploy may or may not have started",
				"--request-id d1", "deploys[].Request", "fleet/_leader/stats"}},
		{"cancel", deployRequest{ID: "c1", Cancel: &three},
			[]string{"deploy 3 may or may not be cancelled", "leader deploy --cancel 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := startBus(t, func(b *bus) { b.drop = -1 })
				ans, copies, err := r.ask(tc.req, o.timeout)
				err = o.outcome(tc.req, wire.Topics{}, ans, copies, err, io.Discard)
				if cli.Code(err) != exitUnknown {
					t.Fatalf("exit %d (%v), want %d", cli.Code(err), err, exitUnknown)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q\nlacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "nothing was deployed") {
					t.Errorf("message %q claims nothing was deployed", err)
				}
			})
		})
	}
	if err := o.outcome(deployRequest{ID: "d1"}, wire.Topics{}, deployAnswer{ID: "d1", Error: "no"}, 1, nil, io.Discard); cli.Code(err) != cli.ExitRuntime {
		t.Errorf("a refusal exits %d, want %d", cli.Code(err), cli.ExitRuntime)
	}
}

// TestCancelRequest: a cancel request withdraws the deploy's queued
// updates and says how many; asked again it finds the deploy cancelled;
// a deploy the leader does not keep is refused with the reason.
func TestCancelRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startBus(t, func(*bus) {})
		if ans, _, err := r.ask(deployRequest{ID: "d1", Version: "2.0.0", Workers: []string{"w-1", "w-2", "w-3"}, WaveSize: 1, WaveIntervalMs: 60_000}, time.Minute); err != nil || !ans.OK {
			t.Fatalf("deploy: %+v, %v", ans, err)
		}
		zero, seven := 0, 7
		ans, _, err := r.ask(deployRequest{ID: "c1", Cancel: &zero}, time.Minute)
		if err != nil || !ans.OK || ans.Deploy != 0 || ans.Withdrawn+ans.InFlight != 3 || ans.Again {
			t.Fatalf("cancel: %+v, %v; want deploy 0's 3 updates withdrawn or in flight", ans, err)
		}
		var out strings.Builder
		printAnswer(&out, deployRequest{ID: "c1", Cancel: &zero}, ans)
		if !strings.Contains(out.String(), "deploy 0 cancelled: ") {
			t.Errorf("printed %q", out.String())
		}
		if d, _ := r.l.Progress(0); !d.Cancelled {
			t.Errorf("deploy 0 not marked cancelled: %+v", d)
		}
		if ans, _, err := r.ask(deployRequest{ID: "c2", Cancel: &seven}, time.Minute); err != nil || ans.OK || !strings.Contains(ans.Error, "cancel deploy 7: leader: no such deploy") {
			t.Fatalf("cancel of deploy 7: %+v, %v; want it refused as unknown", ans, err)
		}
		if n := r.ctl.counts.cancelled.Load(); n != 1 {
			t.Errorf("cancelled %d, want 1", n)
		}
	})
}

// TestPrintAnswerCounts: a deploy to one worker in one wave says so in
// the singular ("in 1 waves" before).
func TestPrintAnswerCounts(t *testing.T) {
	for _, tc := range []struct {
		targets, waves int
		want           string
	}{
		{1, 1, "to 1 worker in 1 wave (request r)"},
		{40, 4, "to 40 workers in 4 waves (request r)"},
	} {
		var out strings.Builder
		printAnswer(&out, deployRequest{ID: "r", Version: "2.0.0"}, deployAnswer{OK: true, Targets: tc.targets, Waves: tc.waves})
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("printed %q, want %q", out.String(), tc.want)
		}
	}
}
