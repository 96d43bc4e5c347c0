package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestStateFile: three worker processes' worth of workers against a
// broker on TCP; a stand-in leader delivers an update twice to one worker
// (a lost ack), a newer and then an older version to another, nothing to
// the third. At exit --state names, per worker, what each applied and
// how often, and what it skipped.
func TestStateFile(t *testing.T) {
	b, err := broker.StartBroker(broker.BrokerOptions{TCPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lead, err := transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer lead.Close(true)
	var tp wire.Topics
	var mu sync.Mutex
	online, acks := map[string]bool{}, map[string]int{}
	if err := lead.Subscribe(ctx, tp.Status("+"), 1, func(topic string, payload []byte) {
		if st, err := wire.ParseStatus(topic, payload); err == nil {
			id, _, _ := tp.Parse(topic)
			mu.Lock()
			online[id] = st.Online
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := lead.Subscribe(ctx, tp.Up("+"), 1, func(topic string, payload []byte) {
		if env, err := wire.Decode(topic, payload, wire.Up, 0); err == nil && env.Kind == wire.KindAck && env.Result == wire.ResultOK {
			id, _, _ := tp.Parse(topic)
			mu.Lock()
			acks[id]++
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "state.json")
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(runCtx, []string{"--broker", "tcp://" + b.Addr(), "--count", "3", "--service", "100us",
			"--heartbeat", "0", "--report", "0", "--state", path}, &stderr)
	}()
	ids := []string{"w-0000", "w-0001", "w-0002"}
	fleettest.Eventually(t, 20*time.Second, "three workers online", func() error {
		mu.Lock()
		defer mu.Unlock()
		return fleettest.Unless(online[ids[0]] && online[ids[1]] && online[ids[2]], "online: %v", online)
	})
	send := func(worker, id string, seq uint64, version string) {
		t.Helper()
		p, err := wire.Encode(wire.Envelope{ID: id, Kind: wire.KindFirmware, Key: "firmware", Seq: seq, Body: wire.Body(wire.Apply{Version: version})})
		if err != nil {
			t.Fatal(err)
		}
		if err := lead.Publish(ctx, tp.Down(worker), 1, false, p); err != nil {
			t.Fatal(err)
		}
	}
	sent := time.Now().Truncate(time.Millisecond) // applied_at has ms
	send(ids[0], "c1", 1, "2.0.0")
	send(ids[0], "c2", 1, "2.0.0") // the leader never got the first ack
	send(ids[1], "c3", 2, "2.1.0")
	send(ids[1], "c4", 1, "2.0.0") // older than what it runs
	fleettest.Eventually(t, 20*time.Second, "every command acked", func() error {
		mu.Lock()
		defer mu.Unlock()
		return fleettest.Unless(acks[ids[0]] == 2 && acks[ids[1]] == 2, "acks: %v", acks)
	})
	stop()
	if c := <-code; c != cli.ExitOK {
		t.Fatalf("worker exited %d:\n%s", c, stderr.String())
	}
	exited := time.Now()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got stateFile
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	want := []workerState{
		{ID: ids[0], Version: "2.0.0", Applied: 1, AppliedVersions: map[string]int{"2.0.0": 1}, Duplicates: 1, AckedOK: 2},
		{ID: ids[1], Version: "2.1.0", Applied: 1, AppliedVersions: map[string]int{"2.1.0": 1}, Stale: 1, AckedOK: 2},
		{ID: ids[2], Version: "1.0.0", AppliedVersions: map[string]int{}},
	}
	if len(got.Workers) != len(want) {
		t.Fatalf("%d workers in %s, want 3:\n%s", len(got.Workers), path, data)
	}
	for i, w := range want {
		g := got.Workers[i]
		if g.ID != w.ID || g.Version != w.Version || g.Applied != w.Applied || g.Duplicates != w.Duplicates || g.Stale != w.Stale ||
			g.AckedOK != w.AckedOK || len(g.AppliedVersions) != len(w.AppliedVersions) {
			t.Errorf("worker %d: %+v, want %+v", i, g, w)
			continue
		}
		for v, n := range w.AppliedVersions {
			if g.AppliedVersions[v] != n {
				t.Errorf("%s applied %s %d times, want %d", g.ID, v, g.AppliedVersions[v], n)
			}
		}
		if len(g.AppliedAt) != len(w.AppliedVersions) {
			t.Errorf("%s: applied_at %v, want a time for each of %v", g.ID, g.AppliedAt, w.AppliedVersions)
		}
		for v, s := range g.AppliedAt {
			at, err := time.Parse(time.RFC3339, s)
			if err != nil || !strings.HasSuffix(s, "Z") || len(s) != len("2006-01-02T15:04:05.000Z") {
				t.Errorf("%s: applied_at[%s] = %q, want RFC 3339 in UTC with milliseconds (%v)", g.ID, v, s, err)
				continue
			}
			if at.Before(sent) || at.After(exited) {
				t.Errorf("%s: applied_at[%s] = %s, want between the send (%s) and the worker's exit (%s)",
					g.ID, v, s, sent.UTC().Format(TimeFormat), exited.UTC().Format(TimeFormat))
			}
		}
	}
}

// TestStateFileUnwritable: a --state path that cannot be created is a
// usage error naming the flag, before any worker runs.
func TestStateFileUnwritable(t *testing.T) {
	var errb bytes.Buffer
	bad := filepath.Join(t.TempDir(), "missing", "state.json")
	code := Main(context.Background(), []string{"--state", bad}, &errb)
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "--state "+bad) {
		t.Fatalf("exit %d, output:\n%s\nwant exit %d naming --state", code, errb.String(), cli.ExitUsage)
	}
}

// TestWriteFileAtomic: replacing a state file leaves the old one whole
// until the new one is, whatever fails on the way: while the new content
// is written (the moment a crash would catch) the file still reads as
// the old one; a write or a rename that fails leaves it so, and no
// temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	const old, next = "old state\n", "the new state, whole\n"
	errCrash := errors.New("crashed half way")
	for _, tc := range []struct {
		name   string
		fail   error // what the write returns
		rename func(string, string) error
		want   string
	}{
		{"replaced", nil, nil, next},
		{"write fails half way", errCrash, nil, old},
		{"rename fails", nil, func(string, string) error { return errors.New("rename: no space left") }, old},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.rename != nil {
				defer func(r func(string, string) error) { rename = r }(rename)
				rename = tc.rename
			}
			err := writeFileAtomic(path, func(w io.Writer) error {
				if _, err := io.WriteString(w, next[:len(next)/2]); err != nil {
					return err
				}
				if mid, err := os.ReadFile(path); err != nil || string(mid) != old {
					t.Errorf("half way through the write the file holds %q (%v), want the old %q", mid, err, old)
				}
				if tc.fail != nil {
					return tc.fail
				}
				_, err := io.WriteString(w, next[len(next)/2:])
				return err
			})
			if (err != nil) != (tc.want == old) {
				t.Errorf("writeFileAtomic: %v", err)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != tc.want {
				t.Errorf("the file holds %q (%v), want %q", got, err, tc.want)
			}
			if entries, err := os.ReadDir(filepath.Dir(path)); err != nil || len(entries) != 1 {
				t.Errorf("the directory holds %v (%v), want only the state file", entries, err)
			}
		})
	}
}
