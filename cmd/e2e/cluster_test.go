package e2e

import (
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
)

// A fleet across two broker nodes. Half the workers connect to each node,
// the leader to a list of both. Node b is killed with SIGKILL while a
// deploy's waves are going out: the wills of its clients die with it, so
// the leader, which still believes them online, must find them silent
// (--suspect-after) and park their updates rather than spend attempts on
// them until the dead letters. Node b comes back on the same port, its
// workers reconnect, and the deploy completes: no dead letter, every
// worker at the new version, none applying it twice (their --state files).

// cluster is two broker nodes the test can kill and start again.
type cluster interface {
	addrs() (a, b string)
	killB(t *testing.T)
	startB(t *testing.T)
}

func TestFleetAcrossRabbitMQCluster(t *testing.T) {
	c := startRabbitCluster(t)
	fleetAcrossCluster(t, c)
}

func TestFleetAcrossBridgedMosquitto(t *testing.T) {
	c := startMosquittoBridge(t)
	fleetAcrossCluster(t, c)
}

func fleetAcrossCluster(t *testing.T, c cluster) {
	const n = 100
	a, b := c.addrs()
	dir := t.TempDir()
	l, maddr := startLeader(t, "--outbox", filepath.Join(dir, "leader.db"), "--broker", "tcp://"+a+",tcp://"+b,
		"--durability", "batch", "--suspect-after", "5s")
	wa := startWorkersState(t, "tcp://"+a, n/2, 0, filepath.Join(dir, "a.json"))
	wb := startWorkersState(t, "tcp://"+b, n/2, n/2, filepath.Join(dir, "b.json"))
	waitMetric(t, maddr, "fleetsim_workers_online", n, waitLong)

	deployWaves(t, "tcp://"+a, "2.0.0", n, 10, time.Second)
	// b dies with the deploy under way: its first waves delivered, the
	// rest to come.
	fleettest.Eventually(t, waitLong, "the first waves delivered", func() error {
		got := metric(t, maddr, `fleetsim_deploy_delivered{deploy="0",version="2.0.0"}`)
		return fleettest.Unless(got >= 20 && got < n, "%v delivered", got)
	})
	c.killB(t)
	waitMetric(t, maddr, "fleetsim_workers_suspect", n/2, waitLong)
	c.startB(t)
	waitMetric(t, maddr, `fleetsim_deploy_delivered{deploy="0",version="2.0.0"}`, n, 3*waitLong)
	if dead := metric(t, maddr, "fleetsim_outbox_dead_letters"); dead != 0 {
		t.Errorf("%v dead letters, want 0: a broker's lost wills must not cost updates", dead)
	}
	for _, w := range []*proc{wa, wb} {
		if code := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("worker exit code %d, want 0", code)
		}
	}
	checkApplied(t, append(readState(t, filepath.Join(dir, "a.json")), readState(t, filepath.Join(dir, "b.json"))...), n, "2.0.0")
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
}

// rabbitCluster is two RabbitMQ nodes with the MQTT plugin, clustered,
// each on ports of its own.
type rabbitCluster struct {
	a, b rabbitNode
}

type rabbitNode struct {
	name, dir       string
	mqtt, amqp, epd int
	p               *exec.Cmd
	vm              int // the Erlang VM's pid, once known
	done            chan struct{}
}

func (c *rabbitCluster) addrs() (string, string) {
	return fmt.Sprintf("127.0.0.1:%d", c.a.mqtt), fmt.Sprintf("127.0.0.1:%d", c.b.mqtt)
}

