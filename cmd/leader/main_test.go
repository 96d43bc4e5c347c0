package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

// parseRun parses args as 'leader run' flags and validates them.
func parseRun(t *testing.T, args ...string) (runConfig, error) {
	t.Helper()
	var o runOptions
	c := &cobra.Command{}
	o.addFlags(c)
	if err := c.ParseFlags(args); err != nil {
		return runConfig{}, err
	}
	return o.validate()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunFlags(t *testing.T) {
	secret := writeFile(t, "secret", "0123456789abcdef0123456789abcdef\n")
	short := writeFile(t, "short", "tooshort")
	pw := writeFile(t, "pw", "leader-pw\n")
	empty := writeFile(t, "empty", "\n")
	cases := []struct {
		name string
		args []string
		want string // "" = valid; else a substring of the error
	}{
		{"defaults", nil, ""},
		{"durability batch", []string{"--durability", "batch"}, ""},
		{"durability unknown", []string{"--durability", "fast"}, `--durability "fast": want sync, batch or none`},
		{"retry hint unknown", []string{"--retry-after", "later"}, `--retry-after "later": want drain or spread`},
		{"partitions zero", []string{"--partitions", "0"}, "--partitions 0: want 1 to 256"},
		{"max attempts", []string{"--max-attempts", "0"}, "--max-attempts 0"},
		{"limit min", []string{"--limit-min", "0"}, "--limit-min 0: want at least 1"},
		{"limit max below min", []string{"--limit-min", "5", "--limit-max", "4", "--limit-initial", "5"}, "--limit-max 4: want at least --limit-min (5)"},
		{"limit initial above max", []string{"--limit-initial", "60"}, "--limit-initial 60: want between --limit-min (1) and --limit-max (50)"},
		{"relay interval", []string{"--relay-interval", "0s"}, "--relay-interval 0s"},
		{"relay batch", []string{"--relay-batch", "0"}, "--relay-batch 0"},
		{"ask timeout", []string{"--ask-timeout", "-1s"}, "--ask-timeout"},
		{"mailbox", []string{"--mailbox", "0"}, "--mailbox 0"},
		{"heartbeat", []string{"--heartbeat-interval", "0s"}, "--heartbeat-interval"},
		{"stats interval", []string{"--stats-interval", "-1s"}, "--stats-interval"},
		{"deploy history", []string{"--deploy-history", "0"}, "--deploy-history 0: want at least 1"},
		{"metrics addr", []string{"--metrics-addr", "9464"}, `--metrics-addr "9464": want host:port`},
		{"listen bad", []string{"--listen", "nowhere"}, `--listen "nowhere": want host:port`},
		{"listen public without auth", []string{"--listen", "0.0.0.0:1883"}, "not a loopback address"},
		{"listen public insecure", []string{"--listen", "0.0.0.0:1883", "--insecure-no-auth"}, ""},
		{"listen public with auth", []string{"--listen", "0.0.0.0:1883", "--secret-file", secret, "--leader-password-file", pw}, ""},
		{"secret without password", []string{"--secret-file", secret}, "--secret-file and --leader-password-file go together"},
		{"secret too short", []string{"--secret-file", short, "--leader-password-file", pw}, "want at least 16"},
		{"password empty", []string{"--secret-file", secret, "--leader-password-file", empty}, "the file is empty"},
		{"secret missing", []string{"--secret-file", "/nonexistent/s", "--leader-password-file", pw}, "--secret-file: open /nonexistent/s"},
		{"broker", []string{"--broker", "tcp://127.0.0.1:1883"}, ""},
		{"broker with password", []string{"--broker", "tcp://10.0.0.1:1883", "--leader-password-file", pw}, ""},
		{"broker bad scheme", []string{"--broker", "http://x:1"}, `--broker "http://x:1": broker "http://x:1": scheme "http" not supported: want tcp://host:port`},
		{"broker list with a bad entry", []string{"--broker", "tcp://a:1883,tcp://b"}, `--broker "tcp://a:1883,tcp://b": broker entry 2 of 2 ("tcp://b"): not tcp://host:port`},
		{"broker no port", []string{"--broker", "tcp://x"}, `--broker "tcp://x"`},
		{"broker with secret", []string{"--broker", "tcp://x:1", "--secret-file", secret}, "--secret-file: only for the embedded broker"},
		{"prefix", []string{"--topic-prefix", "a/b"}, `--topic-prefix "a/b"`},
		{"client id", []string{"--client-id", "_leader-eu1"}, ""},
		{"client id of a worker", []string{"--client-id", "w-1"}, `--client-id "w-1": want 1 to 128 characters`},
		{"max packet size", []string{"--max-packet-size", "4194304"}, ""},
		{"max packet size too small", []string{"--max-packet-size", "1000"}, "--max-packet-size 1000: want 66560 (64 KiB + 1 KiB) to 268435460 bytes"},
		{"max packet size with broker", []string{"--broker", "tcp://x:1", "--max-packet-size", "4194304"}, "--max-packet-size: only for the embedded broker"},
		{"packet read timeout too short", []string{"--packet-read-timeout", "500ms"}, "--packet-read-timeout 500ms: want 0 (no limit) or at least 1s"},
		{"max connections negative", []string{"--max-connections", "-1"}, "--max-connections -1: want 0 (no cap) or a positive count"},
		{"max partial bytes under a packet", []string{"--max-partial-bytes", "100000"}, "--max-partial-bytes 100000: want 0 (no bound) or at least --max-packet-size (1048576)"},
		{"max partial bytes follows a large packet size", []string{"--max-packet-size", "134217728"}, ""},
		{"worker rate not a number", []string{"--worker-rate", "NaN"}, "--worker-rate NaN: want 0 (no limit) or a positive number"},
		{"worker byte rate negative", []string{"--worker-byte-rate", "-5"}, "--worker-byte-rate -5: want 0 (no limit)"},
		{"worker burst zero", []string{"--worker-burst", "0"}, "--worker-burst 0: want at least 1"},
		{"worker byte burst zero", []string{"--worker-byte-burst", "0"}, "--worker-byte-burst 0: want at least 1"},
		{"broker limits off", []string{"--worker-rate", "0", "--worker-byte-rate", "0", "--max-connections", "0", "--packet-read-timeout", "0", "--max-partial-bytes", "0"}, ""},
		{"broker limits with broker", []string{"--broker", "tcp://x:1", "--worker-rate", "5"}, "--worker-*: only for the embedded broker"},
		{"outbox empty", []string{"--outbox", ""}, "--outbox: want a file path"},
		{"not a duration", []string{"--ask-timeout", "soon"}, `invalid argument "soon" for "--ask-timeout"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := parseRun(t, tc.args...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
			_ = rc
		})
	}
	rc, err := parseRun(t, "--secret-file", secret, "--leader-password-file", pw)
	if err != nil || rc.auth == nil || rc.auth.LeaderPassword != "leader-pw" || len(rc.auth.Secret) != 32 {
		t.Fatalf("auth from files: %+v, %v", rc.auth, err)
	}
}

// leaderMain runs the command line and returns the exit code and output.
func leaderMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked.db")
	st, err := outbox.OpenBolt(locked, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	corrupt := writeFile(t, "corrupt.db", strings.Repeat("not a bbolt file ", 1000))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, cli.ExitUsage, `unknown command "frobnicate" for "leader" (valid: `},
		{"unknown flag", []string{"run", "--no-such-flag"}, cli.ExitUsage, "unknown flag: --no-such-flag"},
		{"bad flag value on the root", []string{"--partitions", "many"}, cli.ExitUsage, `invalid argument "many" for "--partitions"`},
		{"bad durability", []string{"run", "--durability", "fast"}, cli.ExitUsage, "Run 'leader run --help'"},
		{"bad log level", []string{"run", "--log-level", "loud", "--listen", "127.0.0.1:0"}, cli.ExitUsage, `--log-level "loud": want debug, info, warn or error`},
		{"locked outbox", []string{"run", "--outbox", locked, "--listen", "127.0.0.1:0"}, cli.ExitOutbox, "is locked by another process"},
		{"corrupt outbox", []string{"--outbox", corrupt, "--listen", "127.0.0.1:0"}, cli.ExitOutbox, "not a bbolt database or is damaged"},
		{"deploy without version", []string{"deploy", "--all"}, cli.ExitUsage, "--version is required"},
		{"deploy bad version", []string{"deploy", "--version", "2.0\n", "--all"}, cli.ExitUsage, `--version "2.0\n": character '\n' not allowed: want 1 to 64 characters of letters, digits or . _ + -`},
		// The worker refuses a version that starts with "-": so does the
		// command, before it asks the leader anything.
		{"deploy version -1", []string{"deploy", "--version", "-1", "--workers", "w-0003"}, cli.ExitUsage, `--version "-1": starts with '-': want 1 to 64 characters`},
		{"deploy in too many waves", []string{"deploy", "--version", "2", "--workers", "w-000000..w-100000", "--wave-size", "1"}, cli.ExitUsage, "--wave-size 1: 100001 targets in waves of 1 make 100001 waves, at most 100000"},
		{"cancel a negative deploy", []string{"deploy", "--cancel", "-1"}, cli.ExitUsage, "--cancel -1: want the number of a deploy, 0 or more"},
		{"cancel with a version", []string{"deploy", "--cancel", "3", "--version", "2"}, cli.ExitUsage, "--cancel 3: give no --version with it"},
		{"deploy bad request id", []string{"deploy", "--version", "2", "--all", "--request-id", "a/b"}, cli.ExitUsage, `--request-id "a/b": worker id "a/b": character '/' not allowed`},
		{"deploy without targets", []string{"deploy", "--version", "2"}, cli.ExitUsage, "exactly one of --workers"},
		{"deploy bad range", []string{"deploy", "--version", "2", "--workers", "w-0009..w-0000"}, cli.ExitUsage, "the end is before the start"},
		{"deploy with nobody listening", []string{"deploy", "--version", "2", "--all", "--broker", "tcp://127.0.0.1:1", "--timeout", "2s"}, cli.ExitRuntime, "connect tcp://127.0.0.1:1"},
		{"help", []string{"--help"}, cli.ExitOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := leaderMain(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, tc.code, tc.want)
			}
			if tc.name == "help" && (!strings.Contains(out, "Exit codes:") || !strings.Contains(out, "leader deploy --version 2.0.0")) {
				t.Errorf("help does not teach:\n%s", out)
			}
		})
	}
}

func TestParseWorkers(t *testing.T) {
	cases := []struct {
		spec string
		want string // joined with space, or "error: substring"
	}{
		{"w-0000..w-0003", "w-0000 w-0001 w-0002 w-0003"},
		{"w-0000..w-0001,x-7, y", "w-0000 w-0001 x-7 y"},
		{"a9..a11", "error: same prefix and digit count"},
		{"w-1..x-2", "error: same prefix and digit count"},
		{"w-..w-", "error: must end in digits"},
		{"w-2..w-1", "error: the end is before the start"},
		{"w-1,w-1", `error: worker "w-1" given twice`},
		{"_x", "error: reserved"},
		{"w-00000000..w-99999999", "error: more than"},
		{"", "error: must be 1 to 64 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			ws, err := parseWorkers(tc.spec)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, %v; want error %q", ws, err, want)
				}
				return
			}
			if err != nil || strings.Join(ws, " ") != tc.want {
				t.Fatalf("got %v, %v; want %s", ws, err, tc.want)
			}
		})
	}
}
