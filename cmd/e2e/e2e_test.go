package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

const waitLong = 60 * time.Second

// fast settings for the processes: heartbeats and their processing often
// enough that versions show on /metrics at once, reconnects quick.
var (
	leaderFast = []string{"--log-format", "json", "--heartbeat-interval", "100ms", "--stats-interval", "500ms", "--ask-timeout", "2s"}
	workerFast = []string{"--log-format", "json", "--heartbeat", "200ms", "--report", "0", "--backoff-base", "50ms", "--backoff-cap", "500ms"}
)

func startLeader(t *testing.T, args ...string) (p *proc, metricsAddr string) {
	t.Helper()
	p = start(t, "leader", append(append([]string{"run", "--metrics-addr", "127.0.0.1:0"}, leaderFast...), args...)...)
	return p, p.log(t, "metrics listening", waitLong)["addr"].(string)
}

func startWorkers(t *testing.T, broker string, count, first int) *proc {
	t.Helper()
	return start(t, "worker", append([]string{"--broker", broker, "--count", strconv.Itoa(count), "--start", strconv.Itoa(first)}, workerFast...)...)
}

// stopWorkers SIGTERMs the worker processes, checks they exit 0, and
// returns the updates they applied and their version counts, from the
// summary each logs at exit.
func stopWorkers(t *testing.T, ws ...*proc) (applied int, versions []string) {
	t.Helper()
	for _, w := range ws {
		if code := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("worker exit code %d, want 0", code)
		}
		rec := w.log(t, "workers stopped", time.Second)
		applied += num(t, rec, "applied")
		versions = append(versions, rec["versions"].(string))
		if online := num(t, rec, "online"); online != 0 {
			t.Errorf("after SIGTERM %d workers still online", online)
		}
	}
	return applied, versions
}

// deployAndWait asks the leader for a deploy of 2.0.0 to w-0000..w-(n-1)
// and waits until the leader sees every worker at 2.0.0.
func deployAndWait(t *testing.T, broker, metricsAddr string, n int) {
	t.Helper()
	code, out := run(t, "leader", "deploy", "--broker", broker, "--version", "2.0.0",
		"--workers", fmt.Sprintf("w-0000..w-%04d", n-1), "--wave-size", "25", "--wave-interval", "100ms")
	if want := fmt.Sprintf("to %d workers in %d waves", n, (n+24)/25); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("leader deploy: exit %d, output %q; want 0 and %q", code, out, want)
	}
	waitMetric(t, metricsAddr, `fleetsim_workers_version{version="2.0.0"}`, float64(n), waitLong)
	waitMetric(t, metricsAddr, `fleetsim_deploy_delivered{deploy="0",version="2.0.0"}`, float64(n), 10*time.Second)
}

// TestFleetOverEmbeddedBroker: a leader process with its embedded broker
// on TCP, two worker processes of 50 workers each, a deploy from a third
// process; every worker applies it once and every process stops with 0.
func TestFleetOverEmbeddedBroker(t *testing.T) {
	l, maddr := startLeader(t, "--outbox", filepath.Join(t.TempDir(), "leader.db"), "--listen", "127.0.0.1:0", "--durability", "batch")
	broker := "tcp://" + l.log(t, "broker listening", waitLong)["addr"].(string)
	w1 := startWorkers(t, broker, 50, 0)
	w2 := startWorkers(t, broker, 50, 50)
	waitMetric(t, maddr, "fleetsim_workers_online", 100, waitLong)
	deployAndWait(t, broker, maddr, 100)
	checkStatsTopic(t, broker, 100)

	applied, versions := stopWorkers(t, w1, w2)
	if applied != 100 || versions[0] != "2.0.0=50" || versions[1] != "2.0.0=50" {
		t.Errorf("workers applied %d updates, versions %v; want 100, each process 2.0.0=50", applied, versions)
	}
	waitMetric(t, maddr, "fleetsim_workers_offline", 100, 10*time.Second)
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
	if rec := l.log(t, "leader stopped", time.Second); num(t, rec, "outbox_depth") != 0 || num(t, rec, "acked") != 100 {
		t.Errorf("leader stopped with %v; want an empty outbox and 100 acked", rec)
	}
}

