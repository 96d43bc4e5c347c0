package scenario

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestLoadBad loads every file in testdata/bad and compares the error text
// with its golden file: the whole message a user sees, positions included.
func TestLoadBad(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file)
			if err == nil {
				t.Fatalf("loaded without error: %+v", s)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is %T, want Errors: %v", err, err)
			}
			for _, e := range es {
				if e.File != file || e.Line < 1 || e.Col < 1 || e.Msg == "" {
					t.Errorf("error without a place: %#v", e)
				}
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error text differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	var es Errors
	if err == nil || errors.As(err, &es) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a not-exist error that is not Errors", err)
	}
}

func TestLoadMinimalDefaults(t *testing.T) {
	s, err := Load("testdata/good/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := s.Fleet.Worker
	l := s.Leader
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"file", s.File, "testdata/good/minimal.yaml"},
		{"seed", s.Seed, uint64(1)},
		{"speed", s.Speed, 1.0},
		{"drain", s.Drain, Duration(time.Minute)},
		{"sample_every", s.SampleEvery, Duration(200 * time.Millisecond)},
		{"worker mailbox", *w.Mailbox, MailboxSpec{Capacity: 16, Policy: mailbox.Reject}},
		{"worker service", *w.Service, dist.Const(time.Millisecond)},
		{"worker heartbeat", w.Heartbeat, (*Duration)(nil)},
		{"worker reconnect", *w.Reconnect, ReconnectSpec{Policy: "backoff", Base: Duration(time.Second), Cap: Duration(time.Minute)}},
		{"worker keepalive", *w.KeepAlive, Duration(5 * time.Second)},
		{"worker ask_timeout", *w.AskTimeout, Duration(5 * time.Second)},
		{"worker version", *w.Version, "1.0.0"},
		{"worker local_outbox", *w.LocalOutbox, 1000},
		{"leader mailbox", l.Mailbox, MailboxSpec{Capacity: 1000, Policy: mailbox.Reject, BlockTimeout: Duration(time.Second)}},
		{"leader service", *l.Service, dist.Const(time.Millisecond)},
		{"leader heartbeat_interval", l.HeartbeatInterval, Duration(30 * time.Second)},
		{"leader ask_timeout", l.AskTimeout, Duration(5 * time.Second)},
		{"outbox", l.Outbox, OutboxSpec{Durability: "batch", Partitions: 4, MaxAttempts: 10, LeaseTimeout: Duration(30 * time.Second)}},
		{"relay interval", l.Relay.Interval, Duration(5 * time.Millisecond)},
		{"relay batch", l.Relay.Batch, 20},
		{"relay limit", l.Relay.Limit, LimitSpec{Initial: 10, Min: 1, Max: 50, Strategy: "aimd"}},
		{"relay backoff", l.Relay.Backoff, BackoffSpec{Base: Duration(100 * time.Millisecond), Cap: Duration(30 * time.Second)}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
}
