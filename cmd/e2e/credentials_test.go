package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFleetWithHostCredentials: a leader whose embedded broker checks
// logins issues each worker host the credentials of its range ('leader
// credentials'); two worker processes, one with gateways, log in with
// them and take a deploy, and no login is refused. A process whose ids
// are outside its credentials' range exits 2 before connecting, and one
// given the fleet secret is told to use credentials instead.
func TestFleetWithHostCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := write("fleet.secret", "0123456789abcdef0123456789abcdef\n")
	pw := write("leader.password", "leader-password\n")
	l, maddr := startLeader(t, "--outbox", filepath.Join(dir, "leader.db"), "--listen", "127.0.0.1:0", "--durability", "batch",
		"--secret-file", secret, "--leader-password-file", pw)
	broker := "tcp://" + l.log(t, "broker listening", waitLong)["addr"].(string)
	creds := map[string]string{}
	for host, rng := range map[string]string{"a": "w-0000..w-0024", "b": "w-{25..49}"} {
		creds[host] = filepath.Join(dir, host+".cred")
		if code, _ := run(t, "leader", "credentials", "--secret-file", secret, "--range", rng, "--out", creds[host]); code != 0 {
			t.Fatalf("leader credentials --range %s: exit %d", rng, code)
		}
	}
	if code, _ := run(t, "worker", "--broker", broker, "--credentials-file", creds["a"], "--count", "25", "--start", "25"); code != 2 {
		t.Fatalf("a worker outside its credentials' range: exit %d, want 2", code)
	}
	if code, _ := run(t, "worker", "--broker", broker, "--secret-file", secret); code != 2 {
		t.Fatalf("a worker given the fleet secret: exit %d, want 2", code)
	}
	a := start(t, "worker", append([]string{"--broker", broker, "--credentials-file", creds["a"], "--count", "25", "--start", "0"}, workerFast...)...)
	b := start(t, "worker", append([]string{"--broker", broker, "--credentials-file", creds["b"], "--count", "25", "--start", "25", "--gateway-size", "5"}, workerFast...)...)
	waitMetric(t, maddr, "fleetsim_workers_online", 50, waitLong)

	code, out := run(t, "leader", "deploy", "--broker", broker, "--leader-password-file", pw, "--version", "2.0.0",
		"--workers", "w-0000..w-0049", "--wave-size", "25", "--wave-interval", "100ms")
	if code != 0 || !strings.Contains(out, "to 50 workers in 2 waves") {
		t.Fatalf("leader deploy: exit %d, output %q", code, out)
	}
	waitMetric(t, maddr, `fleetsim_workers_version{version="2.0.0"}`, 50, waitLong)
	if got := metric(t, maddr, `fleetsim_refused_total{reason="auth"}`); got != 0 {
		t.Errorf("%v logins refused, want none", got)
	}
	applied, versions := stopWorkers(t, a, b)
	if applied != 50 || fmt.Sprint(versions) != "[2.0.0=25 2.0.0=25]" {
		t.Errorf("workers applied %d updates, versions %v; want 50, each process 2.0.0=25", applied, versions)
	}
	if code := l.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("leader exit code %d, want 0", code)
	}
}
