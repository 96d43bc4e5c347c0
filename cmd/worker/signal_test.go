//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fleetsim/fleetsim/cmd/internal/proctest"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// childEnv makes the test binary run as worker, for the tests that need a
// process of its own (proctest).
const childEnv = "FLEETSIM_TEST_RUN_WORKER"

func TestMain(m *testing.M) {
	proctest.AsChild(childEnv, main)
	goleak.VerifyTestMain(m)
}

// fleetWatch is a broker on TCP for worker processes, and what their
// retained status topics last said.
type fleetWatch struct {
	b      *broker.Broker
	mu     sync.Mutex
	online map[string]bool
}

func startFleetWatch(t *testing.T) *fleetWatch {
	t.Helper()
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lead, err := transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lead.Close(true) })
	f := &fleetWatch{b: b, online: map[string]bool{}}
	var tp wire.Topics
	if err := lead.Subscribe(ctx, tp.Status("+"), 1, func(topic string, payload []byte) {
		if st, err := wire.ParseEpochStatus(topic, payload); err == nil {
			id, _, _ := tp.Parse(topic)
			f.mu.Lock()
			f.online[id] = st.Online
			f.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// wait waits until every one of ids is online (or, with online false,
// has announced itself offline).
func (f *fleetWatch) wait(t *testing.T, online bool, ids ...string) {
	t.Helper()
	fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("%v online=%v", ids, online), func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, id := range ids {
			if st, ok := f.online[id]; !ok || st != online {
				return fmt.Errorf("statuses: %v", f.online)
			}
		}
		return nil
	})
}

// oldState is a --state file from an earlier run.
const oldState = `{"workers": [{"id": "w-0000", "version": "0.9.0"}]}` + "\n"

// checkState fails the test unless path is a whole state file of the
// workers ids.
func checkStateFile(t *testing.T, path string, ids ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got stateFile
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s (%d bytes): %v\n%s", path, len(data), err, data)
	}
	if len(got.Workers) != len(ids) {
		t.Fatalf("%s: %d workers, want %d:\n%s", path, len(got.Workers), len(ids), data)
	}
	for i, id := range ids {
		if w := got.Workers[i]; w.ID != id || w.Version != "1.0.0" {
			t.Errorf("%s: worker %d is %+v, want %s at 1.0.0", path, i, w, id)
		}
	}
}

func workerArgs(f *fleetWatch, state string) []string {
	return []string{"--broker", "tcp://" + f.b.Addr(), "--count", "2", "--heartbeat", "0", "--report", "0", "--state", state}
}

// TestStopSignals: SIGHUP (the terminal closed), as SIGINT and SIGTERM,
// stops a worker process gracefully: each worker announces itself
// offline, the summary says "workers stopped", the --state file is
// written whole and worker exits 0. (SIGHUP killed it, exit 129, leaving
// the state file empty.)
func TestStopSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			f := startFleetWatch(t)
			state := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(state, []byte(oldState), 0o644); err != nil {
				t.Fatal(err)
			}
			p := proctest.Start(t, proctest.Options{Env: childEnv}, workerArgs(f, state)...)
			f.wait(t, true, "w-0000", "w-0001")
			p.Signal(t, sig)
			if code := p.Wait(t, 30*time.Second); code != 0 {
				t.Fatalf("exit %d after %v, want 0\n%s", code, sig, p)
			}
			p.Stderr.WaitFor(t, p, `msg="workers stopped"`, time.Second)
			f.wait(t, false, "w-0000", "w-0001")
			checkStateFile(t, state, "w-0000", "w-0001")
		})
	}
}

// TestBrokenPipe: a worker whose stderr's reader is gone (worker 2>&1 |
// tee log, and the Ctrl-C that stops the worker ended tee first) is not
// killed by SIGPIPE at its next log line: it stops gracefully, on the
// signal or on the broken pipe itself, announces its workers offline and
// writes its state file. (It died of SIGPIPE logging "workers stopped",
// before the state file was written.)
func TestBrokenPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	for _, tc := range []struct {
		name string
		sig  os.Signal // nil: the broken pipe alone stops it
		args []string
	}{
		{"then SIGINT", os.Interrupt, nil},
		{"alone", nil, []string{"--report", "20ms"}}, // the summary is the write that breaks
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFleetWatch(t)
			state := filepath.Join(t.TempDir(), "state.json")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				_, _ = io.Copy(io.Discard, r)
			}()
			p := proctest.Start(t, proctest.Options{Env: childEnv, Stderr: w}, append(workerArgs(f, state), tc.args...)...)
			f.wait(t, true, "w-0000", "w-0001")
			r.Close() // the reader is gone: the next write to stderr fails
			<-drained
			if tc.sig != nil {
				p.Signal(t, tc.sig)
			}
			if code := p.Wait(t, 30*time.Second); code != 0 {
				t.Fatalf("exit %d, want 0", code)
			}
			f.wait(t, false, "w-0000", "w-0001")
			checkStateFile(t, state, "w-0000", "w-0001")
		})
	}
}

// TestKilledKeepsState: a worker killed (-9) while it runs leaves the
// state file of the run before whole: the file is replaced only at exit,
// atomically. (It was emptied at the start.)
func TestKilledKeepsState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	f := startFleetWatch(t)
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, []byte(oldState), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, proctest.Options{Env: childEnv}, workerArgs(f, state)...)
	f.wait(t, true, "w-0000", "w-0001")
	p.Signal(t, syscall.SIGKILL)
	<-p.Done()
	if data, err := os.ReadFile(state); err != nil || string(data) != oldState {
		t.Fatalf("after kill -9 the state file holds %q (%v), want the earlier run's %q", data, err, oldState)
	}
	entries, err := os.ReadDir(filepath.Dir(state))
	if err != nil || len(entries) != 1 {
		t.Errorf("the state file's directory holds %v (%v), want only the state file", entries, err)
	}
}
