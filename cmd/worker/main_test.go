package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

func build(t *testing.T, args ...string) ([]worker.Config, worker.MQTTDialer, error) {
	t.Helper()
	var o options
	c := &cobra.Command{}
	o.addFlags(c)
	if err := c.ParseFlags(args); err != nil {
		return nil, worker.MQTTDialer{}, err
	}
	return o.build(slog.New(slog.DiscardHandler))
}

// writeCred writes credentials for range r (e.g. "w-0000..w-0009") to a
// file and returns its path.
func writeCred(t *testing.T, r string) string {
	t.Helper()
	rng, err := wire.ParseIDRange(r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wire.IssueCredentials([]byte("0123456789abcdef-fleet"), rng)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "host.cred")
	if err := os.WriteFile(path, c.File(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlags(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cred := writeCred(t, "w-0000..w-0009")
	bad := filepath.Join(t.TempDir(), "bad.cred")
	if err := os.WriteFile(bad, []byte("fleetsim-credentials 1\nrange w-{0..9}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // "" = valid; else a substring of the error
	}{
		{"defaults", nil, ""},
		{"policy drop-oldest", []string{"--policy", "drop-oldest"}, ""},
		{"policy block", []string{"--policy", "block"}, `--policy "block": want reject, drop-oldest, drop-newest, coalesce or unbounded`},
		{"policy unknown", []string{"--policy", "lifo"}, `--policy "lifo"`},
		{"service uniform", []string{"--service", "uniform(1ms,9ms)"}, ""},
		{"service bad", []string{"--service", "fast"}, `--service "fast"`},
		{"count zero", []string{"--count", "0"}, "--count 0: want 1 to 10000000"},
		{"width", []string{"--width", "0"}, "--width 0"},
		{"mailbox", []string{"--mailbox", "0"}, "--mailbox 0"},
		{"heartbeat", []string{"--heartbeat", "-1s"}, "--heartbeat -1s"},
		{"telemetry", []string{"--telemetry", "-1s"}, "--telemetry -1s"},
		{"reconnect", []string{"--reconnect", "never"}, `--reconnect "never": want backoff or immediate`},
		{"backoff cap", []string{"--backoff-base", "2s", "--backoff-cap", "1s"}, "--backoff-cap 1s: want at least --backoff-base (2s)"},
		{"keepalive", []string{"--keepalive", "500ms"}, "--keepalive 500ms: want at least 1s"},
		{"ramp", []string{"--ramp", "-1ms"}, "--ramp"},
		{"connect timeout", []string{"--connect-timeout", "-1s"}, "--connect-timeout -1s: want 0 (keep trying) or a positive duration"},
		{"connect timeout off", []string{"--connect-timeout", "0"}, ""},
		{"broker", []string{"--broker", "127.0.0.1:1883"}, `--broker "127.0.0.1:1883": broker "127.0.0.1:1883": no scheme: want tcp://host:port`},
		{"prefix", []string{"--prefix", "w/"}, `--prefix "w/"`},
		{"prefix reserved", []string{"--prefix", "_w"}, "reserved"},
		{"prefix with a dot", []string{"--prefix", "dev.site-a."}, `--prefix "dev.site-a.": worker id "dev.site-a.0000": character '.' not allowed`},
		{"topic prefix", []string{"--topic-prefix", "$SYS"}, "--topic-prefix"},
		// A worker host never holds the fleet secret: the error says what
		// to do instead.
		{"secret", []string{"--secret-file", secret, "--count", "10"}, "--secret-file: a worker no longer takes the fleet secret, which would let this host log in as any worker; on the leader's machine run 'leader credentials --secret-file " + secret + " --range w-0000..w-0009 --out host.cred'"},
		{"credentials", []string{"--credentials-file", cred, "--count", "10"}, ""},
		{"credentials, gateways", []string{"--credentials-file", cred, "--count", "10", "--gateway-size", "5"}, ""},
		{"credentials missing", []string{"--credentials-file", "/nonexistent"}, "--credentials-file: open /nonexistent"},
		{"credentials malformed", []string{"--credentials-file", bad}, "--credentials-file " + bad + ": no key line"},
		{"credentials not a file of them", []string{"--credentials-file", secret}, `line 1: "0123456789abcdef": want "fleetsim-credentials 1" first`},
		{"ids past the credentials", []string{"--credentials-file", cred, "--count", "11"}, `worker id "w-0010" is outside the credential's range w-{0..9} (this process runs w-0000 to w-0010`},
		{"ids before the credentials", []string{"--credentials-file", cred, "--start", "5", "--count", "2", "--prefix", "v-"}, `worker id "v-0005" is outside`},
		{"not a number", []string{"--count", "lots"}, `invalid argument "lots" for "--count"`},
		{"gateway size", []string{"--count", "10", "--gateway-size", "10"}, ""},
		{"gateway size zero", []string{"--gateway-size", "0"}, "--gateway-size 0: want 1 to --count (1)"},
		{"gateway size negative", []string{"--count", "5", "--gateway-size", "-2"}, "--gateway-size -2: want 1 to --count (5)"},
		{"gateway size above count", []string{"--count", "5", "--gateway-size", "6"}, "--gateway-size 6: want 1 to --count (5)"},
		{"gateway size not a number", []string{"--gateway-size", "ten"}, `invalid argument "ten" for "--gateway-size"`},
		{"gateway id too long", []string{"--gateway-size", "1", "--prefix", strings.Repeat("w", 59) + "-"}, `--gateway-size: gateway "gw-www`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := build(t, tc.args...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigs(t *testing.T) {
	cfgs, dial, err := build(t, "--count", "3", "--start", "9998", "--prefix", "dev-", "--service", "uniform(1ms,9ms)",
		"--policy", "coalesce", "--mailbox", "4", "--reconnect", "immediate", "--broker", "tcp://10.0.0.1:1883", "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cfgs {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, " "); got != "dev-09998 dev-09999 dev-10000" {
		t.Errorf("ids %s", got)
	}
	c := cfgs[2]
	if c.Index != 10000 || c.Seed != 7 || c.Mailbox.Capacity != 4 || c.Mailbox.Policy != mailbox.Coalesce ||
		c.Service.Kind != dist.Uniform || c.Service.Max != 9*time.Millisecond || !c.Reconnect.Immediate {
		t.Errorf("config %+v", c)
	}
	if dial.Broker != "tcp://10.0.0.1:1883" || dial.Secret != nil || dial.Credentials != nil {
		t.Errorf("dialer %+v", dial)
	}
}

// TestGatewayConfigs: --gateway-size groups the workers in order, each
// gateway named after its first worker, the last carrying the rest.
func TestGatewayConfigs(t *testing.T) {
	cfgs, _, err := build(t, "--count", "25", "--start", "100", "--gateway-size", "10")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range cfgs {
		count[c.Gateway]++
	}
	want := map[string]int{"gw-w-0100": 10, "gw-w-0110": 10, "gw-w-0120": 5}
	if fmt.Sprint(count) != fmt.Sprint(want) || cfgs[9].Gateway != "gw-w-0100" || cfgs[10].Gateway != "gw-w-0110" {
		t.Errorf("workers per gateway %v, want %v", count, want)
	}
	cfgs, _, err = build(t, "--count", "3")
	if err != nil {
		t.Fatal(err)
	}
	if cfgs[0].Gateway != "" {
		t.Errorf("without --gateway-size a worker is behind gateway %q", cfgs[0].Gateway)
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"extra"}, cli.ExitUsage, `worker takes no arguments`},
		{[]string{"--count", "-3"}, cli.ExitUsage, "--count -3"},
		{[]string{"--count", "4", "--gateway-size", "0"}, cli.ExitUsage, "--gateway-size 0: want 1 to --count (4)"},
		{[]string{"--log-format", "xml"}, cli.ExitUsage, `--log-format "xml": want text or json`},
		{[]string{"--bogus"}, cli.ExitUsage, "unknown flag: --bogus"},
		{[]string{"--help"}, cli.ExitOK, "Exit codes:"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			code := Main(context.Background(), tc.args, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d, output:\n%s\nwant exit %d and %q", code, errb.String(), tc.code, tc.want)
			}
		})
	}
}

// TestCredentialsCoverGateways: a gateway's range has its devices' prefix
// before their trailing digits; credentials that admit every worker id but
// name another prefix do not admit the gateway, and worker says so before
// it connects.
func TestCredentialsCoverGateways(t *testing.T) {
	cred := writeCred(t, "w-1{0..99}")
	args := []string{"--credentials-file", cred, "--prefix", "w-1", "--width", "2", "--count", "10", "--broker", "tcp://127.0.0.1:1"}
	if _, _, err := build(t, args...); err != nil {
		t.Fatalf("every worker id is in the range, yet: %v", err)
	}
	var errb bytes.Buffer
	code := Main(context.Background(), append(args, "--gateway-size", "5"), &errb)
	if want := `gateway gw-w-100: gateway devices w-{100..104} are not all in the credential's range w-1{0..99}`; code != cli.ExitUsage || !strings.Contains(errb.String(), want) {
		t.Fatalf("exit %d, output:\n%s\nwant exit 2 and %q", code, errb.String(), want)
	}
}

// TestHelpExitCodes: --help lists the exit codes worker can end with, and
// no other: it has no outbox file, so never exits 3.
func TestHelpExitCodes(t *testing.T) {
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"--help"}, &out); code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	help := out.String()
	for _, want := range []string{
		"  0  stopped by SIGINT, SIGTERM, SIGHUP or a broken pipe",
		"  1  runtime failure: no session connected within --connect-timeout",
		"  2  bad flags or a bad --credentials-file",
		"the broker refused the login before any session\n     connected",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not say %q", want)
		}
	}
	if strings.Contains(help, "  3  ") || strings.Contains(help, "outbox") {
		t.Errorf("--help lists exit 3 or an outbox:\n%s", help)
	}
}
