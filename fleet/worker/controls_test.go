package worker_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// rig is one worker on a fake clock against the embedded broker, and a
// bare session standing in for the leader: it publishes commands and
// reads everything the worker sends.
type rig struct {
	w   *worker.Worker
	clk *clock.Fake
	tp  wire.Topics
	via string // the worker's gateway, "" for a session of its own
	// lead publishes commands; up receives the worker's envelopes.
	lead *transport.Session
	up   chan wire.Envelope
	// onlines counts the worker's "online" statuses the leader got. The
	// leader hears it after the broker took the worker's subscription
	// (one connection's packets are taken in order), so a command sent
	// after it reaches the worker; Stats.Online can come first (a device
	// behind a gateway does not wait for its SUBACK).
	onlines atomic.Int64
}

const workerID = "w-00001"

// driver is how a rig runs its worker: with a session and a goroutine of
// its own (Worker.Run), or as a device behind a gateway, on a pool's loop
// among others. A worker behaves alike on both.
type driver struct {
	name    string
	gateway string // "": a session of its own
}

var drivers = []driver{{name: "session"}, {name: "loop", gateway: "gw-00001"}}

// bothDrivers runs f once with each driver.
func bothDrivers(t *testing.T, f func(t *testing.T, drv driver)) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) { f(t, d) })
	}
}

func startRig(t *testing.T, drv driver, cfg worker.Config) *rig {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	return startRigOn(t, drv, cfg, clk, clk)
}

// startRigOn starts a worker that reads the clock c, which runs on fake,
// the clock the rig advances.
func startRigOn(t *testing.T, drv driver, cfg worker.Config, fake *clock.Fake, c clock.Clock) *rig {
	t.Helper()
	return startRigWith(t, drv, cfg, fake, c, false)
}