// checkStatsTopic waits for a stats message on fleet/_leader/stats that
// shows n workers online at 2.0.0 and the deploy delivered.
func checkStatsTopic(t *testing.T, broker string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := transport.Connect(ctx, transport.ClientOptions{ID: "e2e-stats", Broker: broker, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(true)
	got := make(chan bool, 1)
	err = sess.Subscribe(ctx, wire.Topics{}.LeaderStats(), 0, func(_ string, p []byte) {
		var m struct {
			Fleet struct {
				Online    int            `json:"online"`
				ByVersion map[string]int `json:"by_version"`
			} `json:"fleet"`
			Deploys []struct{ Targets int } `json:"deploys"`
		}
		ok := json.Unmarshal(p, &m) == nil && m.Fleet.Online == n && m.Fleet.ByVersion["2.0.0"] == n && len(m.Deploys) == 1
		select {
		case got <- ok:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-got:
		if !ok {
			t.Error("the stats message does not show the fleet at 2.0.0")
		}
	case <-ctx.Done():
		t.Fatal("no stats message on fleet/_leader/stats within 10s")
	}
}

// TestFleetOverMosquitto: the same fleet with Mosquitto as the broker.
func TestFleetOverMosquitto(t *testing.T) {
	conf, addr := mosquittoConf(t)
	m := startMosquitto(t, conf, addr)
	broker := "tcp://" + addr
	l, maddr := startLeader(t, "--outbox", filepath.Join(t.TempDir(), "leader.db"), "--broker", broker, "--durability", "batch")
	w1 := startWorkers(t, broker, 50, 0)
	w2 := startWorkers(t, broker, 50, 50)
	waitMetric(t, maddr, "fleetsim_workers_online", 100, waitLong)
	deployAndWait(t, broker, maddr, 100)

	applied, _ := stopWorkers(t, w1, w2)
	if applied != 100 {
		t.Errorf("workers applied %d updates, want 100", applied)
	}
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
	m.stop(t, syscall.SIGTERM)
}

// mosquittoConf writes a Mosquitto configuration for a listener on a
// free loopback port, anonymous, without persistence, and returns it
// with the address. It skips the test if Mosquitto is not installed.
func mosquittoConf(t *testing.T) (conf, addr string) {
	t.Helper()
	if _, err := exec.LookPath("mosquitto"); err != nil {
		t.Skip("mosquitto not installed: apt-get install -y mosquitto")
	}
	port := freePort(t)
	conf = filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, fmt.Sprintf("127.0.0.1:%d", port)
}

// startMosquitto starts Mosquitto with conf and waits until it accepts
// connections on addr.
func startMosquitto(t *testing.T, conf, addr string) *proc {
	t.Helper()
	mosq, err := exec.LookPath("mosquitto")
	if err == nil {
		mosq, err = filepath.Abs(mosq)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := start(t, mosq, "-c", conf)
	fleettest.Eventually(t, 10*time.Second, "mosquitto accepts connections on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	return m
}

// TestLeaderKilledMidDeploy: SIGKILL the leader while a deploy's waves are
// still queued; a leader restarted on the same outbox file finishes it,
// and every worker applies the update exactly once.
func TestLeaderKilledMidDeploy(t *testing.T) {
	const n = 50
	db := filepath.Join(t.TempDir(), "leader.db")
	l, maddr := startLeader(t, "--outbox", db, "--listen", "127.0.0.1:0") // durability sync
	addr := l.log(t, "broker listening", waitLong)["addr"].(string)
	broker := "tcp://" + addr
	w := startWorkers(t, broker, n, 0)
	waitMetric(t, maddr, "fleetsim_workers_online", n, waitLong)

	code, out := run(t, "leader", "deploy", "--broker", broker, "--version", "2.0.0", "--all",
		"--wave-size", "10", "--wave-interval", "1s")
	if code != 0 || !strings.Contains(out, "to 50 workers in 5 waves") {
		t.Fatalf("leader deploy: exit %d, output %q", code, out)
	}
	// Acked in the file, not only acked by a worker: a kill between the
	// two is redelivered (a duplicate the worker does not apply again).
	fleettest.Eventually(t, waitLong, "part of the first wave acked in the outbox", func() error {
		got := metric(t, maddr, "fleetsim_outbox_acked_total")
		return fleettest.Unless(got >= 1, "fleetsim_outbox_acked_total = %v", got)
	})
	if code := l.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("leader after SIGKILL: exit code %d", code)
	}

	l2, maddr2 := startLeader(t, "--outbox", db, "--listen", addr)
	if depth := num(t, l2.log(t, "outbox open", waitLong), "depth"); depth == 0 || depth >= n {
		t.Fatalf("restarted leader found %d queued updates; want some of %d left (killed mid-deploy)", depth, n)
	}
	waitMetric(t, maddr2, `fleetsim_workers_version{version="2.0.0"}`, n, waitLong)
	waitMetric(t, maddr2, "fleetsim_outbox_depth", 0, 10*time.Second)

	applied, versions := stopWorkers(t, w)
	if applied != n || versions[0] != "2.0.0=50" {
		t.Errorf("workers applied %d updates (%v), want %d: each exactly once", applied, versions, n)
	}
	if code := l2.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("restarted leader exit code %d, want 0", code)
	}
}
