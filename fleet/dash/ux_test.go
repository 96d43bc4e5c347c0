package dash

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// lines is the view as plain lines.
func lines(m Model) []string {
	return strings.Split(ansi.Strip(m.View()), "\n")
}

// paneLines is the interior of the box whose top edge holds title, as
// plain lines (the right-hand box when two share the row).
func paneLines(t *testing.T, m Model, title string) []string {
	t.Helper()
	ls := lines(m)
	for i, l := range ls {
		at := strings.Index(l, title)
		if at < 0 {
			continue
		}
		r := []rune(l)
		col := len([]rune(l[:at])) - 3 // the box's left corner: "╭─ "
		var out []string
		for _, b := range ls[i+1:] {
			br := []rune(b)
			if col >= len(br) || (br[col] != '│' && br[col] != '┃') {
				break
			}
			end := col + 1
			for end < len(br) && br[end] != '│' && br[end] != '┃' {
				end++
			}
			out = append(out, string(br[col+1:end]))
		}
		_ = r
		return out
	}
	t.Fatalf("no pane titled %q:\n%s", title, strings.Join(ls, "\n"))
	return nil
}

func TestFmtSpeed(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{1, "×1"}, {16, "×16"}, {2.5, "×2.5"}, {0.5, "×1/2"}, {1.0 / 64, "×1/64"}, {0.3, "×0.3"},
	} {
		if got := fmtSpeed(tc.in); got != tc.want {
			t.Errorf("fmtSpeed(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The - and + keys stop at their limits and say so, instead of doing
// nothing silently.
func TestSpeedLimits(t *testing.T) {
	l := midRun()
	l.Speed = 2 * MinKeySpeed
	ctl := &fakeControls{}
	m := screen(t, l, ctl, 100, 30)
	m, _ = press(t, m, "-", "-")
	if got, want := ctl.Calls(), []string{"speed ×1/64"}; !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if ev := strings.Join(m.Events(), "\n"); !strings.Contains(ev, "speed ×1/64 is the slowest") {
		t.Errorf("no note at the slowest speed:\n%s", ev)
	}
	l.Speed = MaxKeySpeed
	ctl = &fakeControls{}
	m = screen(t, l, ctl, 100, 30)
	m, _ = press(t, m, "+")
	if len(ctl.Calls()) != 0 || !strings.Contains(strings.Join(m.Events(), "\n"), "is the fastest") {
		t.Errorf("+ at ×64: calls %q, events %q", ctl.Calls(), m.Events())
	}
}

// The footer keeps "? help" and "q quit" at every width, in every state.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, st := range []struct {
		name string
		live result.Live
		ctl  Controls
	}{{"running", midRun(), &fakeControls{}}, {"done", finished(), &fakeControls{}}, {"read-only", midRun(), nil}} {
		for w := MinWidth; w <= 200; w++ {
			m := screen(t, st.live, st.ctl, w, 30)
			ls := lines(m)
			foot := ls[len(ls)-1]
			if !strings.Contains(foot, "? help") || !strings.Contains(foot, "q quit") {
				t.Fatalf("%s at width %d: footer %q", st.name, w, foot)
			}
		}
	}
}

// Numbers keep their places as they change width: the header's and the
// panes' fields do not move when a value grows from one digit to three.
func TestFieldsKeepTheirPlace(t *testing.T) {
	at := func(l result.Live, field string) int {
		m := screen(t, l, &fakeControls{}, 120, 36)
		for _, line := range lines(m) {
			if i := strings.Index(line, field); i >= 0 {
				return len([]rune(line[:i]))
			}
		}
		t.Fatalf("no %q on screen", field)
		return -1
	}
	small, big := midRun(), midRun()
	small.Now, big.Now = 5, 45.5
	big.Latest.InFlight, small.Latest.InFlight = 123, 1
	big.Latest.Retries, small.Latest.Retries = 4567, 3
	for _, f := range []string{"speed", "· retries", "· dead letters"} {
		if a, b := at(small, f), at(big, f); a != b {
			t.Errorf("%q moved from column %d to %d", f, a, b)
		}
	}
}

// After d the fleet line names the new target and how many run it (none
// yet), not the old version's count.
func TestDeployFleetLine(t *testing.T) {
	m := screen(t, midRun(), &fakeControls{}, 120, 36)
	m, _ = press(t, m, "d")
	fleet := strings.Join(paneLines(t, m, "Fleet"), "\n")
	if !strings.Contains(fleet, "target 1.0.2:") || !strings.Contains(fleet, "   0 of 1000 run it") {
		t.Errorf("fleet pane after d:\n%s", fleet)
	}
}

// A partitioned worker is a state of its own in the grid and its counts.
func TestPartitionedState(t *testing.T) {
	l := midRun()
	for i := 500; i < 600; i++ {
		l.Workers[i] = result.StatePartitioned
	}
	m := screen(t, l, &fakeControls{}, 120, 36)
	fleet := strings.Join(paneLines(t, m, "Fleet"), "\n")
	if !strings.Contains(fleet, "×  100 partitioned") || !strings.Contains(fleet, "××××") {
		t.Errorf("fleet pane with 100 partitioned:\n%s", fleet)
	}
	if strings.Contains(strings.Join(paneLines(t, screen(t, midRun(), &fakeControls{}, 120, 36), "Fleet"), "\n"), "partitioned") {
		t.Error("a partitioned count with none partitioned")
	}
}

// Home shows the oldest entries filling the pane, not one entry over
// blank rows; end follows again.
func TestEventsHome(t *testing.T) {
	l := midRun()
	for i := range 60 {
		l.Records = append(l.Records, result.Record{T: result.Seconds(36 + float64(i)/10), Kind: "event", Text: fmt.Sprintf("event number %d", i)})
	}
	m := screen(t, l, &fakeControls{}, 120, 36)
	m, _ = press(t, m, "tab", "tab", "tab", "tab") // events focused
	m, _ = pressKey(m, tea.KeyHome)
	ev := paneLines(t, m, "Events")
	if !strings.Contains(ev[0], "start: 1000 workers") {
		t.Fatalf("first line after home: %q", ev[0])
	}
	for i, l := range ev {
		if strings.TrimSpace(l) == "" {
			t.Fatalf("blank line %d after home:\n%s", i, strings.Join(ev, "\n"))
		}
	}
	m, _ = pressKey(m, tea.KeyEnd)
	ev = paneLines(t, m, "Events")
	if !strings.Contains(ev[len(ev)-1], "event number 59") {
		t.Errorf("last line after end: %q", ev[len(ev)-1])
	}
}

func pressKey(m Model, k tea.KeyType) (Model, tea.Cmd) {
	tm, cmd := m.Update(tea.KeyMsg{Type: k})
	return tm.(Model), cmd
}

// A result taller than the pane starts at its summary and scrolls down
// to its last verdict.
func TestLastVerdictReachable(t *testing.T) {
	l := finished()
	for i := range 30 {
		l.Report.Verdicts = append(l.Report.Verdicts, result.Verdict{Name: fmt.Sprintf("check %02d", i), Status: result.Pass})
	}
	m := screen(t, l, &fakeControls{}, 80, 24)
	ev := paneLines(t, m, "Events")
	if !strings.Contains(ev[0], "run FAILED") {
		t.Fatalf("the result does not start at its summary:\n%s", strings.Join(ev, "\n"))
	}
	m, _ = pressKey(m, tea.KeyEnd)
	ev = paneLines(t, m, "Events")
	if !strings.Contains(ev[len(ev)-1], "check 29") {
		t.Errorf("the last verdict is not reachable:\n%s", strings.Join(ev, "\n"))
	}
}

// / filters the event pane; esc clears the filter.
func TestEventFilter(t *testing.T) {
	m := screen(t, midRun(), &fakeControls{}, 120, 36)
	m, _ = press(t, m, "/", "w", "a", "v", "e")
	m, _ = pressKey(m, tea.KeyEnter)
	ev := paneLines(t, m, "Events")
	if !strings.HasPrefix(ev[0], "/wave") {
		t.Fatalf("no filter line: %q", ev[0])
	}
	var shown []string
	for _, l := range ev[1:] {
		if strings.Contains(l, " event ") {
			shown = append(shown, l)
		}
	}
	if len(shown) != 2 || !strings.Contains(shown[0], "wave 1/3") || !strings.Contains(shown[1], "wave 2/3") {
		t.Errorf("filtered events:\n%s", strings.Join(ev, "\n"))
	}
	// Keys typed into the filter do not steer the run.
	ctl := &fakeControls{}
	m2 := screen(t, midRun(), ctl, 120, 36)
	_, _ = press(t, m2, "/", "k", "d", "p")
	if len(ctl.Calls()) != 0 {
		t.Errorf("typing a filter called %q", ctl.Calls())
	}
	m, _ = pressKey(m, tea.KeyEsc)
	if ev := paneLines(t, m, "Events"); strings.HasPrefix(ev[0], "/") {
		t.Errorf("esc kept the filter: %q", ev[0])
	}
}

// detailSource lists its workers.
type detailSource struct{ fixedSource }

func (s detailSource) WorkerDetails(lo, hi int) []result.WorkerDetail {
	var out []result.WorkerDetail
	for i := lo; i < min(hi, len(s.live.Workers)); i++ {
		out = append(out, result.WorkerDetail{Index: i, ID: scenario.WorkerID(i), Version: "1.0.1",
			State: s.live.Workers[i], Depth: i % 4, Capacity: 8, ConnectAttempts: uint64(1 + i%3)})
	}
	return out
}

// On the fleet pane, the arrows select a cell and the event pane lists
// its workers; esc goes back to the events.
func TestDrillDown(t *testing.T) {
	var tm tea.Model = New(detailSource{fixedSource{midRun()}}, &fakeControls{}, Options{})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	tm, _ = tm.Update(tickMsg{})
	m := tm.(Model)
	m, _ = press(t, m, "tab", "tab", "tab") // fleet
	m, _ = pressKey(m, tea.KeyRight)        // selects the first cell
	m, _ = pressKey(m, tea.KeyRight)        // the second
	per := m.fleet.per
	title := fmt.Sprintf("Workers %d–%d", per, 2*per-1)
	ws := paneLines(t, m, title)
	if !strings.Contains(ws[0], "id") || !strings.Contains(ws[0], "attempts") {
		t.Fatalf("no table head: %q", ws[0])
	}
	if !strings.Contains(ws[1], scenario.WorkerID(per)) || !strings.Contains(ws[1], "1.0.1") {
		t.Errorf("first worker row %q, want %s", ws[1], scenario.WorkerID(per))
	}
	if fleet := strings.Join(paneLines(t, m, "Fleet"), "\n"); strings.Count(fleet, cursorGlyph) != 1 {
		t.Errorf("the selected cell is not marked once:\n%s", fleet)
	}
	m, _ = pressKey(m, tea.KeyEsc)
	if got := strings.Join(lines(m), "\n"); strings.Contains(got, title) || strings.Contains(got, cursorGlyph) {
		t.Error("esc kept the selection")
	}
}

// Every key the help lists, pressed in an order where each has
// something to do, changes the screen, and no screen after it draws past
// the edge at the sizes a person uses.
func TestEveryHelpKey(t *testing.T) {
	ctl := &fakeControls{}
	m := screen(t, midRun(), ctl, 120, 36)
	keyOf := map[string]tea.KeyMsg{
		"space": {Type: tea.KeySpace, Runes: []rune{' '}}, "tab": {Type: tea.KeyTab}, "shift+tab": {Type: tea.KeyShiftTab},
		"enter": {Type: tea.KeyEnter}, "up": {Type: tea.KeyUp}, "down": {Type: tea.KeyDown},
		"home": {Type: tea.KeyHome}, "end": {Type: tea.KeyEnd}, "esc": {Type: tea.KeyEsc},
		"left": {Type: tea.KeyLeft}, "right": {Type: tea.KeyRight},
	}
	seq := []string{"space", "+", "-", "p", "h", "k", "d", "tab", "shift+tab", "up", "down", "home", "end",
		"left", "[", "left", "right", "]", "/", "enter", "esc", "?", "esc", "q"}
	for _, col := range m.keys.FullHelp() {
		for _, b := range col {
			if !b.Enabled() {
				continue // the help does not list it
			}
			k := b.Keys()[0]
			if k == " " {
				k = "space"
			}
			if !slices.Contains(seq, k) {
				t.Errorf("the sequence lacks %s (%s)", b.Help().Key, b.Help().Desc)
			}
		}
	}
	for i, k := range seq {
		msg, ok := keyOf[k]
		if !ok {
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		before := m.View()
		tm, cmd := m.Update(msg)
		m = tm.(Model)
		if k == "/" { // the filter shows, and takes keys until enter
			if !strings.Contains(m.View(), "enter keeps") {
				t.Errorf("/ shows no filter line")
			}
			m, _ = pressKey(m, tea.KeyEnter)
			continue
		}
		if k == "q" {
			if !isQuit(cmd) || m.View() != "" {
				t.Errorf("q: quit %v, last frame %q", isQuit(cmd), m.View())
			}
			continue
		}
		if m.View() == before {
			t.Errorf("key %d, %q, changed nothing on screen", i, k)
		}
		for _, sz := range [][2]int{{50, 12}, {80, 24}, {120, 36}, {200, 60}} {
			tm, _ := m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			checkScreen(t, "after "+k, tm.View(), sz[0], sz[1])
		}
	}
	if want := []string{"pause", "speed ×8", "speed ×4", "partition 10", "heal", "kill", "deploy 1.0.2"}; !slices.Equal(ctl.Calls(), want) {
		t.Errorf("controls %q, want %q", ctl.Calls(), want)
	}
}

// The samples tell what a person waits for that no record says: the
// leader going down and coming back, and the first rejection.
func TestDerivedEvents(t *testing.T) {
	src := newRunningSource()
	var tm tea.Model = New(src, src, Options{})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	tm, _ = tm.Update(tickMsg{})
	src.KillLeader() // the next samples show it down
	tm, _ = tm.Update(tickMsg{})
	tm, _ = tm.Update(tickMsg{})
	src.mu.Lock()
	src.live.Latest.LeaderUp = true
	src.mu.Unlock()
	tm, _ = tm.Update(tickMsg{})
	for range 2 { // a rejection, and more: told once
		src.mu.Lock()
		src.live.Latest.LeaderRejected += 5
		src.mu.Unlock()
		tm, _ = tm.Update(tickMsg{})
	}
	ev := strings.Join(tm.(Model).Events(), "\n")
	for _, want := range []string{"event   leader down", "event   leader up again after 2.0s down", "event   first rejection"} {
		if strings.Count(ev, want) != 1 {
			t.Errorf("events hold %q %d times, want once:\n%s", want, strings.Count(ev, want), ev)
		}
	}
}
