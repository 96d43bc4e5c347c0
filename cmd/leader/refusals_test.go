package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// syncWriter is a log destination safe for the leader's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A running leader with credentials on: a refused login, a 64 MiB
// CONNECT, a publish to another worker's topic, a worker message over 64
// KiB, a malformed one and messages over the worker's rate limit are each
// counted under their reason on /metrics and in the stats JSON, and
// logged without their payload; /metrics shows the broker's TCP
// connections.
func TestRefusalsByReason(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret := "0123456789abcdef0123456789abcdef"
	var logs syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--secret-file", writeFile(t, "secret", secret), "--leader-password-file", writeFile(t, "pw", "leader-pw"),
			"--outbox", t.TempDir() + "/leader.db", "--durability", "none", "--stats-interval", "50ms",
			"--worker-rate", "0.001", "--worker-burst", "5"}, io.Discard, &logs)
	}()
	addrs := map[string]string{}
	fleettest.Eventually(t, 10*time.Second, "the leader's listeners", func() error {
		for _, m := range regexp.MustCompile(`msg="(broker|metrics) listening" addr=(\S+)`).FindAllStringSubmatch(logs.String(), -1) {
			addrs[m[1]] = m[2]
		}
		return fleettest.Unless(len(addrs) == 2 && strings.Contains(logs.String(), "leader running"), "logs:\n%s", logs.String())
	})
	brokerURL := "tcp://" + addrs["broker"]
	worker := func(id, password string) (*transport.Session, error) {
		return transport.Connect(ctx, transport.ClientOptions{ID: id, Username: id, Password: password, Broker: brokerURL, CleanSession: true}, nil)
	}

	if _, err := worker("w-9", "guess"); err == nil { // auth
		t.Fatal("a wrong password was accepted")
	}
	raw, err := net.Dial("tcp", addrs["broker"]) // packet_too_large
	if err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte{0x10, 0x80, 0x80, 0x80, 0x20}) // CONNECT, 64 MiB announced
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := raw.Read(make([]byte, 8)); err == nil {
		t.Fatal("the broker answered a 64 MiB CONNECT")
	}
	raw.Close()
	w, err := worker("w-1", wire.WorkerPassword([]byte(secret), "w-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(true)
	tp := wire.Topics{}
	for _, m := range []struct{ topic, payload string }{
		{tp.Up("w-2"), "SECRET forged"}, // topic (QoS 0: dropped, the worker stays)
		{tp.Up("w-1"), `{"v":1,"id":"t","kind":"telemetry","body":{"metrics":{"` + strings.Repeat("BIG", 30000) + `":1}}}`}, // payload_too_large
		{tp.Up("w-1"), "SECRET garbage"}, // malformed
	} {
		if err := w.Publish(ctx, m.topic, 0, false, []byte(m.payload)); err != nil {
			t.Fatal(err)
		}
	}
	// Two of its burst of five spent above (a refused topic spends none):
	// three more heartbeats go through, three are dropped (rate_limited).
	for i := range 6 {
		m := struct{ topic, payload string }{tp.Up("w-1"), fmt.Sprintf(`{"v":1,"id":"h%d","kind":"heartbeat","body":{"version":"1.0.0"}}`, i)}
		if err := w.Publish(ctx, m.topic, 0, false, []byte(m.payload)); err != nil {
			t.Fatal(err)
		}
	}

	want := map[string]uint64{"auth": 1, "topic": 1, "packet_too_large": 1, "payload_too_large": 1, "malformed": 1, "rate_limited": 3}
	fleettest.Eventually(t, 10*time.Second, "the refusals on /metrics", func() error {
		resp, err := http.Get("http://" + addrs["metrics"] + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for reason, n := range want {
			if line := fmt.Sprintf("fleetsim_refused_total{reason=%q} %d\n", reason, n); !strings.Contains(string(body), line) {
				return fmt.Errorf("no %q in\n%s", line, grep(string(body), "fleetsim_refused_total"))
			}
		}
		for _, line := range []string{"fleetsim_broker_tcp_connections 1\n", "fleetsim_broker_partial_bytes 0\n"} {
			if !strings.Contains(string(body), line) {
				return fmt.Errorf("no %q in\n%s", line, grep(string(body), "fleetsim_broker_"))
			}
		}
		return nil
	})

	obs, err := transport.Connect(ctx, transport.ClientOptions{ID: "_observer", Username: wire.LeaderUsername, Password: "leader-pw", Broker: brokerURL, CleanSession: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close(true)
	reports := make(chan leader.StatsReport, 1)
	if err := obs.Subscribe(ctx, tp.LeaderStats(), 0, func(_ string, p []byte) {
		var r leader.StatsReport
		if json.Unmarshal(p, &r) == nil {
			select {
			case reports <- r:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	r := fleettest.Receive(t, 10*time.Second, "a stats report", reports, func() string { return "" })
	if got := (leader.Refusals{Auth: 1, Topic: 1, PacketTooLarge: 1, RateLimited: 3, PayloadTooLarge: 1, Malformed: 1}); r.Stats.Refused != got {
		t.Errorf("stats JSON: Refused = %+v, want %+v", r.Stats.Refused, got)
	}

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
	l := logs.String()
	if strings.Contains(l, "SECRET") || strings.Contains(l, "BIGBIG") {
		t.Errorf("payload in the log:\n%s", l)
	}
	for _, line := range []string{"login refused", "packet too large", "topic refused", "reason=payload_too_large", "reason=malformed"} {
		if !strings.Contains(l, line) {
			t.Errorf("no %q in the log:\n%s", line, l)
		}
	}
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A deploy request over the embedded broker's packet limit gets the
// 'leader deploy' client disconnected; it says why and what to do.
func TestDeployRequestOverPacketLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--listen", "127.0.0.1:0", "--outbox", t.TempDir() + "/leader.db", "--durability", "none"}, io.Discard, &logs)
	}()
	var addr string
	fleettest.Eventually(t, 10*time.Second, "the leader's listener", func() error {
		m := regexp.MustCompile(`msg="broker listening" addr=(\S+)`).FindStringSubmatch(logs.String())
		if m == nil {
			return fmt.Errorf("logs:\n%s", logs.String())
		}
		addr = m[1]
		return nil
	})
	code, _, errs := leaderMain(t, "deploy", "--version", "2", "--workers", "w-000000..w-099999", "--broker", "tcp://"+addr, "--timeout", "10s")
	if code != 1 || !strings.Contains(errs, "publish the deploy request") || !strings.Contains(errs, "--max-packet-size") {
		t.Errorf("deploy of 100,000 named workers: exit %d\n%s\nwant exit 1 naming --max-packet-size", code, errs)
	}
	cancel()
	<-done
}