func startRabbitCluster(t *testing.T) *rabbitCluster {
	t.Helper()
	if _, err := exec.LookPath("rabbitmq-server"); err != nil {
		t.Skip("rabbitmq-server not installed: apt-get install -y rabbitmq-server")
	}
	tag := strconv.Itoa(os.Getpid())
	c := &rabbitCluster{}
	for i, nd := range []*rabbitNode{&c.a, &c.b} {
		nd.name = fmt.Sprintf("fleetsim-%s-%c@localhost", tag, 'a'+i)
		nd.dir = t.TempDir()
		nd.mqtt, nd.amqp, nd.epd = freePort(t), freePort(t), freePort(t)
		conf := fmt.Sprintf("listeners.tcp.default = %d\nmqtt.listeners.tcp.default = %d\nmqtt.allow_anonymous = true\nloopback_users = none\n", nd.amqp, nd.mqtt)
		if err := os.WriteFile(filepath.Join(nd.dir, "rabbitmq.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(nd.dir, "enabled_plugins"), []byte("[rabbitmq_mqtt].\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{"mnesia", "log"} {
			if err := os.MkdirAll(filepath.Join(nd.dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if os.Geteuid() == 0 { // rabbitmq-server runs as the rabbitmq user
			for _, d := range []string{filepath.Dir(nd.dir), nd.dir} {
				if out, err := exec.Command("chown", "-R", "rabbitmq:rabbitmq", d).CombinedOutput(); err != nil {
					t.Fatalf("chown %s: %v: %s", d, err, out)
				}
			}
		}
		nd.start(t)
		t.Cleanup(func() { nd.stop() })
	}
	for _, args := range [][]string{{"stop_app"}, {"join_cluster", c.a.name}, {"start_app"}} {
		if out, err := c.b.ctl(args...); err != nil {
			t.Fatalf("rabbitmqctl %v: %v\n%s", args, err, out)
		}
	}
	c.b.waitMQTT(t)
	return c
}

// env is the node's environment for rabbitmq-server and rabbitmqctl.
func (nd *rabbitNode) env() []string {
	return append(os.Environ(),
		"RABBITMQ_NODENAME="+nd.name,
		"RABBITMQ_CONFIG_FILE="+filepath.Join(nd.dir, "rabbitmq"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(nd.dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(nd.dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(nd.dir, "enabled_plugins"),
		"RABBITMQ_FEATURE_FLAGS_FILE="+filepath.Join(nd.dir, "feature_flags"),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(nd.epd),
	)
}

// start runs the node in a process group of its own (so that killB takes
// the Erlang VM with the script) and waits for its MQTT listener.
func (nd *rabbitNode) start(t *testing.T) {
	t.Helper()
	nd.p = exec.Command("rabbitmq-server")
	nd.p.Env = nd.env()
	nd.p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := nd.p.Start(); err != nil {
		t.Fatal(err)
	}
	nd.done = make(chan struct{})
	go func(p *exec.Cmd, done chan struct{}) { // owned by nd: done says it has returned
		_ = p.Wait()
		close(done)
	}(nd.p, nd.done)
	nd.waitMQTT(t)
	nd.vm = nd.vmPid(t)
}

func (nd *rabbitNode) waitMQTT(t *testing.T) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", nd.mqtt)
	fleettest.Eventually(t, 2*waitLong, "RabbitMQ node "+nd.name+" accepts MQTT on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
}

func (nd *rabbitNode) ctl(args ...string) ([]byte, error) {
	cmd := exec.Command("rabbitmqctl", append([]string{"-n", nd.name}, args...)...)
	cmd.Env = nd.env()
	return cmd.CombinedOutput()
}

// kill SIGKILLs the node's Erlang VM, which the rabbitmq-server script
// may have started in a session of its own (as the rabbitmq user), and
// the script's process group, and waits for the script.
func (nd *rabbitNode) kill() {
	if nd.p == nil {
		return
	}
	if nd.vm > 0 {
		_ = syscall.Kill(nd.vm, syscall.SIGKILL)
	}
	_ = syscall.Kill(-nd.p.Process.Pid, syscall.SIGKILL)
	<-nd.done
	nd.p, nd.vm = nil, 0
}

// vmPid asks the node for its Erlang VM's process id.
func (nd *rabbitNode) vmPid(t *testing.T) int {
	t.Helper()
	out, err := nd.ctl("eval", "os:getpid().")
	s := strings.Trim(strings.TrimSpace(string(out)), `"`)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.Trim(s[i+1:], `"`)
	}
	pid, perr := strconv.Atoi(s)
	if err != nil || perr != nil {
		t.Fatalf("rabbitmqctl eval os:getpid(): %v, %v: %s", err, perr, out)
	}
	return pid
}

// stop stops the node cleanly, then makes sure.
func (nd *rabbitNode) stop() {
	if nd.p == nil {
		return
	}
	_, _ = nd.ctl("stop")
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
	}
	nd.kill()
}

func (c *rabbitCluster) killB(t *testing.T)  { c.b.kill() }
func (c *rabbitCluster) startB(t *testing.T) { c.b.start(t) }

// mosquittoBridge is two Mosquitto brokers, a bridging every topic both
// ways to b.
type mosquittoBridge struct {
	aAddr, bAddr, bConf string
	b                   *proc
}

func (m *mosquittoBridge) addrs() (string, string) { return m.aAddr, m.bAddr }

func startMosquittoBridge(t *testing.T) *mosquittoBridge {
	t.Helper()
	confB, bAddr := mosquittoConf(t)
	confA, aAddr := mosquittoConf(t)
	bridge := fmt.Sprintf("connection to-b\naddress %s\ntopic # both 1\nrestart_timeout 1\ncleansession true\n", bAddr)
	f, err := os.OpenFile(confA, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(bridge)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	m := &mosquittoBridge{aAddr: aAddr, bAddr: bAddr, bConf: confB}
	startMosquitto(t, confA, aAddr)
	m.b = startMosquitto(t, confB, bAddr)
	return m
}

func (m *mosquittoBridge) killB(t *testing.T) { m.b.stop(t, syscall.SIGKILL) }

func (m *mosquittoBridge) startB(t *testing.T) { m.b = startMosquitto(t, m.bConf, m.bAddr) }
