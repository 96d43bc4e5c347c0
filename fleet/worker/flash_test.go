package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// The worker's exactly-once effect: dedupe by (key, seq), kept in its
// flash across a reboot that loses its RAM.

func firmware(id string, seq uint64, version string) wire.Envelope {
	return wire.Envelope{ID: id, Kind: wire.KindFirmware, Key: "firmware", Seq: seq, Body: wire.Body(wire.Apply{Version: version})}
}

// instant serves a command at once: applied before its ack is sent.
var instant = worker.Config{Service: dist.Const(time.Microsecond), Reconnect: worker.Reconnect{Immediate: true}}

// apply sends env, wants it acked ok and then the worker's counters to
// satisfy done.
func (r *rig) apply(t *testing.T, env wire.Envelope, what string, done func(worker.Stats) bool) worker.Stats {
	t.Helper()
	if ack := r.command(t, env); ack.Result != wire.ResultOK {
		t.Fatalf("%s: answered %s (%q), want ok", what, ack.Result, ack.Reason)
	}
	var s worker.Stats
	fleettest.Eventually(t, 10*time.Second, what, func() error {
		s = r.w.Stats()
		return fleettest.Unless(done(s), "applied %d %v, duplicates %d, stale %d, version %q, depth %d",
			s.Applied, s.AppliedVersions, s.Duplicates, s.Stale, s.Version, s.MailboxDepth)
	})
	return s
}

// reboot reboots the worker and waits until it is back online.
func (r *rig) reboot(t *testing.T) {
	t.Helper()
	before, onlines := r.w.Stats(), r.onlines.Load()
	r.w.Reboot()
	fleettest.Eventually(t, 10*time.Second, "worker rebooted and back online", func() error {
		r.clk.Advance(worker.ImmediateRetry) // an immediate reconnect is due a round trip later
		s := r.w.Stats()
		return fleettest.Unless(s.Reboots == before.Reboots+1 && s.Online && s.Connects == before.Connects+1 && r.onlines.Load() > onlines,
			"reboots %d, online %v, connects %d (before: %d connects), %d onlines heard (before: %d)",
			s.Reboots, s.Online, s.Connects, before.Connects, r.onlines.Load(), onlines)
	})
}

// TestRedeliveryAppliedOnce: a command delivered again with the same key
// and seq (a new envelope id, as the leader's retry after a lost ack) is
// answered ok and not applied again.
func TestRedeliveryAppliedOnce(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, instant)
		r.apply(t, firmware("c1", 5, "2.0.0"), "first delivery applied", func(s worker.Stats) bool { return s.Applied == 1 })
		s := r.apply(t, firmware("c2", 5, "2.0.0"), "redelivery deduplicated", func(s worker.Stats) bool { return s.Duplicates == 1 })
		if s.Applied != 1 || s.AppliedVersions["2.0.0"] != 1 || s.Stale != 0 {
			t.Fatalf("after a redelivery: applied %d (2.0.0: %d), stale %d; want 1, 1, 0", s.Applied, s.AppliedVersions["2.0.0"], s.Stale)
		}
	})
}

// TestLowerSeqIsStale: an older version (a lower seq under the same key)
// arriving after a newer one is not applied: the worker keeps the newer.
// A job has a key of its own and is carried out beside them.
func TestLowerSeqIsStale(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, instant)
		r.apply(t, firmware("c1", 7, "2.1.0"), "newer applied", func(s worker.Stats) bool { return s.Applied == 1 })
		s := r.apply(t, firmware("c2", 6, "2.0.0"), "older counted stale", func(s worker.Stats) bool { return s.Stale == 1 })
		if s.Applied != 1 || s.Version != "2.1.0" || s.AppliedVersions["2.0.0"] != 0 || s.Duplicates != 0 {
			t.Fatalf("after a stale version: applied %d, version %q, 2.0.0 applied %d times, duplicates %d; want 1, 2.1.0, 0, 0",
				s.Applied, s.Version, s.AppliedVersions["2.0.0"], s.Duplicates)
		}
		s = r.apply(t, wire.Envelope{ID: "j1", Kind: wire.KindJob, Key: "job/8", Seq: 8}, "job done", func(s worker.Stats) bool { return s.Jobs == 1 })
		if s.Stale != 1 || s.Duplicates != 0 {
			t.Fatalf("a job under its own key: stale %d, duplicates %d; want 1, 0", s.Stale, s.Duplicates)
		}
	})
}

