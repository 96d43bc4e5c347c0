package mailbox_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
)

// refusals offers n messages to m, full, and returns the RetryAfter of
// each refusal.
func refusals(t *testing.T, m *mailbox.Mailbox[msg], n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, n)
	for i := range out {
		var full *mailbox.FullError
		if err := m.Offer(bg, msg{n: i}); !errors.As(err, &full) {
			t.Fatalf("offer %d to a full box: %v, want *FullError", i, err)
		}
		out[i] = full.RetryAfter
	}
	return out
}

// TestRetryHints: senders refused together are told the same drain time
// by RetryDrain, and by RetrySpread each a slot of its own, a service time
// after the previous one's, until the slots handed out have passed.
func TestRetryHints(t *testing.T) {
	const service = 10 * time.Millisecond
	for _, tc := range []struct {
		hint          mailbox.RetryHint
		first, second []time.Duration // four refusals; then four more, 25 ms later
	}{
		{mailbox.RetryDrain,
			[]time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond},
			[]time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}},
		// Slots from 20 ms (the drain) to 60 ms; 25 ms later the next
		// free one is 35 ms away.
		{mailbox.RetrySpread,
			[]time.Duration{20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond},
			[]time.Duration{35 * time.Millisecond, 45 * time.Millisecond, 55 * time.Millisecond, 65 * time.Millisecond}},
	} {
		t.Run(tc.hint.String(), func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			m := newBox(t, mailbox.Options{Capacity: 2, ServiceTimeHint: service, Retry: tc.hint, Clock: clk})
			m.Offer(bg, msg{})
			m.Offer(bg, msg{})
			if got := m.RetryAfter(); got != tc.first[0] {
				t.Errorf("RetryAfter before any refusal = %v, want %v", got, tc.first[0])
			}
			if got := refusals(t, m, 4); !slices.Equal(got, tc.first) {
				t.Errorf("refusals = %v, want %v", got, tc.first)
			}
			clk.Advance(25 * time.Millisecond)
			if got := refusals(t, m, 4); !slices.Equal(got, tc.second) {
				t.Errorf("25 ms later = %v, want %v", got, tc.second)
			}
			// Once every slot handed out has passed, a refusal is told the
			// drain time again.
			clk.Advance(time.Second)
			if got := refusals(t, m, 1); got[0] != 20*time.Millisecond {
				t.Errorf("after the slots passed: %v, want the drain time 20ms", got[0])
			}
		})
	}
}

func TestParseRetryHint(t *testing.T) {
	for _, h := range []mailbox.RetryHint{mailbox.RetryDrain, mailbox.RetrySpread} {
		if got, err := mailbox.ParseRetryHint(h.String()); err != nil || got != h {
			t.Errorf("ParseRetryHint(%q) = %v, %v", h, got, err)
		}
	}
	if _, err := mailbox.ParseRetryHint("spreading"); err == nil {
		t.Error("ParseRetryHint accepted spreading")
	}
	if _, err := mailbox.New[int](mailbox.Options{Retry: 7}); err == nil {
		t.Error("New accepted retry hint 7")
	}
}
