package dash

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestGoldenHelp is the help overlay at the two sizes people use, for a
// run, a read-only view and a sweep's variant: every key it answers is
// on screen without scrolling, none cut off; go test -run TestGoldenHelp
// -update rewrites testdata/TestGoldenHelp.
func TestGoldenHelp(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctl  Controls
		o    Options
	}{
		{"running", &fakeControls{}, Options{}},
		{"readonly", nil, Options{}},
		{"sweep", &fakeControls{}, Options{Sweep: Sweep{Variant: 1, Variants: 3, Label: "aimd"}}},
	} {
		for _, sz := range [][2]int{{80, 24}, {140, 40}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1]), func(t *testing.T) {
				m := screenOf(t, sourceOf(midRun()), tc.ctl, tc.o, sz[0], sz[1])
				m, _ = press(t, m, "?")
				out := m.View()
				checkScreen(t, "help", out, sz[0], sz[1])
				plain := strings.Join(lines(m), "\n")
				if !strings.Contains(plain, "Help (? or esc to close") {
					t.Errorf("the help's title is cut:\n%s", plain)
				}
				for _, e := range helpEntries(m.keys.FullHelp()) {
					// The key, then the first word of what it does.
					word := strings.Fields(e.desc)[0]
					re := regexp.MustCompile(`(^|[┃ ])` + regexp.QuoteMeta(e.key) + ` +` + regexp.QuoteMeta(word))
					if !re.MatchString(plain) {
						t.Errorf("the help lacks %s (%s):\n%s", e.key, e.desc, plain)
					}
				}
				for _, l := range lines(m) {
					if strings.Contains(l, "┃") && strings.Contains(l, "…") {
						t.Errorf("a help line is cut: %q", l)
					}
				}
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// The notes below the keys scroll when the terminal is too short for
// them: ↓ shows the rest, down to the legend's last line, and ↑ goes
// back; the title says so. The help keeps the keys' meaning for itself
// while it is open: the event pane does not scroll behind it.
func TestHelpScrolls(t *testing.T) {
	m := screen(t, midRun(), &fakeControls{}, 80, 24)
	m, _ = press(t, m, "?")
	first := strings.Join(lines(m), "\n")
	if !strings.Contains(first, "↑ ↓ scroll") || !strings.Contains(first, "more line") {
		t.Fatalf("a help taller than 80×24 does not say it scrolls:\n%s", first)
	}
	const last = "the worse one)."
	if strings.Contains(first, last) {
		t.Fatalf("the whole help fits at 80×24; the test needs one that does not:\n%s", first)
	}
	for range 40 {
		m, _ = press(t, m, "down")
	}
	end := strings.Join(lines(m), "\n")
	if !strings.Contains(end, last) || strings.Contains(end, "more line") {
		t.Errorf("↓ does not reach the help's end:\n%s", end)
	}
	if m.events.scroll != 0 {
		t.Errorf("↓ in the help scrolled the events %d lines", m.events.scroll)
	}
	for range 40 {
		m, _ = press(t, m, "up")
	}
	if got := strings.Join(lines(m), "\n"); got != first {
		t.Errorf("↑ does not go back to the top:\n%s", got)
	}
}

// keyColumns never draws past the width it is given, and keeps every
// key, from one column to three.
func TestKeyColumnsFit(t *testing.T) {
	es := helpEntries(newKeyMap().FullHelp())
	for w := 20; w <= 200; w++ {
		ls := keyColumns(es, w)
		all := strings.Join(ls, "\n")
		for _, l := range ls {
			if n := len([]rune(l)); n > w {
				t.Fatalf("width %d: a line of %d: %q", w, n, l)
			}
		}
		for _, e := range es {
			if !strings.Contains(all, e.key+" ") && !strings.HasSuffix(all, e.key) {
				t.Fatalf("width %d: %s missing:\n%s", w, e.key, all)
			}
		}
	}
}
