package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// syncBuffer is a bytes.Buffer safe to write from the worker's goroutines
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker runs worker's Main with args on a goroutine; stop ends its
// context, and exit waits (at most a minute) for its exit code.
func startWorker(t *testing.T, args ...string) (stderr *syncBuffer, stop func(), exit func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	code := make(chan int, 1)
	go func() { code <- Main(ctx, args, stderr) }()
	exit = func() int {
		t.Helper()
		select {
		case c := <-code:
			return c
		case <-time.After(time.Minute):
			cancel()
			<-code
			t.Fatalf("worker still running after a minute:\n%s", stderr)
			return -1
		}
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-code:
		default:
		}
	})
	return stderr, cancel, exit
}

// closedPort returns an address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableBroker: against a port where nothing listens, worker
// logs each failed connect with its reason and, when no session has
// connected within --connect-timeout, exits 1 naming the broker and the
// reason. (It ran on, logging online=0, and said nothing.)
func TestUnreachableBroker(t *testing.T) {
	addr := closedPort(t)
	stderr, _, exit := startWorker(t, "--broker", "tcp://"+addr, "--count", "3", "--connect-timeout", "300ms", "--report", "0")
	code := exit()
	out := stderr.String()
	for _, want := range []string{
		`msg="connect failed" component=worker broker=tcp://` + addr + ` worker=w-000`,
		`reason="connection refused (nothing listens there)"`,
		"worker: error: no session connected to tcp://" + addr + " within --connect-timeout 300ms: connection refused (nothing listens there)",
		"is the leader (or the broker) running and listening there?",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	if code != cli.ExitRuntime {
		t.Errorf("exit %d, want %d", code, cli.ExitRuntime)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestBrokerComesLate: a worker started before its broker logs the
// failures, and connects once the broker is there, within
// --connect-timeout: it runs on.
func TestBrokerComesLate(t *testing.T) {
	addr := closedPort(t)
	stderr, stop, exit := startWorker(t, "--broker", "tcp://"+addr, "--count", "2", "--connect-timeout", "1m", "--report", "0",
		"--backoff-base", "20ms", "--backoff-cap", "100ms")
	fleettest.Eventually(t, 30*time.Second, "a failed connect logged", func() error {
		return fleettest.Unless(strings.Contains(stderr.String(), `msg="connect failed"`), "output:\n%s", stderr)
	})
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: addr})
	if err != nil {
		t.Skipf("the port of the broker that was not there is taken since: %v", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	}()
	fleettest.Eventually(t, 30*time.Second, "the workers connected", func() error {
		return fleettest.Unless(strings.Contains(stderr.String(), `msg="connected to the broker"`) && b.Stats().ClientsConnected >= 2,
			"%d clients; output:\n%s", b.Stats().ClientsConnected, stderr)
	})
	stop()
	if code := exit(); code != cli.ExitOK {
		t.Fatalf("exit %d, want 0:\n%s", code, stderr)
	}
}

// TestRefusedLogin: against a broker that checks logins, a worker with no
// credentials, or credentials from another fleet secret, is refused, and
// exits 2 at once (long before --connect-timeout) saying why and what to
// give: retrying cannot help. (It ran on, silent.)
func TestRefusedLogin(t *testing.T) {
	secret := []byte("0123456789abcdef-fleet")
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: &broker.Auth{LeaderPassword: "leader-pw", Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	}()
	other, err := wire.IssueCredentials([]byte("another-fleet-secret-0123456789"), wire.DeviceRange{Prefix: "w-", First: 0, Last: 9})
	if err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(t.TempDir(), "other.cred")
	if err := os.WriteFile(cred, other.File(), 0o600); err != nil {
		t.Fatal(err)
	}
	broker := "tcp://" + b.Addr()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no credentials", nil, []string{
			"worker: error: the broker at " + broker + " refused the login of w-000",
			"login refused (CONNACK 5: not Authorized)",
			"it checks logins and this worker gave none; give --credentials-file, issued on the leader's machine by 'leader credentials --secret-file FLEET-SECRET --range w-0000..w-0001 --out host.cred'",
		}},
		{"another fleet's credentials", []string{"--credentials-file", cred}, []string{
			"worker: error: --credentials-file " + cred + ": the broker at " + broker + " refused the login of w-000",
			"these credentials are not from this broker's fleet secret",
		}},
		{"a gateway with another fleet's credentials", []string{"--credentials-file", cred, "--gateway-size", "2"}, []string{
			"worker: error: --credentials-file " + cred + ": the broker at " + broker + " refused the login of gw-w-0000",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--broker", broker, "--count", "2", "--connect-timeout", "10m", "--report", "0"}, tc.args...)
			stderr, _, exit := startWorker(t, args...)
			code := exit()
			out := stderr.String()
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("the output does not say %q", want)
				}
			}
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d", code, cli.ExitUsage)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// fakeDialer answers each Dial with the next of its errors.
type fakeDialer struct {
	mu   sync.Mutex
	errs []error
}

func (f *fakeDialer) next() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.errs[0]
	f.errs = f.errs[1:]
	return err
}