// startRigWith starts a worker as startRigOn does; with sync, it asks the
// leader for a sync as it connects, as a worker does unless told not to.
func startRigWith(t *testing.T, drv driver, cfg worker.Config, fake *clock.Fake, c clock.Clock, sync bool) *rig {
	t.Helper()
	b, err := broker.StartBroker(broker.BrokerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{clk: fake, up: make(chan wire.Envelope, 64), via: drv.gateway}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.lead, err = transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true}, b); err != nil {
		t.Fatal(err)
	}
	if err := r.lead.Subscribe(ctx, r.tp.Up(workerID), 1, func(topic string, payload []byte) {
		if env, err := wire.Decode(topic, payload, wire.Up, 0); err == nil {
			r.up <- env
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.lead.Subscribe(ctx, r.tp.Status(workerID), 1, func(topic string, payload []byte) {
		if s, err := wire.ParseStatus(topic, payload); err == nil && s.Online {
			r.onlines.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	cfg.ID, cfg.Clock, cfg.NoSync, cfg.Gateway = workerID, c, !sync, drv.gateway
	dial := worker.MQTTDialer{Broker: "mem://", Mem: b}
	var run func(context.Context) error
	if drv.gateway == "" {
		if r.w, err = worker.New(cfg, dial); err != nil {
			t.Fatal(err)
		}
		run = r.w.Run
	} else {
		p, err := worker.NewPool([]worker.Config{cfg}, dial, worker.PoolOptions{Clock: fake})
		if err != nil {
			t.Fatal(err)
		}
		r.w, run = p.Get(workerID), p.Run
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = run(runCtx)
	}()
	t.Cleanup(func() {
		stop()
		<-done
		r.lead.Close(true)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(cctx); err != nil {
			buf := make([]byte, 1<<20)
			t.Errorf("broker close: %v\n%s", err, buf[:runtime.Stack(buf, true)])
		}
	})
	// The first connect is due at once on the fake clock; the connection
	// itself runs on the wall clock.
	fleettest.Eventually(t, 10*time.Second, "worker online", func() error {
		r.clk.Advance(0)
		if err := r.state(); err != nil {
			return err
		}
		return fleettest.Unless(r.onlines.Load() > 0, "the leader has not heard it online")
	})
	return r
}

// state says what the worker is doing, for a wait's failure message.
func (r *rig) state() error {
	st, s := r.w.State(), r.w.Stats()
	next, ok := r.clk.NextDeadline()
	timer := "no timer armed"
	if ok {
		timer = "next timer in " + next.Sub(r.clk.Now()).String()
	}
	return fleettest.Unless(st.Online, "online %v, busy %v, depth %d, version %q, asking %d; heartbeats sent %d, telemetry generated %d queued %d; %s",
		st.Online, st.Busy, st.Depth, st.Version, st.Asking, s.HeartbeatsSent, s.TelemetryGenerated, s.TelemetryQueued, timer)
}

// seen is r.state as text, for a wait that fails whatever the worker's state.
func (r *rig) seen() string {
	if err := r.state(); err != nil {
		return "worker: " + err.Error()
	}
	return "worker online"
}

// next returns the next envelope the worker sent the leader.
func (r *rig) next(t *testing.T, what string) wire.Envelope {
	t.Helper()
	return fleettest.Receive(t, 10*time.Second, what, r.up, r.seen)
}

// noTimer is nil once no timer is armed on the worker's clock.
func (r *rig) noTimer() error {
	next, ok := r.clk.NextDeadline()
	return fleettest.Unless(!ok, "a timer armed, due in %v", next.Sub(r.clk.Now()))
}

// command publishes a command to the worker and returns its answer.
func (r *rig) command(t *testing.T, env wire.Envelope) wire.Envelope {
	t.Helper()
	b, err := wire.Encode(env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.lead.Publish(ctx, r.tp.Down(workerID), 1, false, b); err != nil {
		t.Fatal(err)
	}
	for {
		if got := r.next(t, "the ack for "+env.ID); got.Kind == wire.KindAck && got.Ref == env.ID {
			return got
		}
	}
}

// replyOK answers the worker's ask ref with "ok", as the leader would.
func (r *rig) replyOK(t *testing.T, ref string) {
	t.Helper()
	r.reply(t, wire.Envelope{Kind: wire.KindReply, Ref: ref, Result: wire.ResultOK})
}

// reply publishes the leader's answer env to the worker.
func (r *rig) reply(t *testing.T, env wire.Envelope) {
	t.Helper()
	b, err := wire.Encode(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.lead.Publish(context.Background(), r.tp.Down(workerID), 1, false, b); err != nil {
		t.Fatal(err)
	}
}

// TestSetHeartbeat: a worker without heartbeats starts them at the new
// interval and stops them again when set to 0.
func TestSetHeartbeat(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{})
		if _, pending := r.clk.NextDeadline(); pending {
			t.Fatal("a worker without heartbeats has a timer armed")
		}
		if err := r.w.SetHeartbeat(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		for i := uint64(1); i <= 3; i++ {
			fleettest.AdvanceToNext(t, r.clk, 100*time.Millisecond, "the heartbeat ticker")
			if env := r.next(t, fmt.Sprintf("heartbeat %d", i)); env.Kind != wire.KindHeartbeat || env.Seq != i {
				t.Fatalf("leader got %s seq %d, want heartbeat seq %d", env.Kind, env.Seq, i)
			}
		}
		if err := r.w.SetHeartbeat(0); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "heartbeat ticker stopped", r.noTimer)
		r.clk.Advance(time.Second) // nothing armed: nothing can fire
		if s := r.w.Stats(); s.HeartbeatsSent != 3 || s.HeartbeatsStored != 0 {
			t.Fatalf("after turning heartbeats off: sent %d, stored %d; want 3, 0", s.HeartbeatsSent, s.HeartbeatsStored)
		}
		if err := r.w.SetHeartbeat(-time.Second); err == nil {
			t.Fatal("SetHeartbeat(-1s) accepted")
		}
	})
}

// TestSetTelemetry: a worker's telemetry stops when set to 0 (a
// scenario's drain) and nothing more is generated.
func TestSetTelemetry(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Telemetry: 100 * time.Millisecond})
		if _, ok := r.clk.NextDeadline(); !ok { // armed as the worker starts, before it connects
			t.Fatal("a worker with telemetry has no ticker armed")
		}
		if err := r.w.SetTelemetry(0); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "telemetry ticker stopped", r.noTimer)
		r.clk.Advance(time.Second)
		if s := r.w.Stats(); s.TelemetryGenerated != 0 {
			t.Fatalf("after turning telemetry off: %d generated, want 0", s.TelemetryGenerated)
		}
		if err := r.w.SetTelemetry(-time.Second); err == nil {
			t.Fatal("SetTelemetry(-1s) accepted")
		}
	})
}

