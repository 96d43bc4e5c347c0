package dash

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer is an io.Writer that keeps the last lines written to it for
// the event pane, so log output shows inside the dashboard instead of
// tearing the screen behind it. Give it to log.SetOutput or to a slog
// handler. It is safe for concurrent use.
type LogBuffer struct {
	mu      sync.Mutex
	lines   []string // ring of at most max lines
	max     int
	next    uint64 // sequence number of the next line
	partial []byte // a line not yet ended by '\n'
}

// NewLogBuffer returns a buffer that keeps the last n lines (at least 1).
// Older lines are counted: Since reports how many were skipped.
func NewLogBuffer(n int) *LogBuffer {
	return &LogBuffer{max: max(1, n)}
}

// Write splits p into lines; a line without its '\n' waits for the rest.
// It never fails.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.partial = append(b.partial, p...)
			break
		}
		line := string(append(b.partial, p[:i]...))
		b.partial = b.partial[:0]
		p = p[i+1:]
		b.add(strings.TrimRight(line, "\r"))
	}
	return n, nil
}

func (b *LogBuffer) add(line string) {
	if len(b.lines) < b.max {
		b.lines = append(b.lines, line)
	} else {
		b.lines[b.next%uint64(b.max)] = line
	}
	b.next++
}

// Since returns the lines written after sequence number seq (0 for all
// kept), the sequence number to pass next time, and how many lines after
// seq were already overwritten by newer ones.
func (b *LogBuffer) Since(seq uint64) (lines []string, next uint64, skipped uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	oldest := b.next - uint64(len(b.lines))
	if seq < oldest {
		skipped = oldest - seq
		seq = oldest
	}
	for s := seq; s < b.next; s++ {
		lines = append(lines, b.lines[s%uint64(b.max)])
	}
	return lines, b.next, skipped
}
