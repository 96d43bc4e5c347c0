package leader

import (
	"sync"
	"time"
)

// logLimit lets a log line about one sender through at most once per
// every, and counts the lines it holds back, so that what a hostile
// sender sends cannot grow the log. Its memory is bounded: past
// logLimitKeys senders it forgets them all and starts over (at worst a
// few more lines). Safe for concurrent use.
type logLimit struct {
	every time.Duration

	mu   sync.Mutex
	seen map[string]logLimitState
}

type logLimitState struct {
	at   time.Time // of the last line let through
	held uint64    // lines held back since
}

const logLimitKeys = 1024

// allow reports whether a line about key may be logged at now, and how
// many lines about key it held back since the last one it allowed.
func (g *logLimit) allow(key string, now time.Time) (ok bool, held uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, known := g.seen[key]
	if known && now.Sub(s.at) < g.every {
		s.held++
		g.seen[key] = s
		return false, 0
	}
	if g.seen == nil || !known && len(g.seen) >= logLimitKeys {
		g.seen = make(map[string]logLimitState)
	}
	g.seen[key] = logLimitState{at: now}
	return true, s.held
}

// forgedLogEvery spaces the log lines about one worker's forged acks.
const forgedLogEvery = time.Minute
