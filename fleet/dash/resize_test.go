package dash

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// checkScreen fails when the view has more lines than h or a line wider
// than w.
func checkScreen(t *testing.T, what string, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Fatalf("%s at %d×%d: %d lines", what, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("%s at %d×%d: line %d is %d wide: %q", what, w, h, i, lw, l)
		}
	}
}

// The model is resized from 200×60 down to below the minimum in every
// state a user can put it in: no panic, no line past the edge, and
// "terminal too small" below 40×12.
func TestResize(t *testing.T) {
	states := []struct {
		name string
		live result.Live
		keys []string
	}{
		{"running", midRun(), nil},
		{"done", finished(), nil},
		{"starting", result.Live{Scenario: "x", Phase: "starting", Duration: 10}, nil},
		{"help", midRun(), []string{"?"}},
		{"zoom relay", midRun(), []string{"tab", "enter"}},
		{"zoom fleet", midRun(), []string{"tab", "tab", "tab", "enter"}},
		{"paused behind", func() result.Live { l := midRun(); l.Paused, l.Behind, l.Lag = true, true, 4.5; return l }(), nil},
		{"many partitions", func() result.Live {
			l := midRun()
			for i := range l.History {
				l.History[i].Limits = append(l.History[i].Limits, 1, 2, 3, 4, 5, 6)
			}
			l.Latest = l.History[len(l.History)-1]
			return l
		}(), nil},
	}
	for i, st := range states {
		// Every width for the main screen, every fifth for the others.
		step := 1
		if i > 0 {
			step = 5
		}
		t.Run(st.name, func(t *testing.T) {
			var tm tea.Model = New(fixedSource{st.live}, &fakeControls{}, Options{})
			tm, _ = tm.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
			tm, _ = tm.Update(tickMsg{})
			m, _ := press(t, tm.(Model), st.keys...)
			tm = m
			// Widths from 200 down to 30, the height shrinking with it
			// from 60 to 10; every seventh width also at the minimum
			// height, one row less, and the full height.
			for w := 200; w >= 30; w -= step {
				hs := []int{10 + (w-30)*50/170}
				if w%7 == 0 {
					hs = append(hs, 12, 11, 60)
				}
				for _, h := range hs {
					tm, _ = tm.Update(tea.WindowSizeMsg{Width: w, Height: h})
					v := tm.View()
					checkScreen(t, st.name, v, w, h)
					small := w < MinWidth || h < MinHeight
					if small != strings.Contains(v, "terminal too small") {
						t.Fatalf("%s at %d×%d: too-small message shown = %v", st.name, w, h, !small)
					}
					if n := strings.Count(v, "\n") + 1; !small && n != h {
						t.Fatalf("%s at %d×%d: %d lines, want all %d", st.name, w, h, n, h)
					}
				}
			}
			for _, sz := range [][2]int{{1, 1}, {0, 0}, {39, 100}, {300, 11}} {
				tm, _ = tm.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				checkScreen(t, st.name, tm.View(), max(sz[0], 0), max(sz[1], 1))
			}
		})
	}
}
