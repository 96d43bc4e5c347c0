package dash

import "github.com/charmbracelet/bubbles/key"

// keyMap is every key the dashboard answers; the help overlay and the
// footer are generated from it (bubbles/help hides disabled bindings).
type keyMap struct {
	Pause, Faster, Slower            key.Binding
	Partition, Heal, Kill, Deploy    key.Binding
	Focus, FocusBack, Zoom, Up, Down key.Binding
	Top, Bottom, Help, Close, Quit   key.Binding
	Left, Right, ZoomIn, ZoomOut     key.Binding
	Filter, StopSweep                key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Pause:     key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "pause/resume")),
		Faster:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "speed ×2")),
		Slower:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "speed ÷2")),
		Partition: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "partition 10%")),
		Heal:      key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "heal")),
		Kill:      key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "kill leader")),
		Deploy:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deploy next version")),
		Focus:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus next pane")),
		FocusBack: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "focus previous")),
		Zoom:      key.NewBinding(key.WithKeys("enter", "z"), key.WithHelp("enter", "zoom pane")),
		Up:        key.NewBinding(key.WithKeys("up", "pgup"), key.WithHelp("↑/pgup", "scroll events (fleet: move)")),
		Down:      key.NewBinding(key.WithKeys("down", "pgdown"), key.WithHelp("↓/pgdn", "scroll events (fleet: move)")),
		Top:       key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "oldest event")),
		Bottom:    key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "newest event, follow")),
		Left:      key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "charts: earlier (fleet: move)")),
		Right:     key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "charts: later (fleet: move)")),
		ZoomIn:    key.NewBinding(key.WithKeys("["), key.WithHelp("[", "charts: zoom in")),
		ZoomOut:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "charts: zoom out")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter events")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help/zoom/filter/selection")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		StopSweep: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "stop sweep"), key.WithDisabled()),
	}
}

// setQuit says what q does now. On its own a run has one q: quit (before
// the end, that stops the run unjudged). In a sweep, q before the end
// stops the run and the variants after it; on the end screen of a
// variant with more after it, q goes on to the next and ctrl+c stops
// the sweep.
func (k *keyMap) setQuit(sw Sweep, done bool) {
	switch {
	case sw.next() && done:
		k.Quit.SetKeys("q")
		k.Quit.SetHelp("q", "next variant")
		k.StopSweep.SetEnabled(true)
		return
	case sw.on() && !done:
		k.Quit.SetHelp("q", "stop sweep")
	default:
		k.Quit.SetHelp("q", "quit")
	}
	k.Quit.SetKeys("q", "ctrl+c")
	k.StopSweep.SetEnabled(false)
}

// tail is the keys the footer always shows at its right end.
func (k *keyMap) tail() []key.Binding {
	return []key.Binding{k.Help, k.Quit, k.StopSweep}
}

// runKeys are the bindings that change the run: they need Controls and
// a run that has not finished.
func (k *keyMap) runKeys() []*key.Binding {
	return []*key.Binding{&k.Pause, &k.Faster, &k.Slower, &k.Partition, &k.Heal, &k.Kill, &k.Deploy}
}

func (k *keyMap) setRunEnabled(on bool) {
	for _, b := range k.runKeys() {
		b.SetEnabled(on)
	}
}

// ShortHelp is the footer line but for Help and Quit, which the footer
// always shows at its right end (FooterTail).
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Faster, k.Slower, k.Partition, k.Heal, k.Kill, k.Deploy, k.Focus, k.Filter}
}

// FullHelp is the help overlay, in columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Pause, k.Faster, k.Slower},
		{k.Partition, k.Heal, k.Kill, k.Deploy},
		{k.Focus, k.FocusBack, k.Zoom, k.Up, k.Down, k.Top, k.Bottom},
		{k.Left, k.Right, k.ZoomIn, k.ZoomOut, k.Filter},
		{k.Help, k.Close, k.Quit, k.StopSweep},
	}
}
