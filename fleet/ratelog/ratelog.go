package ratelog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// Options configures New. Zero fields take the defaults noted.
type Options struct {
	// Clock tells the time. Default: the wall clock.
	Clock clock.Clock
	// Every is the interval per key. Default 10 s.
	Every time.Duration
	// MaxKeys bounds the keys remembered, so that senders with ever new
	// keys cannot grow the limiter without end. Default 10,000 (about a
	// megabyte). A key idle for Every is forgotten when room is needed;
	// when none is idle, a new key's lines are held back uncounted until
	// one is.
	MaxKeys int
}

// Limiter decides which lines may be logged. It is safe for concurrent
// use; Allow takes one mutex and allocates only for a new key.
type Limiter struct {
	clk     clock.Clock
	every   time.Duration
	maxKeys int

	mu     sync.Mutex
	keys   map[string]*entry
	pruned time.Time // last sweep of idle keys
}

type entry struct {
	last       time.Time // when a line was last let through
	suppressed uint64    // lines held back since
}

// New returns a Limiter with o's settings.
func New(o Options) *Limiter {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Every <= 0 {
		o.Every = 10 * time.Second
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 10_000
	}
	return &Limiter{clk: o.Clock, every: o.Every, maxKeys: o.MaxKeys, keys: make(map[string]*entry)}
}

// Allow reports whether a line for key may be logged now: the first one,
// and then one per interval. When it may, suppressed is how many lines for
// key were held back since the last one let through.
func (l *Limiter) Allow(key string) (ok bool, suppressed uint64) {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		if len(l.keys) >= l.maxKeys && !l.prune(now) {
			return false, 0
		}
		l.keys[key] = &entry{last: now}
		return true, 0
	}
	if now.Sub(e.last) < l.every {
		e.suppressed++
		return false, 0
	}
	suppressed = e.suppressed
	e.last, e.suppressed = now, 0
	return true, suppressed
}

// prune forgets the keys idle for a whole interval, at most once per
// interval (a sweep is a pass over every key), and reports whether there
// is room now.
func (l *Limiter) prune(now time.Time) bool {
	if now.Sub(l.pruned) >= l.every {
		l.pruned = now
		for k, e := range l.keys {
			if now.Sub(e.last) >= l.every {
				delete(l.keys, k)
			}
		}
	}
	return len(l.keys) < l.maxKeys
}

// Log logs msg with args at level on log if Allow(key) lets it through,
// with "suppressed", n added when n lines were held back since the last
// one. It reports whether it logged.
func (l *Limiter) Log(log *slog.Logger, level slog.Level, key, msg string, args ...any) bool {
	if !log.Enabled(context.Background(), level) {
		return false
	}
	ok, n := l.Allow(key)
	if !ok {
		return false
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	log.Log(context.Background(), level, msg, args...)
	return true
}

// Warn is Log at slog.LevelWarn.
func (l *Limiter) Warn(log *slog.Logger, key, msg string, args ...any) bool {
	return l.Log(log, slog.LevelWarn, key, msg, args...)
}

// Brief returns s cut to at most n bytes, as valid UTF-8, saying how long
// it was: a log line carries what an outside party sent only that briefly.
func Brief(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(s[:n], "\uFFFD"), len(s))
}
