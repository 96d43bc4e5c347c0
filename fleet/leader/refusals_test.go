package leader_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
)

// lockedBuffer is a log destination safe for the leader's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Each refused worker message is counted under one reason (too large,
// malformed), the broker's refusals are added from Config.BrokerRefusals,
// and the log says each sender's refusals at most once per reason per
// interval, with the reason and size and none of the payload.
func TestRefusalsCountedAndLoggedBriefly(t *testing.T) {
	var logs lockedBuffer
	r := startLeader(t, leader.Config{
		Logger:             slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		RefusalLogInterval: time.Minute,
		BrokerRefusals: func() leader.BrokerRefusals {
			return leader.BrokerRefusals{Auth: 3, Topic: 2, PacketTooLarge: 1, PacketTimeout: 4, PartialBudget: 5, Connections: 6, RateLimited: 7}
		},
	})
	up := func(worker, payload string) { r.link.handler(r.tp.AllUp())(r.tp.Up(worker), []byte(payload)) }
	big := `{"v":1,"id":"x","kind":"telemetry","body":{"metrics":{"` + strings.Repeat("BIGPAYLOAD", 7000) + `":1}}}`
	up("w-1", big)
	up("w-1", big)
	up("w-1", `{"v":1,"kind":"ack","ref":"m1","result":"SECRETVALUE"}`)
	up("w-2", `not json at all`)
	r.status("w-3", "sideways SECRETSTATUS")

	s := r.l.Stats()
	want := leader.Refusals{Auth: 3, Topic: 2, PacketTooLarge: 1, PacketTimeout: 4, PartialBudget: 5, Connections: 6, RateLimited: 7,
		PayloadTooLarge: 2, Malformed: 3}
	if s.Refused != want || s.Malformed != 5 || s.PayloadTooLarge != 2 {
		t.Fatalf("Refused = %+v, Malformed %d, PayloadTooLarge %d; want %+v, 5, 2", s.Refused, s.Malformed, s.PayloadTooLarge, want)
	}
	var labels []string
	var sum uint64
	for _, rc := range s.Refused.ByReason() {
		labels = append(labels, rc.Reason)
		sum += rc.Count
	}
	if strings.Join(labels, " ") != strings.Join(leader.RefusalReasons, " ") || sum != 33 {
		t.Errorf("ByReason: %v, sum %d; want the reasons %v, sum 33", labels, sum, leader.RefusalReasons)
	}

	l := logs.String()
	for _, leak := range []string{"BIGPAYLOAD", "SECRET"} {
		if strings.Contains(l, leak) {
			t.Fatalf("payload bytes (%s) in the log:\n%s", leak, l)
		}
	}
	// One line per sender and reason within the interval: w-1's first
	// oversize message and its malformed one, w-2's, w-3's.
	if n := strings.Count(l, "refused a worker message"); n != 4 ||
		!strings.Contains(l, fmt.Sprintf(`from=w-1 reason=payload_too_large error="payload too large" size=%d`, len(big))) ||
		!strings.Contains(l, `from=w-2 reason=malformed error="malformed envelope" size=15`) ||
		!strings.Contains(l, `from=w-3 reason=malformed error="malformed status" size=21`) {
		t.Fatalf("%d lines, want 4 (w-1 too large and malformed, w-2 and w-3 malformed):\n%s", n, l)
	}
	r.clk.Advance(time.Minute)
	up("w-1", `{}`)
	up("w-1", big)
	if l := logs.String(); !strings.Contains(l, `from=w-1 reason=malformed error="unsupported envelope version" size=2`) ||
		!strings.Contains(l, fmt.Sprintf("from=w-1 reason=payload_too_large error=\"payload too large\" size=%d suppressed=1", len(big))) {
		t.Fatalf("after the interval, want w-1's next lines, the oversize one with suppressed=1:\n%s", l)
	}
}
