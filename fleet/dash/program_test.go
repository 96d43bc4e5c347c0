package dash

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	flowctl "github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// runningSource is a run that advances one simulated second per
// snapshot unless paused, and records the controls it is given.
type runningSource struct {
	fakeControls
	mu     sync.Mutex
	live   result.Live
	polled chan struct{} // closed after the first snapshot
	once   sync.Once
}

func newRunningSource() *runningSource {
	l := midRun()
	l.Now, l.History = 0, l.History[:1]
	l.Latest = l.History[0]
	return &runningSource{live: l, polled: make(chan struct{})}
}

// Limiter is the relay's limiter: AIMD, as a runner's by default.
func (s *runningSource) Limiter() flowctl.LimiterOptions { return flowctl.DefaultLimiterOptions }

func (s *runningSource) Snapshot() result.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.once.Do(func() { close(s.polled) })
	if !s.live.Paused && s.live.Now < s.live.Duration {
		s.live.Now++
		smp := s.live.Latest
		smp.T = s.live.Now
		smp.Delivered += 100
		smp.Limits = []int{sawtooth(int(s.live.Now), 0), sawtooth(int(s.live.Now), 1)}
		s.live.History = append(s.live.History, smp)
		s.live.Latest = smp
	}
	l := s.live
	l.History = slices.Clip(l.History)
	return l
}

// Pause and KillLeader act on the run and record themselves, as the
// runner does: a "control" record per call, in call order.
func (s *runningSource) Pause() {
	s.mu.Lock()
	s.live.Paused = true
	s.live.Records = append(s.live.Records, result.Record{T: s.live.Now, Kind: "control", Text: "pause"})
	s.mu.Unlock()
	s.fakeControls.Pause()
}

func (s *runningSource) SetSpeed(v float64) {
	s.mu.Lock()
	s.live.Speed = v
	s.mu.Unlock()
	s.fakeControls.SetSpeed(v)
}

func (s *runningSource) KillLeader() {
	s.mu.Lock()
	s.live.Records = append(s.live.Records, result.Record{T: s.live.Now, Kind: "control", Text: "kill leader"})
	s.live.Latest.LeaderUp = false
	s.mu.Unlock()
	s.fakeControls.KillLeader()
}

func contains(s string) func([]byte) bool {
	return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
}

// A whole program on a fake terminal: the progress advances by itself
// (the tick re-arms), space pauses, k kills the leader, q quits; the
// final model agrees with what the source was told.
func TestProgram(t *testing.T) {
	src := newRunningSource()
	tm := teatest.NewTestModel(t, New(src, src, Options{Refresh: MinRefresh}),
		teatest.WithInitialTermSize(100, 30))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), contains(what),
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	wait("3.0s / 1m00s") // three ticks at least: the progress moves
	tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	wait("PAUSED")
	tm.Type("k")
	wait("leader DOWN")
	tm.Type("q")
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if !ok {
		t.Fatal("final model is not a dash.Model")
	}

	if got, want := src.Calls(), []string{"pause", "kill"}; !slices.Equal(got, want) {
		t.Errorf("controls called %q, want %q", got, want)
	}
	last := fm.Last()
	if !fm.Quitting() || !last.Paused || last.Now < 3 {
		t.Errorf("final model: quitting %v, paused %v, now %v; want true, true, ≥3", fm.Quitting(), last.Paused, last.Now)
	}
	var kills, pauses int
	for _, l := range fm.Events() {
		if strings.Contains(l, "kill leader") {
			kills++
			if strings.HasSuffix(l, "…") {
				t.Errorf("kill leader still pending after the run recorded it: %q", l)
			}
		}
		if strings.Contains(l, "control pause") {
			pauses++
			if strings.HasSuffix(l, "…") {
				t.Errorf("pause still pending after the run recorded it: %q", l)
			}
		}
	}
	if kills != 1 || pauses != 1 {
		t.Errorf("event log has %d kill and %d pause lines, want 1 each:\n%s", kills, pauses, strings.Join(fm.Events(), "\n"))
	}
}

// Run draws on its output until q, and the standard logger writes into
// the event pane's buffer meanwhile, not onto the screen.
func TestRunQuitAndLogs(t *testing.T) {
	src := &loggingSource{fixedSource: fixedSource{midRun()}, logged: make(chan struct{})}
	in, keys := io.Pipe()
	var out bytes.Buffer
	logs := NewLogBuffer(10)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), src, &fakeControls{}, Options{Input: in, Output: &out, Logs: logs, Refresh: MinRefresh})
	}()
	<-src.logged // the source logs on its first snapshot; quit after it
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run after q = %v, want nil", err)
	}
	keys.Close()
	if strings.Contains(out.String(), "snapshot taken") {
		t.Error("a log line went to the terminal")
	}
	if lines, _, _ := logs.Since(0); !slices.Contains(lines, "snapshot taken") {
		t.Errorf("log lines = %q, want the source's", lines)
	}
	if log.Writer() == logs {
		t.Error("the standard logger still writes to the dashboard")
	}
}

