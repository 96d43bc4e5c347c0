package clock

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Virtual clock moves only when the whole process has settled: every
// goroutine is waiting (on a timer, a channel, a lock, input), none is
// running or ready to run but the advancer, none is in a system call
// but those that live there (os/signal's, a terminal reader), and no
// Hold is held. This file is how the process tells.
//
// The runtime's goroutine-state metrics are the main signal: they see
// every goroutine, the broker's and the MQTT clients' included, at about
// 100 ns a read. They are approximate (a goroutine moving between states
// while the counts are summed can be missed), so a quiet reading is
// confirmed: the advancer yields a few times, reads again, and checks
// that the progress count (bumped by every timer armed or stopped and
// every in-memory connection read or write) did not move in between.
//
// What the runtime cannot see is declared with a Hold: bytes waiting in
// an in-memory connection, a write transaction of the outbox file (bbolt
// may wait on the wall clock for company before it commits), a client
// that waits on the wall clock for its goodbye to be written. While any
// Hold is above zero, no Virtual clock advances.

// Hold counts work in progress that the runtime's goroutine states do
// not show. Create one per kind of work with NewHold (a package-level
// variable) and Add to it around the work. Safe for concurrent use.
type Hold struct {
	name string
	n    atomic.Int64
}

var holds struct {
	mu    sync.Mutex
	all   []*Hold
	total atomic.Int64 // the sum of every Hold's count
}

// progress moves whenever something in the simulation moves; see Touch.
var progress atomic.Uint64

// NewHold returns a Hold named for what it counts ("bytes in in-memory
// connections"), the name a forced advance reports.
func NewHold(name string) *Hold {
	h := &Hold{name: name}
	holds.mu.Lock()
	holds.all = append(holds.all, h)
	holds.mu.Unlock()
	return h
}

// Add adds delta to the hold (a negative delta ends what an earlier Add
// began) and counts as progress.
func (h *Hold) Add(delta int64) {
	h.n.Add(delta)
	holds.total.Add(delta)
	progress.Add(1)
}

// Held returns the hold's count.
func (h *Hold) Held() int64 { return h.n.Load() }

// Touch records that something in the simulation moved without a Hold:
// an in-memory connection's read or write. A settle is confirmed only if
// nothing touched between its two readings.
func Touch() { progress.Add(1) }

// goroutineCounts is one reading of the runtime's goroutine states.
type goroutineCounts struct {
	running, runnable, syscall uint64
}

// settler tells whether the process has settled. There is one per
// process (the advancer's), since what it reads is the process's.
type settler struct {
	samples [3]metrics.Sample
	// base is how many goroutines sit in system calls for good
	// (os/signal's, a terminal's reader): they are not the simulation's.
	// It follows the lowest count seen while all else was quiet, and
	// rises to a higher one that has held for baseAfter with nothing
	// else moving.
	base     uint64
	over     uint64    // a higher count seen while all else was quiet
	overAt   time.Time // since when
	overMark uint64    // progress when it was first seen
}

// baseAfter is how long a goroutine must stay in a system call, with
// nothing else in the process moving, before it counts as living there.
// A simulation's own system calls (a log line, a file's write) last far
// less; the outbox file's writes are held besides.
const baseAfter = 200 * time.Millisecond

func newSettler() *settler {
	s := &settler{}
	s.samples[0].Name = "/sched/goroutines/running:goroutines"
	s.samples[1].Name = "/sched/goroutines/runnable:goroutines"
	s.samples[2].Name = "/sched/goroutines/not-in-go:goroutines"
	return s
}

func (s *settler) read() goroutineCounts {
	metrics.Read(s.samples[:])
	return goroutineCounts{s.samples[0].Value.Uint64(), s.samples[1].Value.Uint64(), s.samples[2].Value.Uint64()}
}

// quiet reports whether c shows nothing but the caller (which runs)
// and the goroutines that live in system calls, with no Hold held.
func (s *settler) quiet(c goroutineCounts, now time.Time) bool {
	s.follow(c.syscall, now)
	return c.running <= 1 && c.runnable == 0 && c.syscall <= s.base && holds.total.Load() == 0
}

// follow moves the base (see settler.base) with a reading of n
// goroutines in system calls: down to any lower reading, up to a higher
// one that has held for baseAfter while the simulation did not move.
// What else runs meanwhile (a dashboard drawing) does not matter: the
// simulation's own goroutines move its progress.
func (s *settler) follow(n uint64, now time.Time) {
	switch mark := progress.Load(); {
	case n <= s.base:
		s.base, s.over = n, 0
	case n != s.over || mark != s.overMark:
		s.over, s.overAt, s.overMark = n, now, mark
	case now.Sub(s.overAt) >= baseAfter:
		s.base, s.over = n, 0
	}
}

// settled reports whether the process has settled: a quiet reading,
// confirmed by a second one after the caller yields a few times, with no
// progress in between. A goroutine on its way from one state to another
// can escape one reading; it does not escape both and the count.
func (s *settler) settled(now time.Time) bool {
	mark := progress.Load()
	if !s.quiet(s.read(), now) {
		return false
	}
	for range 4 {
		runtime.Gosched()
	}
	return s.quiet(s.read(), now) && progress.Load() == mark
}

// describe says what keeps the process from settling: the goroutine
// counts, every Hold above zero, and where the goroutines that run, wait
// to run or sit in a system call are (their first frame outside the
// runtime), for a forced advance's report.
func (s *settler) describe() string {
	c := s.read()
	var b strings.Builder
	fmt.Fprintf(&b, "%d goroutines running besides the clock's, %d ready to run, %d in system calls (%d of them counted as living there)",
		c.running-min(c.running, 1), c.runnable, c.syscall, min(c.syscall, s.base))
	holds.mu.Lock()
	for _, h := range holds.all {
		if n := h.n.Load(); n != 0 {
			fmt.Fprintf(&b, "; %s: %d", h.name, n)
		}
	}
	holds.mu.Unlock()
	if where := busyGoroutines(); len(where) > 0 {
		fmt.Fprintf(&b, "; busy in: %s", strings.Join(where, ", "))
	}
	return b.String()
}

// busyGoroutines lists, from a dump of every goroutine's stack, where the
// ones running, ready to run or in a system call are: each one's first
// frame outside the runtime, with a count when several share it, the
// calling goroutine left out.
func busyGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := map[string]int{}
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // the caller's own
		}
		lines := strings.Split(string(g), "\n")
		if !busyState(lines[0]) {
			continue
		}
		count[firstFrame(lines[1:])]++
	}
	out := make([]string, 0, len(count))
	for f, n := range count {
		if n > 1 {
			f = fmt.Sprintf("%s (%d)", f, n)
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// busyState reports whether a stack dump's header ("goroutine 7
// [running]:") names a state that keeps the process from settling.
func busyState(header string) bool {
	for _, st := range []string{"[running", "[runnable", "[syscall"} {
		if strings.Contains(header, st) {
			return true
		}
	}
	return false
}

// firstFrame is the first function of a stack dump's frames outside the
// runtime and the standard library's internals.
func firstFrame(lines []string) string {
	for i := 0; i < len(lines); i += 2 {
		f := lines[i]
		if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "internal/") || strings.HasPrefix(f, "syscall.") {
			continue
		}
		if p := strings.LastIndexByte(f, '('); p > 0 {
			f = f[:p]
		}
		return f
	}
	if len(lines) > 0 {
		return lines[0]
	}
	return "?"
}
