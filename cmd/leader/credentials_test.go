package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

func credentialsMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"credentials"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCredentialsIssued: the file holds the range and its key under the
// fleet secret, is readable by its owner only, and is never overwritten.
func TestCredentialsIssued(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	secretFile := writeFile(t, "secret", secret+"\n")
	out := filepath.Join(t.TempDir(), "hostA.cred")
	code, _, stderr := credentialsMain(t, "--secret-file", secretFile, "--range", "w-0000..w-0999", "--out", out)
	if code != cli.ExitOK || !strings.Contains(stderr, "credentials for w-{0..999} written to "+out) ||
		!strings.Contains(stderr, "worker --credentials-file "+out+" --prefix w- --start 0 --count 1000") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wire.ParseCredentials(data)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.DeviceRange{Prefix: "w-", First: 0, Last: 999}
	if c.Range != want || c.Key != wire.RangeKey([]byte(secret), want) {
		t.Fatalf("credentials %+v; want range %s and its key under the fleet secret", c, want)
	}
	if strings.Contains(string(data), secret) {
		t.Fatal("the file holds the fleet secret")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	code, _, stderr = credentialsMain(t, "--secret-file", secretFile, "--range", "w-0..w-9", "--out", out)
	if code != cli.ExitUsage || !strings.Contains(stderr, "the file exists; credentials are never overwritten") {
		t.Fatalf("second issue to the same file: exit %d:\n%s", code, stderr)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, data) {
		t.Fatal("the file was changed")
	}
	code, stdout, _ := credentialsMain(t, "--secret-file", secretFile, "--range", "w-0042", "--out", "-")
	if c, err := wire.ParseCredentials([]byte(stdout)); code != cli.ExitOK || err != nil || c.Range.String() != "w-{42..42}" {
		t.Fatalf("to stdout: exit %d, %+v, %v", code, c, err)
	}
}

func TestCredentialsFlags(t *testing.T) {
	secret := writeFile(t, "secret", "0123456789abcdef0123456789abcdef\n")
	short := writeFile(t, "short", "tiny\n")
	out := filepath.Join(t.TempDir(), "x.cred")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no secret", []string{"--range", "w-0..w-9", "--out", out}, "--secret-file: required"},
		{"no range", []string{"--secret-file", secret, "--out", out}, "--range: required"},
		{"no out", []string{"--secret-file", secret, "--range", "w-0..w-9"}, "--out: required"},
		{"secret missing", []string{"--secret-file", "/nonexistent/s", "--range", "w-0..w-9", "--out", out}, "--secret-file: open /nonexistent/s"},
		{"secret too short", []string{"--secret-file", short, "--range", "w-0..w-9", "--out", out}, "the secret is 4 bytes; want at least 16"},
		{"range backwards", []string{"--secret-file", secret, "--range", "w-9..w-0", "--out", out}, "first 9 is after last 0"},
		{"range of two prefixes", []string{"--secret-file", secret, "--range", "w-0..v-9", "--out", out}, `prefixes "w-" and "v-" differ`},
		{"range too long for an id", []string{"--secret-file", secret, "--range", strings.Repeat("w", 60) + "{0..99999}", "--out", out}, "a worker id has at most 64"},
		{"out in no directory", []string{"--secret-file", secret, "--range", "w-0..w-9", "--out", "/nonexistent/x.cred"}, "--out /nonexistent/x.cred: open"},
		{"arguments", []string{"extra"}, "takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := credentialsMain(t, tc.args...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused issue wrote the file")
	}
}