// TestRefusesUninstallableVersion: an apply of a version the worker cannot
// install is answered reject (the leader dead-letters it) and changes
// nothing; a good one after it is applied.
func TestRefusesUninstallableVersion(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Service: dist.Const(time.Microsecond)})
		for i, v := range []string{"!poison", "2.0 beta", "-1", strings.Repeat("9", 65)} {
			id := "bad" + string(rune('a'+i))
			ack := r.command(t, wire.Envelope{ID: id, Kind: wire.KindConfig, Key: "config", Seq: uint64(i + 1), Body: wire.Body(wire.Apply{Version: v})})
			if ack.Result != wire.ResultReject || !strings.Contains(ack.Reason, "cannot be installed") {
				t.Fatalf("apply %q answered %s (%q), want reject", v, ack.Result, ack.Reason)
			}
		}
		ack := r.command(t, wire.Envelope{ID: "good", Kind: wire.KindFirmware, Key: "firmware", Seq: 1, Body: wire.Body(wire.Apply{Version: "2.1.0-rc_1+b7"})})
		if ack.Result != wire.ResultOK {
			t.Fatalf("good apply answered %s (%q)", ack.Result, ack.Reason)
		}
		fleettest.Eventually(t, 10*time.Second, "good version applied", func() error {
			st := r.w.State()
			return fleettest.Unless(st.Version == "2.1.0-rc_1+b7", "version %q, busy %v, depth %d", st.Version, st.Busy, st.Depth)
		})
		s := r.w.Stats()
		if s.Refused != 4 || s.Applied != 1 || s.Malformed != 0 || s.AckedOK != 1 || s.MailboxDepth != 0 {
			t.Fatalf("refused %d applied %d malformed %d acked ok %d depth %d; want 4 1 0 1 0", s.Refused, s.Applied, s.Malformed, s.AckedOK, s.MailboxDepth)
		}
	})
}

// TestSetMailboxCapacity: a worker busy on a long job fills its mailbox of
// one, answers "full", and takes more once its capacity is raised.
func TestSetMailboxCapacity(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Mailbox: mailbox.Options{Capacity: 1}, Service: dist.Const(time.Hour)})
		job := func(id string) wire.Result {
			return r.command(t, wire.Envelope{ID: id, Kind: wire.KindJob}).Result
		}
		want := []wire.Result{wire.ResultOK, wire.ResultOK, wire.ResultFull} // serving, queued, full
		for i, w := range want {
			if got := job("j" + string(rune('0'+i))); got != w {
				t.Fatalf("job %d answered %s, want %s", i, got, w)
			}
		}
		if err := r.w.SetMailboxCapacity(2); err != nil {
			t.Fatal(err)
		}
		if got := job("j3"); got != wire.ResultOK {
			t.Fatalf("after raising the capacity to 2 the job was answered %s", got)
		}
		if got := job("j4"); got != wire.ResultFull {
			t.Fatalf("a third queued job answered %s, want full", got)
		}
		st := r.w.State()
		if !st.Busy || st.Depth != 2 || st.Capacity != 2 || st.AckedFull != 2 {
			t.Fatalf("state %+v: want busy, depth 2, capacity 2, 2 full answers", st)
		}
		if ms := r.w.MailboxStats(); ms.Capacity != 2 || ms.Offered != 5 || ms.RejectedFull != 2 {
			t.Fatalf("mailbox stats: capacity %d offered %d rejected %d; want 2 5 2", ms.Capacity, ms.Offered, ms.RejectedFull)
		}
		if err := r.w.SetMailboxCapacity(0); err == nil || r.w.State().Capacity != 2 {
			t.Fatal("SetMailboxCapacity(0) accepted")
		}
	})
}

