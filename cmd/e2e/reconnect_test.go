package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
)

// TestLeaderSurvivesBrokerRestart: Mosquitto (no persistence) is stopped
// under a running leader in the middle of a deploy in waves, kept down
// for longer than the wave interval, and started again on the same port.
// The leader does not exit: it reconnects, and the deploy completes with
// every worker at the version, each applying it once (from the workers'
// --state file), no delivery failed or timed out (the relay paused) and
// nothing in the dead letters.
func TestLeaderSurvivesBrokerRestart(t *testing.T) {
	const n = 40
	conf, addr := mosquittoConf(t)
	m := startMosquitto(t, conf, addr)
	broker := "tcp://" + addr
	dir := t.TempDir()
	db, state := filepath.Join(dir, "leader.db"), filepath.Join(dir, "workers.json")
	l, maddr := startLeader(t, "--outbox", db, "--broker", broker, "--durability", "batch")
	w := startWorkersState(t, broker, n, 0, state)
	waitMetric(t, maddr, "fleetsim_workers_online", n, waitLong)

	deployWaves(t, broker, "2.0.0", n, 10, time.Second) // 4 waves over 3 s
	fleettest.Eventually(t, waitLong, "the first wave under way", func() error {
		got := metric(t, maddr, "fleetsim_outbox_acked_total")
		return fleettest.Unless(got >= 1, "fleetsim_outbox_acked_total = %v", got)
	})
	acked := metric(t, maddr, "fleetsim_outbox_acked_total")
	m.stop(t, syscall.SIGTERM)
	l.log(t, "lost the session with the broker: deliveries pause, reconnecting", 10*time.Second)
	l.log(t, "broker unreachable; retrying with backoff", 10*time.Second)
	if got := metric(t, maddr, "fleetsim_leader_broker_connected"); got != 0 {
		t.Errorf("fleetsim_leader_broker_connected = %v with the broker down, want 0", got)
	}
	// Down for longer than the wave interval: the next wave comes due
	// while the leader has no session, and must wait for it.
	fleettest.Eventually(t, 10*time.Second, "the leader without its broker for 1.5 s", func() error {
		got := metric(t, maddr, "fleetsim_leader_broker_disconnected_seconds_total")
		return fleettest.Unless(got >= 1.5, "fleetsim_leader_broker_disconnected_seconds_total = %v", got)
	})
	m = startMosquitto(t, conf, addr)
	l.log(t, "reconnected to the broker: deliveries resume", 20*time.Second)

	waitMetric(t, maddr, `fleetsim_workers_version{version="2.0.0"}`, n, waitLong)
	waitMetric(t, maddr, "fleetsim_outbox_depth", 0, 10*time.Second)
	t.Logf("%v of %d updates acked before the broker stopped", acked, n)
	if acked >= n {
		t.Errorf("all %d updates were acked before the broker stopped: the restart was not mid-deploy", n)
	}
	for series, want := range map[string]float64{
		"fleetsim_leader_broker_connected":        1,
		"fleetsim_leader_broker_reconnects_total": 1,
		"fleetsim_outbox_dead_letters":            0,
	} {
		if got := metric(t, maddr, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// A relay that went on without a session would have spent the due
	// wave's asks on it: each failed and charged an attempt.
	if m, err := scrape(maddr); err != nil {
		t.Error(err)
	} else if errs, timeouts := sumSeries(m, "fleetsim_outbox_relay_errors_total{"), m["fleetsim_leader_asks_timed_out_total"]; errs != 0 || timeouts != 0 {
		t.Errorf("%v failed deliveries, %v asks timed out; want none: the relay must pause while the broker is down", errs, timeouts)
	}
	for _, msg := range []string{"lost the session with the broker: deliveries pause, reconnecting", "reconnected to the broker: deliveries resume"} {
		if k := l.count(msg); k != 1 {
			t.Errorf("the leader logged %q %d times, want once", msg, k)
		}
	}

	stopWorkers(t, w)
	checkApplied(t, readState(t, state), n, "2.0.0")
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
	m.stop(t, syscall.SIGTERM)
}

// sumSeries adds up the series of m whose name starts with prefix.
func sumSeries(m map[string]float64, prefix string) float64 {
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			sum += v
		}
	}
	return sum
}

// count returns how many of p's log records have msg.
func (p *proc) count(msg string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := 0
	for _, r := range p.logs {
		if r["msg"] == msg {
			k++
		}
	}
	return k
}
