package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// deadLetterFile makes an outbox file holding one dead letter per
// receiver, as a leader would leave it after workers rejected commands.
func deadLetterFile(t *testing.T, receivers ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "leader.db")
	st, err := outbox.OpenBolt(path, outbox.Options{Partitions: 4, Durability: outbox.None})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, r := range receivers {
		if _, err := st.Enqueue(ctx, outbox.Message{Receiver: r, Kind: "firmware", Key: "firmware", Seq: 1, Conflict: outbox.Overwrite, Payload: []byte(`{"version":"9"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for p := range 4 {
		ms, err := st.Dequeue(ctx, p, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if err := st.DeadLetter(ctx, m.ID, "worker "+m.Receiver+" rejected: unknown version"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := st.Stats().DeadLetters; n != len(receivers) {
		t.Fatalf("%d dead letters, want %d", n, len(receivers))
	}
	return path
}

func TestDLQ(t *testing.T) {
	path := deadLetterFile(t, "w-0001", "w-0002", "w-0003")

	code, out, errs := leaderMain(t, "dlq", "list", "--outbox", path)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	for _, want := range []string{"ID", "RECEIVER", "LAST ERROR", "w-0001", "w-0003", "rejected: unknown version", "3 dead letters (3 in the file)"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = leaderMain(t, "dlq", "replay", "--outbox", path, "1", "999")
	if code != 0 || !strings.Contains(out, "replayed 1 of 2 dead letters asked (2 left)") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = leaderMain(t, "dlq", "purge", "--outbox", path, "--all")
	if code != 0 || !strings.Contains(out, "purged 2 of 2 dead letters asked (0 left)") {
		t.Fatalf("purge: exit %d\n%s%s", code, out, errs)
	}
	// The replayed one is queued again for the next leader.
	st, err := outbox.OpenBolt(path, outbox.Options{Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := st.Stats()
	st.Close()
	if s.Depth != 1 || s.DeadLetters != 0 {
		t.Fatalf("after replay and purge: depth %d, dead letters %d; want 1 and 0", s.Depth, s.DeadLetters)
	}
}

func TestDLQRefuses(t *testing.T) {
	path := deadLetterFile(t, "w-0001")
	held, err := outbox.OpenBolt(filepath.Join(t.TempDir(), "held.db"), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"locked by a running leader", []string{"dlq", "list", "--outbox", held.Path()}, cli.ExitOutbox, "stop that leader first"},
		{"missing file", []string{"dlq", "list", "--outbox", filepath.Join(t.TempDir(), "nope.db")}, cli.ExitOutbox, "does not exist"},
		{"replay without ids", []string{"dlq", "replay", "--outbox", path}, cli.ExitUsage, "give dead-letter ids"},
		{"purge ids and all", []string{"dlq", "purge", "--outbox", path, "--all", "1"}, cli.ExitUsage, "give dead-letter ids"},
		{"bad id", []string{"dlq", "purge", "--outbox", path, "x1"}, cli.ExitUsage, `argument "x1": want a dead-letter id`},
		{"bad max", []string{"dlq", "list", "--outbox", path, "--max", "-1"}, cli.ExitUsage, "--max -1"},
		{"unknown dlq command", []string{"dlq", "drop"}, cli.ExitUsage, `unknown command "drop" for "leader dlq" (valid: list, purge, replay)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := leaderMain(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, tc.code, tc.want)
			}
		})
	}
}