// TestTelemetryQueued: telemetry the leader does not answer waits in the
// local outbox (TelemetryQueued counts it) until it is forwarded, and the
// telemetry identity holds at each step.
func TestTelemetryQueued(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Telemetry: time.Minute, AskTimeout: time.Second})
		next := func(what string) wire.Envelope {
			t.Helper()
			env := r.next(t, what)
			if env.Kind != wire.KindTelemetry {
				t.Fatalf("%s: got %s, want telemetry", what, env.Kind)
			}
			return env
		}
		identity := func(s worker.Stats) {
			t.Helper()
			if got := s.TelemetryDirect + s.TelemetryForwarded + s.TelemetryRejected + s.TelemetryDropped + uint64(s.TelemetryQueued); got != s.TelemetryGenerated {
				t.Fatalf("generated %d != direct %d + forwarded %d + rejected %d + dropped %d + queued %d", s.TelemetryGenerated,
					s.TelemetryDirect, s.TelemetryForwarded, s.TelemetryRejected, s.TelemetryDropped, s.TelemetryQueued)
			}
		}
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the telemetry ticker")
		next("direct send")
		// No answer: at the ask's deadline the telemetry is kept locally and
		// sent again from there. The worker arms that deadline after the send.
		fleettest.Advance(t, r.clk, time.Second, "the ask's deadline")
		resend := next("send from the local outbox")
		s := r.w.Stats()
		if s.TelemetryGenerated != 1 || s.TelemetryStored != 1 || s.TelemetryQueued != 1 {
			t.Fatalf("generated %d stored %d queued %d, want 1 1 1", s.TelemetryGenerated, s.TelemetryStored, s.TelemetryQueued)
		}
		identity(s)
		// No answer to that either. The housekeeping that sent it armed its
		// deadline too (nothing else would wake the worker: the telemetry
		// ticker is a minute away, as it is off in a drain), so it is given
		// up on time and, after the local outbox's backoff, sent again.
		fleettest.Advance(t, r.clk, time.Second, "the resend's deadline")
		fleettest.AdvanceToNext(t, r.clk, 2*time.Second, "the local outbox's backoff")
		resend = next("sent again from the local outbox")
		r.replyOK(t, resend.ID)
		fleettest.Eventually(t, 10*time.Second, "stored telemetry forwarded", func() error {
			s := r.w.Stats()
			return fleettest.Unless(s.TelemetryForwarded == 1, "forwarded %d, queued %d, late replies %d", s.TelemetryForwarded, s.TelemetryQueued, s.LateReplies)
		})
		if s := r.w.Stats(); s.TelemetryQueued != 0 {
			t.Fatalf("queued %d after forwarding, want 0", s.TelemetryQueued)
		} else {
			identity(s)
		}
	})
}

// TestAskingUntilAnswered: State.Asking counts a message to the leader
// from the moment it is sent until its answer comes, so a caller waiting
// for a quiet fleet (a scenario's drain) also waits for what is on its way
// through the broker, in no queue it can see.
func TestAskingUntilAnswered(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Telemetry: time.Minute, AskTimeout: time.Hour})
		if st := r.w.State(); st.Asking != 0 {
			t.Fatalf("asking %d before anything was sent, want 0", st.Asking)
		}
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the telemetry ticker")
		env := r.next(t, "direct send")
		fleettest.Eventually(t, 10*time.Second, "the send counted as asking", func() error {
			st := r.w.State()
			return fleettest.Unless(st.Asking == 1 && st.Stored == 0, "asking %d, stored %d; want 1, 0", st.Asking, st.Stored)
		})
		r.replyOK(t, env.ID)
		fleettest.Eventually(t, 10*time.Second, "the answer settles the ask", func() error {
			st, s := r.w.State(), r.w.Stats()
			return fleettest.Unless(st.Asking == 0 && s.TelemetryDirect == 1, "asking %d, direct %d; want 0, 1", st.Asking, s.TelemetryDirect)
		})
	})
}