// TestRebootKeepsFlash: after a reboot the worker still runs the version
// it applied, and a redelivery of it (the leader never got the ack) or an
// older version is not applied: the dedupe state is in its flash.
func TestRebootKeepsFlash(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, instant)
		r.apply(t, firmware("c1", 5, "2.0.0"), "applied before the reboot", func(s worker.Stats) bool { return s.Applied == 1 })
		r.reboot(t)
		if v := r.w.State().Version; v != "2.0.0" {
			t.Fatalf("after the reboot the worker runs %q, want 2.0.0", v)
		}
		s := r.apply(t, firmware("c2", 5, "2.0.0"), "redelivery after the reboot deduplicated", func(s worker.Stats) bool { return s.Duplicates == 1 })
		s = r.apply(t, firmware("c3", 4, "1.9.0"), "older version after the reboot stale", func(s worker.Stats) bool { return s.Stale == 1 })
		if s.Applied != 1 || s.AppliedVersions["2.0.0"] != 1 || s.Version != "2.0.0" {
			t.Fatalf("after the reboot: applied %d (2.0.0: %d), version %q; want 1, 1, 2.0.0", s.Applied, s.AppliedVersions["2.0.0"], s.Version)
		}
		r.apply(t, firmware("c4", 6, "2.1.0"), "newer version after the reboot applied", func(s worker.Stats) bool { return s.Applied == 2 && s.Version == "2.1.0" })
	})
}

// TestRebootKeepsHeartbeatSeq: the heartbeat seq counts on across a
// reboot. The leader ignores a heartbeat whose seq is not above the last
// it took, so a worker that started again at 1 would go unheard.
func TestRebootKeepsHeartbeatSeq(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		cfg := instant
		cfg.Heartbeat = time.Minute
		r := startRig(t, drv, cfg)
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the heartbeat ticker")
		if env := r.next(t, "heartbeat before the reboot"); env.Kind != wire.KindHeartbeat || env.Seq != 1 {
			t.Fatalf("got %s seq %d, want heartbeat seq 1", env.Kind, env.Seq)
		}
		r.reboot(t)
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the heartbeat ticker, started afresh")
		if env := r.next(t, "heartbeat after the reboot"); env.Kind != wire.KindHeartbeat || env.Seq != 2 {
			t.Fatalf("got %s seq %d, want heartbeat seq 2", env.Kind, env.Seq)
		}
	})
}

// TestRebootLosesMailbox: commands acked ok and waiting (one in service,
// two in the mailbox) are gone after a reboot and counted; the mailbox's
// ledger still balances (the reboot took them out), and the worker serves
// what comes next.
func TestRebootLosesMailbox(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Mailbox: mailbox.Options{Capacity: 4}, Service: dist.Const(time.Hour), Reconnect: worker.Reconnect{Immediate: true}})
		for i := range 3 {
			if ack := r.command(t, wire.Envelope{ID: fmt.Sprint("j", i), Kind: wire.KindJob, Key: fmt.Sprint("job/", i+1), Seq: uint64(i + 1)}); ack.Result != wire.ResultOK {
				t.Fatalf("job %d answered %s", i, ack.Result)
			}
		}
		if st := r.w.State(); !st.Busy || st.Depth != 2 {
			t.Fatalf("before the reboot: busy %v, depth %d; want busy with 2 queued", st.Busy, st.Depth)
		}
		r.reboot(t)
		s, ms := r.w.Stats(), r.w.MailboxStats()
		if s.CommandsLostInReboot != 3 || s.MailboxDepth != 0 || s.Busy || s.Jobs != 0 {
			t.Fatalf("after the reboot: lost %d, depth %d, busy %v, jobs %d; want 3 lost, nothing queued or in service", s.CommandsLostInReboot, s.MailboxDepth, s.Busy, s.Jobs)
		}
		if s.AckedOK != ms.Taken+ms.Dropped()+uint64(ms.Depth) {
			t.Fatalf("acked ok %d, but mailbox taken %d + dropped %d + depth %d", s.AckedOK, ms.Taken, ms.Dropped(), ms.Depth)
		}
		if ack := r.command(t, wire.Envelope{ID: "j9", Kind: wire.KindJob, Key: "job/9", Seq: 9}); ack.Result != wire.ResultOK {
			t.Fatalf("a job after the reboot answered %s, want ok", ack.Result)
		}
		fleettest.Eventually(t, 10*time.Second, "the job after the reboot in service", func() error {
			st := r.w.State()
			return fleettest.Unless(st.Busy && st.Depth == 0, "busy %v, depth %d", st.Busy, st.Depth)
		})
	})
}

