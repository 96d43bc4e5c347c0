package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// One line per key per interval; the lines held back are reported on the
// next line let through; keys do not limit each other.
func TestAllowOnePerKeyPerInterval(t *testing.T) {
	clk := clock.NewFake(t0)
	l := New(Options{Clock: clk, Every: 10 * time.Second})
	type step struct {
		advance time.Duration
		key     string
		ok      bool
		n       uint64
	}
	for i, s := range []step{
		{0, "a", true, 0},
		{0, "a", false, 0},
		{0, "b", true, 0}, // another key is not held back by a's
		{9 * time.Second, "a", false, 0},
		{0, "a", false, 0},
		{time.Second, "a", true, 3}, // 10 s after a's first line: the three held back
		{0, "a", false, 0},
		{10 * time.Second, "a", true, 1},
		{0, "b", true, 0}, // b's first interval passed with nothing held back
	} {
		clk.Advance(s.advance)
		ok, n := l.Allow(s.key)
		if ok != s.ok || n != s.n {
			t.Fatalf("step %d (%s): Allow = %v, %d; want %v, %d", i, s.key, ok, n, s.ok, s.n)
		}
	}
}

// The limiter remembers at most MaxKeys keys: idle ones make room, and a
// flood of new keys while all are busy is held back instead of growing it.
func TestMaxKeys(t *testing.T) {
	clk := clock.NewFake(t0)
	l := New(Options{Clock: clk, Every: 10 * time.Second, MaxKeys: 2})
	for _, k := range []string{"a", "b"} {
		if ok, _ := l.Allow(k); !ok {
			t.Fatalf("first line of %s held back", k)
		}
	}
	if ok, _ := l.Allow("c"); ok {
		t.Fatal("a third key let through with room for two, none idle")
	}
	clk.Advance(10 * time.Second)
	if ok, _ := l.Allow("c"); !ok {
		t.Fatal("a new key held back after the others went idle")
	}
	if len(l.keys) > 2 {
		t.Fatalf("%d keys remembered, want at most 2", len(l.keys))
	}
}

func TestLog(t *testing.T) {
	clk := clock.NewFake(t0)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l := New(Options{Clock: clk, Every: time.Minute})
	for range 5 {
		l.Warn(log, "w-1", "refused", "worker", "w-1")
	}
	clk.Advance(time.Minute)
	l.Warn(log, "w-1", "refused", "worker", "w-1")
	if l.Log(log, slog.LevelInfo, "w-2", "below the level") {
		t.Error("a line below the logger's level was logged")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "suppressed") || !strings.HasSuffix(lines[1], "worker=w-1 suppressed=4") {
		t.Fatalf("got %d lines:\n%s\nwant 2, the second with suppressed=4", len(lines), buf.String())
	}
	if ok, _ := l.Allow("w-2"); !ok {
		t.Error("a line not logged (level) used up w-2's interval")
	}
}

func TestBrief(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "0123456789… (13 bytes)"},
		{"ab\xffc", 10, "ab\uFFFDc"},
		{"aé", 2, "a\uFFFD… (3 bytes)"}, // a character cut in two is replaced
	} {
		if got := Brief(tc.s, tc.n); got != tc.want {
			t.Errorf("Brief(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
