package clock

import (
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// next, at given wall times: a clock under a ceiling of 10 may reach its
// timer a second of simulated time away after 100 ms of wall time, not
// before; paused, never; with no ceiling, at once.
func TestVirtualCeilingArithmetic(t *testing.T) {
	v := NewVirtual(epoch, VirtualOptions{Speed: 10})
	w0 := v.anchor.wall
	v.AfterFunc(time.Second, func() {})
	if ok, wait := v.next(w0); ok || wait != 100*time.Millisecond {
		t.Fatalf("at the anchor: next = %v, %v; want false, 100ms", ok, wait)
	}
	if ok, wait := v.next(w0 + 60*time.Millisecond); ok || wait != 40*time.Millisecond {
		t.Fatalf("60ms on: next = %v, %v; want false, 40ms", ok, wait)
	}
	if ok, _ := v.next(w0 + 100*time.Millisecond); !ok {
		t.Fatal("100ms on: the timer may not fire")
	}
	v.Pause()
	if ok, wait := v.next(w0 + time.Hour); ok || wait >= 0 {
		t.Fatalf("paused: next = %v, %v; want false, < 0", ok, wait)
	}
	v.mu.Lock()
	v.paused, v.speed = false, 0
	v.mu.Unlock()
	if ok, _ := v.next(w0); !ok {
		t.Fatal("no ceiling: the timer may not fire at once")
	}
}

// A clock that fell behind its ceiling (a slow machine) keeps at most
// maxLead of wall time in hand: it does not rush to catch up.
func TestVirtualCeilingDoesNotCatchUp(t *testing.T) {
	var a ceilingAnchor
	a.set(0, 0)
	const speed = 10
	// Ten wall seconds passed while the clock only reached 1s.
	a.follow(10*time.Second, int64(time.Second), speed)
	lead := time.Duration(a.limit(10*time.Second, speed)) - time.Second
	if want := time.Duration(float64(maxLead) * speed); lead != want {
		t.Fatalf("lead after falling behind = %v, want %v", lead, want)
	}
	// On its line, it keeps its anchor.
	var b ceilingAnchor
	b.set(0, 0)
	b.follow(time.Second, int64(10*time.Second), speed)
	if b.wall != 0 || b.sim != 0 {
		t.Fatalf("anchor moved to %+v for a clock on its line", b)
	}
}

func TestRateMeter(t *testing.T) {
	var m rateMeter
	if r := m.rate(time.Second, 0); r != 0 {
		t.Fatalf("empty meter: rate %g, want 0", r)
	}
	for i := range 50 {
		wall := time.Duration(i) * 100 * time.Millisecond
		m.note(wall, int64(5*wall)) // five simulated seconds per wall second
	}
	if r := m.rate(5*time.Second, 25*time.Second); r < 4.99 || r > 5.01 {
		t.Fatalf("rate %g, want 5", r)
	}
	// Stopped for the last two seconds: the pace over the window falls.
	if r := m.rate(7*time.Second, 25*time.Second); r >= 5 {
		t.Fatalf("rate after two idle seconds %g, want below 5", r)
	}
}
