package dash

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// sparseHistory is a remote leader's: a report every 2 s for a minute,
// the relay limit and the outbox depth steady, and none of either while
// the leader is down (its samples then have no limits) from downFrom to
// downTo.
func sparseHistory(downFrom, downTo result.Seconds) *history {
	var h history
	for t := result.Seconds(0); t <= 60; t += 2 {
		s := result.Sample{T: t, LeaderUp: true, Limits: []int{10}, OutboxDepth: 100}
		if t >= downFrom && t < downTo {
			s = result.Sample{T: t}
		}
		h.add(s)
	}
	return &h
}

// drawn marks the columns of a chart's lines (after the gutter's │) that
// hold anything.
func drawn(lines []string) []bool {
	var cols []bool
	for _, l := range lines {
		l = ansi.Strip(l)
		_, plot, ok := strings.Cut(l, "│")
		if !ok {
			continue
		}
		for i, r := range []rune(plot) {
			for len(cols) <= i {
				cols = append(cols, false)
			}
			cols[i] = cols[i] || r != ' '
		}
	}
	return cols
}

// holes counts the empty columns between the first and the last drawn.
func holes(cols []bool) int {
	first, last := -1, -1
	for i, c := range cols {
		if c {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	n := 0
	for i := first + 1; i < last; i++ {
		if !cols[i] {
			n++
		}
	}
	return n
}

// Samples sparser than the chart's dots (2 s over a chart 100 cells
// wide) draw a line, not scattered dots; the outbox strip holds each
// value until the next sample instead of leaving holes. A real gap (the
// leader down, no limit) stays a gap.
func TestSparseSamplesJoined(t *testing.T) {
	h := sparseHistory(-1, -1)
	from, to := h.start(), h.end()
	if n := holes(drawn(limitChart(h, limitLines(1), from, to, 100, 6))); n != 0 {
		t.Errorf("the relay chart of 2 s samples has %d empty columns inside it", n)
	}
	strip := stripLines(h, strip{"depth", mOutbox, stLine, fmtNum}, from, to, 100, 1)
	bars := []rune(ansi.Strip(strip[0]))[stripLabel+1 : 100-stripPeak-1]
	if s := string(bars); strings.Contains(strings.TrimRight(s, " "), " ") {
		t.Errorf("the outbox strip of 2 s samples has holes: %q", s)
	}

	h = sparseHistory(20, 40)
	if n := holes(drawn(limitChart(h, limitLines(1), from, to, 100, 6))); n < 20 {
		t.Errorf("the relay chart bridges the leader's 20 s down: %d empty columns", n)
	}
}