func (f *fakeDialer) Dial(context.Context, worker.DialOptions) (worker.Session, error) {
	return nil, f.next()
}

func (f *fakeDialer) DialGateway(context.Context, worker.GatewayDialOptions) (worker.GatewayLink, error) {
	return nil, f.next()
}

// TestConnWatch: failures before the first connect are counted and the
// first refused login ends the wait; once a session has connected, a
// refusal (a broker restarted with other credentials) is logged and
// retried, not a reason to exit. Failures of one reason are logged once
// per interval, the next line saying how many were not.
func TestConnWatch(t *testing.T) {
	refusal := &transport.RefusedError{Op: "connect", Code: 5, Err: packets.ErrorRefusedNotAuthorised}
	refused := errors.New("network Error : dial tcp: connect: connection refused")
	var log syncBuffer
	d := &fakeDialer{errs: []error{refused, refused, refused, nil, refusal}}
	w := newConnWatch(d, "tcp://broker:1883", slog.New(slog.NewTextHandler(&log, nil)))
	now := time.Unix(0, 0)
	w.now = func() time.Time { return now }
	ctx := context.Background()
	for i := range 3 {
		now = now.Add(3 * time.Second)
		_, _ = w.Dial(ctx, worker.DialOptions{ID: "w-000" + string(rune('0'+i))})
	}
	if n, last := w.Last(); n != 3 || last != refused || w.Up() {
		t.Fatalf("after 3 failures: %d failures, last %v, up %v", n, last, w.Up())
	}
	if got := strings.Count(log.String(), `msg="connect failed"`); got != 2 || !strings.Contains(log.String(), "worker=w-0002") ||
		!strings.Contains(log.String(), "also_failed=1") {
		t.Fatalf("3 failures, 3 s apart, logged every 5 s: want 2 lines, the second saying 1 more failed:\n%s", log.String())
	}
	if _, err := w.Dial(ctx, worker.DialOptions{ID: "w-0003"}); err != nil || !w.Up() {
		t.Fatalf("a session connected: %v, up %v", err, w.Up())
	}
	_, _ = w.Dial(ctx, worker.DialOptions{ID: "w-0004"})
	select {
	case <-w.Refused():
		t.Fatal("a refusal after a session connected ends the wait")
	default:
	}
	if !strings.Contains(log.String(), "worker=w-0004 reason=\"login refused (CONNACK 5: not Authorized)\"") {
		t.Fatalf("the refusal is not logged:\n%s", log.String())
	}

	w = newConnWatch(&fakeDialer{errs: []error{refused, refusal}}, "tcp://broker:1883", slog.New(slog.DiscardHandler))
	_, _ = w.Dial(ctx, worker.DialOptions{ID: "w-0000"})
	_, _ = w.DialGateway(ctx, worker.GatewayDialOptions{ID: "gw-w-0000"})
	select {
	case <-w.Refused():
	default:
		t.Fatal("a refused login before any session connected does not end the wait")
	}
	if id, err := w.Refusal(); id != "gw-w-0000" || err != refusal {
		t.Fatalf("refusal %s %v", id, err)
	}
}
