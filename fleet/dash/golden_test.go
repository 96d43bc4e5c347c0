package dash

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// screen runs the model through a resize and one tick and returns it.
func screen(t *testing.T, l result.Live, ctl Controls, w, h int) Model {
	t.Helper()
	return screenOf(t, sourceOf(l), ctl, Options{}, w, h)
}

// screenOf is screen with any source and options.
func screenOf(t *testing.T, src Source, ctl Controls, o Options, w, h int) Model {
	t.Helper()
	var m tea.Model = New(src, ctl, o)
	m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m, _ = m.Update(tickMsg{})
	return m.(Model)
}

// TestGolden compares whole screens with testdata/TestGolden/*.golden;
// go test -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		live result.Live
		ctl  Controls
	}{
		{"running", midRun(), &fakeControls{}},
		{"done", finished(), &fakeControls{}},
		{"readonly", midRun(), nil},
	} {
		for _, sz := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1]), func(t *testing.T) {
				m := screen(t, tc.live, tc.ctl, sz[0], sz[1])
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}
