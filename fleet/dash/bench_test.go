package dash

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// BenchmarkView is the cost of one frame at 160×48 for fleets of
// growing size: the frame must not grow with the fleet (the grid has as
// many cells either way). BenchmarkPull is the per-tick cost, which
// passes over the workers once.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			m := benchModel(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

func BenchmarkPull(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			m := benchModel(n)
			b.ReportAllocs()
			for b.Loop() {
				m.pull()
			}
		})
	}
}

func benchModel(n int) Model {
	l := midRun()
	l.Workers = make([]result.WorkerState, n)
	for i := range l.Workers {
		l.Workers[i] = result.WorkerState(i * 7 % numStates)
	}
	var tm tea.Model = New(fixedSource{l}, &fakeControls{}, Options{})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	tm, _ = tm.Update(tickMsg{})
	return tm.(Model)
}
