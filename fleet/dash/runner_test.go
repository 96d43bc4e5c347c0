package dash

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

const smallScenario = `
name: dash-small
description: Forty workers and a deploy in waves, the dashboard on a real run.
speed: 5
duration: 2m
fleet:
  count: 40
  worker: {heartbeat: 5s}
timeline:
  - at: 5s
    deploy: {version: 2.0.0, wave_size: 10, wave_interval: 5s}
expect:
  - lost == 0
`

// TestProgramWithRunner is the whole program on a real run: the runner's
// broker, MQTT sessions, bbolt outbox and workers behind the dashboard on
// a fake terminal. The progress advances; space pauses the run, k kills
// the leader (it restarts from its bbolt file), q quits; the run records
// the keys and, cancelled, stops cleanly (goleak checks the rest).
func TestProgramWithRunner(t *testing.T) {
	sc, err := scenario.Parse("small.yaml", []byte(smallScenario))
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.NewRunner(sc, runner.RunOptions{Dir: t.TempDir(), Speed: sc.Speed}) // the dashboard's ceiling
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *result.Report, 1)
	go func() {
		rep, _ := r.Run(ctx)
		done <- rep
	}()

	tm := teatest.NewTestModel(t, New(r, r, Options{Refresh: MinRefresh}), teatest.WithInitialTermSize(120, 40))
	fleettest.Eventually(t, 60*time.Second, "the run under way", func() error {
		l := r.Snapshot()
		return fleettest.Unless(l.Phase == result.PhaseRunning && l.Now >= 2, "phase %q at %.1fs", l.Phase, l.Now)
	})
	teatest.WaitFor(t, tm.Output(), contains("dash-small"), teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	fleettest.Eventually(t, 10*time.Second, "the run paused", func() error {
		l := r.Snapshot()
		return fleettest.Unless(l.Paused, "phase %q at %.1fs, not paused", l.Phase, l.Now)
	})
	tm.Type("k")
	fleettest.Eventually(t, 10*time.Second, "the leader killed", func() error {
		recs := r.Snapshot().Records
		killed := slices.ContainsFunc(recs, func(rec result.Record) bool {
			return rec.Kind == "control" && strings.HasPrefix(rec.Text, "kill the leader")
		})
		return fleettest.Unless(killed, "%d records, none a kill of the leader", len(recs))
	})
	// The dashboard shows space at once, before its next snapshot; wait
	// for a snapshot taken after the kill, and so after the pause, before
	// judging the last one it holds.
	teatest.WaitFor(t, tm.Output(), contains("kill the leader"), teatest.WithDuration(10*time.Second))
	tm.Type("q")
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if !ok || !fm.Quitting() {
		t.Fatalf("final model: %T quitting=%v", fm, ok && fm.Quitting())
	}
	if last := fm.Last(); !last.Paused || last.Now < 2 {
		t.Errorf("final snapshot: paused %v at %vs; want paused after 2s", last.Paused, last.Now)
	}
	cancel() // what sim run does when the user quits
	rep := <-done
	var controls []string
	for _, rec := range rep.Records {
		if rec.Kind == "control" {
			controls = append(controls, rec.Text)
		}
	}
	if len(controls) != 2 || controls[0] != "pause" || !strings.HasPrefix(controls[1], "kill the leader") {
		t.Errorf("the report recorded controls %q, want pause and kill leader", controls)
	}
}
