//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/proctest"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// childEnv makes the test binary run as leader, for the tests that need a
// process of its own (proctest).
const childEnv = "FLEETSIM_TEST_RUN_LEADER"

func TestMain(m *testing.M) {
	proctest.AsChild(childEnv, main)
	os.Exit(m.Run())
}

// brokerAddr finds the embedded broker's address in the leader's log.
var brokerAddr = regexp.MustCompile(`msg="broker listening" addr=(\S+)`)

// leaderStatus connects to the leader's embedded broker at addr and
// returns what its retained status topic says, as it changes.
func leaderStatus(t *testing.T, addr string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := transport.Connect(ctx, transport.ClientOptions{ID: "observer", Broker: "tcp://" + addr, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(false) })
	var mu sync.Mutex
	var status string
	var tp wire.Topics
	if err := c.Subscribe(ctx, tp.LeaderStatus(), 1, func(_ string, payload []byte) {
		mu.Lock()
		status = string(payload)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return status
	}
}

func leaderArgs(t *testing.T) []string {
	return []string{"run", "--listen", "127.0.0.1:0", "--outbox", filepath.Join(t.TempDir(), "leader.db"), "--stats-interval", "0"}
}

// TestStopSignals: SIGHUP (the terminal closed), as SIGINT and SIGTERM,
// stops a leader process gracefully: it logs "leader stopped" and exits
// 0. (SIGHUP killed it, exit 129.)
func TestStopSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts leader processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := proctest.Start(t, proctest.Options{Env: childEnv}, leaderArgs(t)...)
			p.Stderr.WaitFor(t, p, `msg="leader running"`, time.Minute)
			m := brokerAddr.FindStringSubmatch(p.Stderr.String())
			if m == nil {
				t.Fatalf("no broker address in the log:\n%s", p)
			}
			status := leaderStatus(t, m[1])
			fleettest.Eventually(t, 30*time.Second, "the leader online", func() error {
				return fleettest.Unless(status() == wire.StatusOnline, "status %q", status())
			})
			p.Signal(t, sig)
			if code := p.Wait(t, 30*time.Second); code != 0 {
				t.Fatalf("exit %d after %v, want 0\n%s", code, sig, p)
			}
			// Its "offline" cannot be read here: the embedded broker closes
			// right after it, its clients with it.
			p.Stderr.WaitFor(t, p, `msg="leader stopped"`, time.Second)
		})
	}
}

// TestBrokenPipe: a leader whose stderr's reader is gone (leader 2>&1 |
// tee log, and the Ctrl-C that stops the leader ended tee first) is not
// killed by SIGPIPE when it logs its shutdown: it stops gracefully and
// exits 0. (It died of SIGPIPE at "leader stopped".)
func TestBrokenPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts leader processes")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, proctest.Options{Env: childEnv, Stderr: w}, leaderArgs(t)...)
	running := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), `msg="leader running"`) {
				break
			}
		}
		running <- log.String()
		_, _ = io.Copy(io.Discard, r) // until the test closes r
	}()
	var log string
	select {
	case log = <-running:
	case <-p.Done():
		t.Fatal("the leader ended before it was running")
	case <-time.After(time.Minute):
		t.Fatal("the leader is not running after a minute")
	}
	m := brokerAddr.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no broker address in the log:\n%s", log)
	}
	status := leaderStatus(t, m[1])
	fleettest.Eventually(t, 30*time.Second, "the leader online", func() error {
		return fleettest.Unless(status() == wire.StatusOnline, "status %q", status())
	})
	r.Close() // the reader is gone: the next write to stderr fails
	p.Signal(t, os.Interrupt)
	if code := p.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}
