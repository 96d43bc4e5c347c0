package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// TestCredentialsLogIn: against a broker that checks logins, a worker
// process with credentials for its range gets its workers online, those
// on their own sessions and those behind a gateway, and never held the
// fleet secret.
func TestCredentialsLogIn(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lead, err := transport.Connect(ctx, transport.ClientOptions{ID: "_leader", Broker: "mem://", CleanSession: true,
		Username: wire.LeaderUsername, Password: "leader-pw"}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer lead.Close(true)
	var tp wire.Topics
	var mu sync.Mutex
	online := map[string]bool{}
	if err := lead.Subscribe(ctx, tp.Status("+"), 1, func(topic string, payload []byte) {
		if st, err := wire.ParseEpochStatus(topic, payload); err == nil {
			id, _, _ := tp.Parse(topic)
			mu.Lock()
			online[id] = st.Online
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	c, err := wire.IssueCredentials(secret, wire.DeviceRange{Prefix: "w-", First: 0, Last: 3})
	if err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(t.TempDir(), "host.cred")
	if err := os.WriteFile(cred, c.File(), 0o600); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	type run struct {
		code   int
		stderr string
	}
	done := make(chan run, 2)
	start := func(args ...string) {
		go func() {
			var stderr bytes.Buffer
			code := Main(runCtx, append([]string{"--broker", "tcp://" + b.Addr(), "--credentials-file", cred, "--heartbeat", "0", "--report", "0"}, args...), &stderr)
			done <- run{code, stderr.String()}
		}()
	}
	start("--count", "2")
	start("--count", "2", "--start", "2", "--gateway-size", "2")
	fleettest.Eventually(t, 20*time.Second, "four workers online", func() error {
		mu.Lock()
		defer mu.Unlock()
		return fleettest.Unless(online["w-0000"] && online["w-0001"] && online["w-0002"] && online["w-0003"], "online: %v", online)
	})
	stop()
	for range 2 {
		if r := <-done; r.code != cli.ExitOK {
			t.Fatalf("worker exited %d:\n%s", r.code, r.stderr)
		}
	}
	if s := b.Stats(); s.AuthDenied != 0 {
		t.Errorf("%d logins refused, want none", s.AuthDenied)
	}
}
