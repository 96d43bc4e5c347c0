package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
)

// TestDeployAndCancel: 'leader deploy' against a running leader: a
// deploy in waves an hour apart starts; run again with its request id it
// is answered with the same deploy, not a second one; and --cancel
// withdraws what it has not sent.
func TestDeployAndCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--listen", "127.0.0.1:0", "--outbox", t.TempDir() + "/leader.db", "--durability", "none"}, io.Discard, &logs)
	}()
	defer func() {
		cancel()
		<-done
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
	broker := []string{"--broker", "tcp://" + addr, "--timeout", "20s"}
	deploy := append([]string{"deploy", "--version", "2.0.0", "--workers", "w-0000..w-0009", "--wave-size", "1", "--wave-interval", "1h", "--request-id", "d-e2e"}, broker...)
	for i, want := range []string{
		"deploy 0 started: firmware 2.0.0 to 10 workers in 10 waves (request d-e2e)\n",
		"deploy 0 started: firmware 2.0.0 to 10 workers in 10 waves (request d-e2e, which had started it before)\n",
	} {
		if code, out, errs := leaderMain(t, deploy...); code != 0 || out != want {
			t.Fatalf("deploy, try %d: exit %d, %q\n%s\nwant exit 0, %q", i+1, code, out, errs, want)
		}
	}
	code, out, errs := leaderMain(t, append([]string{"deploy", "--cancel", "0"}, broker...)...)
	m := regexp.MustCompile(`^deploy 0 cancelled: (\d+) updates withdrawn, (\d+) out for delivery finish \(request d[0-9a-f]+\)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("cancel: exit %d, %q\n%s", code, out, errs)
	}
	if w, f := atoi(m[1]), atoi(m[2]); w+f != 10 || w < 9 {
		t.Errorf("cancel: %d withdrawn, %d in flight; want the 9 later waves withdrawn at least", w, f)
	}
	code, _, errs = leaderMain(t, append([]string{"deploy", "--cancel", "3"}, broker...)...)
	if code != 1 || !strings.Contains(errs, "the leader refused to cancel: leader: cancel deploy 3: leader: no such deploy (the leader keeps deploy 0)") {
		t.Errorf("cancel of deploy 3: exit %d\n%s", code, errs)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
