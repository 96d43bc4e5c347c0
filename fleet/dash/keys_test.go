package dash

import (
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func press(t *testing.T, m Model, keys ...string) (Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "space":
			msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		case "ctrl+c":
			msg = tea.KeyMsg{Type: tea.KeyCtrlC}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "up":
			msg = tea.KeyMsg{Type: tea.KeyUp}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		var tm tea.Model
		tm, cmd = m.Update(msg)
		m = tm.(Model)
	}
	return m, cmd
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestKeysCallControls(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		want []string
	}{
		{"space pauses then resumes", []string{"space", "space"}, []string{"pause", "resume"}},
		{"k kills the leader", []string{"k"}, []string{"kill"}},
		{"+ doubles and - halves the speed", []string{"+", "+", "-"}, []string{"speed ×8", "speed ×16", "speed ×8"}},
		{"p partitions 10%", []string{"p"}, []string{"partition 10"}},
		{"h heals", []string{"h"}, []string{"heal"}},
		{"d deploys the next versions", []string{"d", "d"}, []string{"deploy 1.0.2", "deploy 1.0.3"}},
		{"view keys change nothing", []string{"tab", "enter", "esc", "?", "?", "up", "x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctl := &fakeControls{}
			m := screen(t, midRun(), ctl, 100, 30)
			m, _ = press(t, m, tc.keys...)
			if got := ctl.Calls(); !slices.Equal(got, tc.want) {
				t.Fatalf("calls = %q, want %q", got, tc.want)
			}
			// Each call shows in the event log, pending its record.
			var pending int
			for _, l := range m.Events() {
				if strings.HasSuffix(l, " …") {
					pending++
				}
			}
			if pending != len(tc.want) {
				t.Errorf("%d pending control lines in the log, want %d:\n%s", pending, len(tc.want), strings.Join(m.Events(), "\n"))
			}
		})
	}
}

func TestPauseShowsAtOnce(t *testing.T) {
	m := screen(t, midRun(), &fakeControls{}, 100, 30)
	if strings.Contains(m.View(), "PAUSED") {
		t.Fatal("PAUSED before space")
	}
	m, _ = press(t, m, "space")
	if !m.Last().Paused || !strings.Contains(m.View(), "PAUSED") {
		t.Fatal("space did not show PAUSED")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			ctl := &fakeControls{}
			m, cmd := press(t, screen(t, midRun(), ctl, 100, 30), k)
			if !isQuit(cmd) || !m.Quitting() {
				t.Fatalf("%s: cmd is not tea.Quit", k)
			}
			if len(ctl.Calls()) != 0 {
				t.Fatalf("quit called controls: %q", ctl.Calls())
			}
		})
	}
}

// With nil Controls (a read-only source) the run keys do nothing, say
// why in the log, and the help and footer say so.
func TestReadOnlyDisablesRunKeys(t *testing.T) {
	m := screen(t, midRun(), nil, 100, 30)
	m, _ = press(t, m, "space", "+", "-", "p", "h", "k", "d") // must not panic on nil
	if m.Last().Paused {
		t.Error("space paused a read-only view")
	}
	notes := 0
	for _, l := range m.Events() {
		if strings.Contains(l, "ignored: read-only") {
			notes++
		}
	}
	if notes != 7 {
		t.Errorf("%d read-only notes, want 7:\n%s", notes, strings.Join(m.Events(), "\n"))
	}
	lines := strings.Split(m.View(), "\n")
	if foot := lines[len(lines)-1]; !strings.HasPrefix(foot, "read-only") || strings.Contains(foot, "kill leader") {
		t.Errorf("footer = %q, want it to say read-only and offer no run keys", foot)
	}
	m, _ = press(t, m, "?")
	if v := m.View(); !strings.Contains(v, "disabled: this is a read-only") {
		t.Errorf("help does not say the keys are disabled:\n%s", v)
	}
}

func TestFinishedRunDisablesRunKeys(t *testing.T) {
	ctl := &fakeControls{}
	m := screen(t, finished(), ctl, 100, 30)
	m, _ = press(t, m, "space", "k", "d")
	if len(ctl.Calls()) != 0 {
		t.Fatalf("a finished run was steered: %q", ctl.Calls())
	}
	if !strings.Contains(strings.Join(m.Events(), "\n"), "ignored: the run has finished") {
		t.Error("no note that the run has finished")
	}
}

// The run's own record of a key replaces the pending line: the log shows
// each control once.
func TestControlRecordReplacesPendingKey(t *testing.T) {
	src := &fixedSource{midRun()}
	var tm tea.Model = New(src, &fakeControls{}, Options{})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	tm, _ = tm.Update(tickMsg{})
	m, _ := press(t, tm.(Model), "k")
	src.live.Records = append(slices.Clip(src.live.Records), result.Record{T: 40.2, Kind: "control", Text: "kill leader (key k)"})
	tm, _ = m.Update(tickMsg{})
	m = tm.(Model)
	var kills []string
	for _, l := range m.Events() {
		if strings.Contains(l, "kill leader") {
			kills = append(kills, l)
		}
	}
	if len(kills) != 1 || !strings.Contains(kills[0], "40.2s control kill leader (key k)") {
		t.Fatalf("kill leader lines = %q, want the run's record once", kills)
	}
}

func TestTickRearms(t *testing.T) {
	m := New(fixedSource{midRun()}, nil, Options{})
	if _, ok := m.Init()().(tickMsg); !ok {
		t.Fatal("Init does not pull a snapshot at once")
	}
	_, cmd := m.Update(tickMsg{})
	if cmd == nil {
		t.Fatal("a tick did not re-arm the tick")
	}
}

func TestNextVersion(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "1.0.1",
		"1.0.0":                   "1.0.1",
		"1.0.9":                   "1.0.10",
		"v2":                      "v3",
		"2.0-rc1":                 "2.0-rc2",
		"build007":                "build008",
		"beta":                    "beta.1",
		"99999999999999999999999": "99999999999999999999999.1",
	} {
		if got := NextVersion(in); got != want {
			t.Errorf("NextVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// tab cycles through the panes shown, skipping the outbox when the
// terminal is too short for it.
func TestFocusCycle(t *testing.T) {
	for _, tc := range []struct {
		h    int
		want []string
	}{
		{30, []string{"relay", "outbox", "fleet", "events", "leader"}},
		{14, []string{"relay", "fleet", "events", "leader"}},
	} {
		m := screen(t, midRun(), nil, 100, tc.h)
		var got []string
		for range tc.want {
			m, _ = press(t, m, "tab")
			got = append(got, m.Focused())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("height %d: tab focuses %q, want %q", tc.h, got, tc.want)
		}
	}
}