// TestRebootLosesTelemetry: telemetry in the local outbox, and telemetry
// sent and not yet answered, are lost with the RAM and counted; the
// telemetry identity holds with them.
func TestRebootLosesTelemetry(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, worker.Config{Telemetry: time.Minute, AskTimeout: time.Second, Reconnect: worker.Reconnect{Immediate: true}})
		identity := func(s worker.Stats) {
			t.Helper()
			if got := s.TelemetryDirect + s.TelemetryForwarded + s.TelemetryRejected + s.TelemetryDropped + s.TelemetryLostInReboot + uint64(s.TelemetryQueued); got != s.TelemetryGenerated {
				t.Fatalf("generated %d != direct %d + forwarded %d + rejected %d + dropped %d + lost in reboot %d + queued %d", s.TelemetryGenerated,
					s.TelemetryDirect, s.TelemetryForwarded, s.TelemetryRejected, s.TelemetryDropped, s.TelemetryLostInReboot, s.TelemetryQueued)
			}
		}
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the telemetry ticker")
		r.next(t, "direct send")
		fleettest.Advance(t, r.clk, time.Second, "the ask's deadline")
		r.next(t, "send from the local outbox")
		if s := r.w.Stats(); s.TelemetryQueued != 1 {
			t.Fatalf("queued %d before the reboot, want 1", s.TelemetryQueued)
		}
		r.reboot(t)
		s := r.w.Stats()
		if s.TelemetryLostInReboot != 1 || s.TelemetryQueued != 0 || s.Local.Depth != 0 {
			t.Fatalf("after the reboot: lost %d, queued %d, local depth %d; want 1, 0, 0", s.TelemetryLostInReboot, s.TelemetryQueued, s.Local.Depth)
		}
		identity(s)
		fleettest.AdvanceToNext(t, r.clk, time.Minute, "the telemetry ticker, started afresh")
		r.next(t, "direct send after the reboot")
		r.reboot(t)
		s = r.w.Stats()
		if s.TelemetryLostInReboot != 2 || s.TelemetryGenerated != 2 {
			t.Fatalf("after the second reboot: lost %d of %d generated, want 2 of 2", s.TelemetryLostInReboot, s.TelemetryGenerated)
		}
		identity(s)
	})
}

// TestFirstApplied: the worker records when it first applied
// each version, on its clock; a redelivery later does not move it.
func TestFirstApplied(t *testing.T) {
	bothDrivers(t, func(t *testing.T, drv driver) {
		r := startRig(t, drv, instant)
		t0 := r.clk.Now()
		r.apply(t, firmware("c1", 5, "2.0.0"), "2.0.0 applied", func(s worker.Stats) bool { return s.Applied == 1 })
		r.clk.Advance(3 * time.Second)
		r.apply(t, firmware("c2", 5, "2.0.0"), "redelivery deduplicated", func(s worker.Stats) bool { return s.Duplicates == 1 })
		r.clk.Advance(4 * time.Second)
		s := r.apply(t, firmware("c3", 6, "2.1.0"), "2.1.0 applied", func(s worker.Stats) bool { return s.Applied == 2 })
		want := map[string]time.Time{"2.0.0": t0, "2.1.0": t0.Add(7 * time.Second)}
		if len(s.FirstApplied) != len(want) || !s.FirstApplied["2.0.0"].Equal(want["2.0.0"]) || !s.FirstApplied["2.1.0"].Equal(want["2.1.0"]) {
			t.Fatalf("applied at %v, want %v", s.FirstApplied, want)
		}
	})
}