// TestSyncDueUntilSent: State.SyncDue holds from the connect until the
// sync request goes, and again while a refused one waits for its retry,
// so a caller waiting for a quiet fleet (a scenario's drain) does not
// stop while a worker is backing off before asking again.
func TestSyncDueUntilSent(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		clk := clock.NewFake(time.Unix(1_700_000_000, 0))
		r := startRigWith(t, drv, worker.Config{AskTimeout: time.Hour}, clk, clk, true)
		sync := r.next(t, "the sync request")
		if sync.Kind != wire.KindRequest {
			t.Fatalf("first message %s, want the sync request", sync.Kind)
		}
		// The request can reach the leader before its sender's loop marks
		// it sent: wait for that.
		fleettest.Eventually(t, 10*time.Second, "the sync sent", func() error {
			st := r.w.State()
			return fleettest.Unless(!st.SyncDue && st.Asking == 1, "sync due %v, asking %d; want false, 1", st.SyncDue, st.Asking)
		})
		r.reply(t, wire.Envelope{Kind: wire.KindReply, Ref: sync.ID, Result: wire.ResultFull, RetryAfterMs: 60_000})
		fleettest.Eventually(t, 10*time.Second, "the refused sync waiting for its retry", func() error {
			st := r.w.State()
			return fleettest.Unless(st.SyncDue && st.Asking == 0, "sync due %v, asking %d; want true, 0", st.SyncDue, st.Asking)
		})
		fleettest.Advance(t, r.clk, 2*time.Minute, "the retry")
		again := r.next(t, "the retried sync request")
		if again.Kind != wire.KindRequest {
			t.Fatalf("retry %s, want a sync request", again.Kind)
		}
		fleettest.Eventually(t, 10*time.Second, "the retry sent", func() error {
			st := r.w.State()
			return fleettest.Unless(!st.SyncDue, "sync still due after the retry went")
		})
	})
}

// TestRTT: with a round trip configured, a command's answer leaves the
// worker that long after the command came, not before.
func TestRTT(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{RTT: dist.Const(100 * time.Millisecond), Service: dist.Const(time.Microsecond)})
		b, err := wire.Encode(wire.Envelope{ID: "j1", Kind: wire.KindJob})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.lead.Publish(context.Background(), r.tp.Down(workerID), 1, false, b); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "the job taken", func() error {
			s := r.w.Stats()
			return fleettest.Unless(s.Jobs == 1, "%d jobs done", s.Jobs)
		})
		select {
		case env := <-r.up:
			t.Fatalf("the worker answered %s before its round trip was over", env.Kind)
		default:
		}
		fleettest.Advance(t, r.clk, 100*time.Millisecond, "the answer's round trip")
		if env := r.next(t, "the ack after the round trip"); env.Kind != wire.KindAck || env.Ref != "j1" || env.Result != wire.ResultOK {
			t.Fatalf("got %s ref %s result %s, want the ok ack of j1", env.Kind, env.Ref, env.Result)
		}
	})
}

// TestAnnounce: the leader's request on the announce topic makes the
// worker say again that it is online, its status republished after a
// random wait within AnnounceWindow (its own session hears the request;
// behind a gateway, the gateway hears it for its devices).
func TestAnnounce(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{AnnounceWindow: time.Minute})
		before := r.onlines.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.lead.Publish(ctx, r.tp.Announce(), 0, false, []byte("announce")); err != nil {
			t.Fatal(err)
		}
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the announce, within its window")
		fleettest.Eventually(t, 10*time.Second, "the online status again", func() error {
			n, s := r.onlines.Load(), r.w.Stats()
			return fleettest.Unless(n == before+1 && s.Announced == 1, "%d onlines (%d before), announced %d", n, before, s.Announced)
		})
	})
}
