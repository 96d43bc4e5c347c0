package leader

import (
	"fmt"
	"testing"
	"time"
)

// TestLogLimit: one line per sender per interval, the next one saying how
// many were held back; senders do not share a budget; and the memory is
// bounded whatever the number of senders.
func TestLogLimit(t *testing.T) {
	g := logLimit{every: time.Minute}
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		key  string
		at   time.Duration
		ok   bool
		held uint64
	}{
		{"a", 0, true, 0},
		{"a", time.Second, false, 0},
		{"b", time.Second, true, 0},
		{"a", 59 * time.Second, false, 0},
		{"a", time.Minute, true, 2},
		{"a", time.Minute + time.Second, false, 0},
	}
	for i, s := range steps {
		ok, held := g.allow(s.key, t0.Add(s.at))
		if ok != s.ok || held != s.held {
			t.Fatalf("step %d (%s at %v): allowed %v, held back %d; want %v, %d", i, s.key, s.at, ok, held, s.ok, s.held)
		}
	}
	for i := range 10 * logLimitKeys {
		g.allow(fmt.Sprint("w-", i), t0)
	}
	if n := len(g.seen); n > logLimitKeys {
		t.Fatalf("remembers %d senders, limit %d", n, logLimitKeys)
	}
}