type loggingSource struct {
	fixedSource
	once   sync.Once
	logged chan struct{}
}

func (s *loggingSource) Snapshot() result.Live {
	s.once.Do(func() {
		log.Print("snapshot taken")
		close(s.logged)
	})
	return s.fixedSource.Snapshot()
}

// Run returns ctx's error when ctx ends first.
func TestRunContextEnds(t *testing.T) {
	src := newRunningSource()
	in, keys := io.Pipe()
	defer keys.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, src, nil, Options{Input: in, Output: io.Discard, Refresh: MinRefresh})
	}()
	<-src.polled
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v, want context.Canceled", err)
	}
}

// endingSource is a run that finishes after a few snapshots.
type endingSource struct {
	mu sync.Mutex
	n  int
}

func (s *endingSource) Snapshot() result.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n < 5 {
		l := midRun()
		return l
	}
	return finished()
}

// The leftover-drawing case: started at 80×24, resized to 120×36, the
// run ends and q quits. The resize clears the whole screen (a grown
// terminal keeps what was drawn past the old edges otherwise), and the
// last frame is blank, so nothing of the dashboard is left above what
// the caller prints next.
func TestProgramResizeEndQuit(t *testing.T) {
	tm := teatest.NewTestModel(t, New(&endingSource{}, &fakeControls{}, Options{Refresh: MinRefresh}),
		teatest.WithInitialTermSize(80, 24))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), contains(what),
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	wait("wave-deploy")
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 36})
	wait("\x1b[2J") // the whole screen cleared after the resize
	wait("done: FAILED")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if v := fm.View(); v != "" {
		t.Errorf("the last frame after q is not blank:\n%s", v)
	}
}

// The whole program on a fake terminal, driven by every key the help
// lists: each one's mark shows on the screen, the run keys reach the
// source in order, and q quits with a blank last frame.
func TestProgramEveryKey(t *testing.T) {
	src := newRunningSource()
	tm := teatest.NewTestModel(t, New(src, src, Options{Refresh: MinRefresh}), teatest.WithInitialTermSize(120, 36))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), contains(what),
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	key := func(k tea.KeyType) { tm.Send(tea.KeyMsg{Type: k}) }
	wait("3.0s / 1m00s")
	for _, step := range []struct {
		send func()
		mark string
	}{
		{func() { tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}) }, "PAUSED"},
		{func() { tm.Type("+") }, "speed ×8"},
		{func() { tm.Type("-") }, "control speed ×4"},
		{func() { tm.Type("p") }, "partition 10% of workers"},
		{func() { tm.Type("h") }, "heal partitions"},
		{func() { tm.Type("d") }, "deploy 1.0.2"},
		{func() { key(tea.KeyLeft) }, "the charts show the whole run"},
		{func() { tm.Type("[") }, "Leader ["},
		{func() { key(tea.KeyLeft) }, "Relay: AIMD limit per partition ["},
		{func() { key(tea.KeyRight) }, "Relay: AIMD limit per partition ["},
		{func() { tm.Type("]") }, "Relay: AIMD limit per partition ─"},
		{func() { key(tea.KeyHome) }, "lines up · end follows"},
		{func() { key(tea.KeyEnd) }, "Events ─"},
		{func() { key(tea.KeyUp) }, "(1 lines up"},
		{func() { key(tea.KeyDown) }, "Events ─"},
		{func() { key(tea.KeyPgUp) }, "lines up · end follows"},
		{func() { key(tea.KeyPgDown) }, "Events ─"},
		{func() { tm.Type("/"); tm.Type("speed"); key(tea.KeyEnter) }, "Events matching /speed: "},
		{func() { key(tea.KeyEsc) }, "Events ─"},
		{func() { key(tea.KeyTab); key(tea.KeyTab); key(tea.KeyTab); key(tea.KeyRight) }, "Workers 0–"},
		{func() { key(tea.KeyEsc); key(tea.KeyShiftTab); key(tea.KeyEnter) }, "Outbox"},
		{func() { key(tea.KeyEsc); tm.Type("?") }, "Help (? or esc to close)"},
		{func() { key(tea.KeyEsc); tm.Type("k") }, "leader DOWN"},
	} {
		t.Logf("waiting for %q", step.mark)
		step.send()
		wait(step.mark)
	}
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if v := fm.View(); v != "" {
		t.Errorf("the last frame is not blank:\n%s", v)
	}
	want := []string{"pause", "speed ×8", "speed ×4", "partition 10", "heal", "deploy 1.0.2", "kill"}
	if got := src.Calls(); !slices.Equal(got, want) {
		t.Errorf("controls %q, want %q", got, want)
	}
}
