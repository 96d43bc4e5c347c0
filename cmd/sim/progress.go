package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
)

// progressWidth is the most columns a headless progress line takes.
const progressWidth = 100

// progressSteps is how many lines a run's simulated duration gets at
// least: one every tenth of it.
const progressSteps = 10

// progress decides when the headless progress line is due and remembers
// what the last line showed, so that a line shows what happened since
// the one before (rejections, backpressure) and not only a moment's
// depth, which a burst filling and emptying the box between two lines
// leaves at 0.
type progress struct {
	every    time.Duration // wall time between lines (0: only steps and phases)
	step     result.Seconds
	nextStep result.Seconds
	phase    string
	lastWall time.Time
	last     result.Sample
}

func newProgress(duration result.Seconds, every time.Duration) *progress {
	step := duration / progressSteps
	return &progress{every: every, step: step, nextStep: step}
}

// due reports whether a line is due at simulated time now in phase, at
// wall time wall: the phase changed, now passed the next tenth of the
// duration, or the wall interval passed since the last line.
func (p *progress) due(now result.Seconds, phase string, wall time.Time) bool {
	switch {
	case phase == result.PhaseStarting:
		return false // nothing to show before time 0
	case phase != p.phase:
		return true
	case p.step > 0 && now >= p.nextStep:
		return true
	case p.every > 0 && wall.Sub(p.lastWall) >= p.every:
		return true
	}
	return false
}

// line is the progress line for l, and marks it as the last one shown.
func (p *progress) line(l result.Live, wall time.Time) string {
	s := progressLine(l, p.last)
	p.phase, p.lastWall, p.last = l.Phase, wall, l.Latest
	if p.step > 0 {
		for p.nextStep <= l.Now {
			p.nextStep += p.step
		}
	}
	return s
}

// progressPart is one item of a progress line; parts of a lower rank are
// left out first when the line would pass progressWidth.
type progressPart struct {
	text string
	rank int
}

// progressLine is the headless progress line: simulated time and phase,
// then the counts a person watching a run wants, since the line before
// (prev, the sample it showed) where a moment's value would hide a burst.
// It never passes progressWidth columns: the least needed parts give way.
func progressLine(l result.Live, prev result.Sample) string {
	s := l.Latest
	parts := []progressPart{
		{fmt.Sprintf("%5.1fs/%s %s", float64(l.Now), compactSec(l.Duration), l.Phase), 9},
		{fmt.Sprintf("online %d/%d", s.Online, len(l.Workers)), 4},
	}
	if l.Target != "" {
		parts = append(parts, progressPart{fmt.Sprintf("at %s %d", l.Target, s.AtTarget), 2})
	}
	box := fmt.Sprintf("box %d/%d", s.LeaderDepth, s.LeaderCapacity)
	if s.LeaderCapacity == 0 {
		box = fmt.Sprintf("box %d", s.LeaderDepth)
	}
	parts = append(parts,
		progressPart{box + " max " + strconv.Itoa(s.LeaderMaxDepth), 8},
		progressPart{"rej +" + strconv.FormatUint(since(s.LeaderRejected, prev.LeaderRejected), 10), 8},
		progressPart{"bp +" + strconv.FormatUint(since(s.Backpressure, prev.Backpressure), 10), 8},
		progressPart{"w99 " + compactSec(s.LeaderWaitP99), 8},
		progressPart{fmt.Sprintf("outbox %d", s.OutboxDepth), 3},
		progressPart{fmt.Sprintf("delivered %d", s.Delivered), 1},
	)
	// On the virtual clock a run does not fall behind its schedule unless
	// something in the process waited on the wall clock: say so then.
	if l.Behind {
		parts = append(parts, progressPart{"BEHIND " + strconv.FormatFloat(float64(l.Lag), 'f', 2, 64) + "s", 9})
		if l.LagOf != "" {
			parts = append(parts, progressPart{"(" + l.LagOf + " lag)", 5})
		}
	}
	if l.Paused {
		parts = append(parts, progressPart{"paused", 9})
	}
	return fitParts(parts, progressWidth)
}

// progressLegend is printed once before a run's progress lines.
const progressLegend = "box: leader mailbox now/capacity and the most it held; rej, bp: requests rejected and\n" +
	"relay backpressure since the line before; w99: mailbox wait p99; times simulated"

// since is a cumulative counter's increase; a counter that went back (a
// new leader's, before the sums catch up) counts as no increase.
func since(now, before uint64) uint64 {
	if now < before {
		return 0
	}
	return now - before
}

// fitParts joins parts with two spaces, leaving out the lowest-ranked ones
// (the last of equal rank first) until the line fits width columns, and
// cuts what still does not fit.
func fitParts(parts []progressPart, width int) string {
	const sep = "  "
	for {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.text
		}
		line := strings.Join(texts, sep)
		if n := len([]rune(line)); n <= width || len(parts) == 1 {
			if n > width {
				line = string([]rune(line)[:width-1]) + "…"
			}
			return line
		}
		drop := len(parts) - 1
		for i := len(parts) - 1; i >= 0; i-- {
			if parts[i].rank < parts[drop].rank {
				drop = i
			}
		}
		parts = append(parts[:drop:drop], parts[drop+1:]...)
	}
}

// compactSec formats simulated seconds in a few columns: "0.4ms", "16ms",
// "1.24s", "31.4s", "100s".
func compactSec(s result.Seconds) string {
	v := float64(s)
	switch {
	case v < 0.01:
		return strconv.FormatFloat(v*1000, 'f', 1, 64) + "ms"
	case v < 1:
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + "ms"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64) + "s"
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64) + "s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "s"
}

// headless prints a progress line at every phase change, every tenth of
// the run's simulated duration and every interval of wall time, until the
// run has finished, then one for its end. The tenths come from the run's
// own clock (Runner.WaitUntil), so they are on time however fast the run
// goes; the phases and the wall interval are polled from the run's
// position, which costs nothing whatever the fleet's size. A snapshot is
// taken only for a line. interval 0 prints no line at all.
func headless(ctx context.Context, r *runner.Runner, every time.Duration, w io.Writer, finished <-chan struct{}) {
	if every <= 0 {
		return
	}
	name := r.Snapshot()
	title := name.Scenario
	if name.Variant != "" {
		title += " [" + name.Variant + "]"
	}
	pace := "as fast as the machine goes"
	if name.Speed > 0 {
		pace = fmt.Sprintf("at speed %g at most", name.Speed)
	}
	fmt.Fprintf(w, "%s: %d workers, %s of timeline %s\n%s\n", title, len(name.Workers), compactSec(name.Duration), pace, progressLegend)
	_, dur, _ := r.Position()
	p := newProgress(dur, every)
	tenths := make(chan struct{})
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for k := 1; k < progressSteps; k++ {
			at := time.Duration(float64(dur) * float64(k) / progressSteps * float64(time.Second))
			if r.WaitUntil(tctx, at) != nil {
				return
			}
			select {
			case tenths <- struct{}{}:
			case <-tctx.Done():
				return
			}
		}
	}()
	t := time.NewTicker(min(100*time.Millisecond, every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-finished:
			if l := r.Snapshot(); l.Phase != p.phase {
				fmt.Fprintln(w, p.line(l, time.Now()))
			}
			return
		case <-tenths:
			fmt.Fprintln(w, p.line(r.Snapshot(), time.Now()))
		case wall := <-t.C:
			if now, _, phase := r.Position(); p.due(now, phase, wall) {
				fmt.Fprintln(w, p.line(r.Snapshot(), wall))
			}
		}
	}
}
