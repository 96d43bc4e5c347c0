package dash

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// pane is a focusable part of the screen.
type pane int

const (
	paneLeader pane = iota
	paneRelay
	paneOutbox
	paneFleet
	paneLog
	numPanes
)

func (p pane) String() string {
	return [...]string{"leader", "relay", "outbox", "fleet", "events"}[p]
}

// tickMsg asks the model to pull a snapshot.
type tickMsg struct{}

// Model is the dashboard's bubbletea model. It holds the latest snapshot
// and what the panes derive from it; Update pulls a new snapshot on each
// tick and re-arms the tick, so exactly one tick is in flight. Use New.
type Model struct {
	src  Source
	ctl  Controls
	opts Options
	keys keyMap
	help help.Model
	bar  progress.Model

	width, height int
	lay           layout

	live  result.Live
	have  bool // a snapshot has been taken
	rates rates

	focus    pane
	zoom     bool // the focused pane fills the body
	showHelp bool
	helpTop  int // the help overlay's first line shown, when it scrolls
	quitting bool
	// stopSweep: the user quit with the key that stops the rest of a
	// sweep, not only this variant.
	stopSweep bool

	events eventLog
	fleet  fleetGrid
	logSeq uint64 // next LogBuffer sequence number

	hist   history // the whole run, downsampled, for the charts
	chart  view    // the window of it the charts show
	seen   watch   // what the events derived from the samples have said
	filter filterInput

	// cursor is the fleet grid's selected cell while selecting; details
	// are its workers, read from the source (a WorkerSource).
	selecting bool
	cursor    int
	details   []result.WorkerDetail
}

// staleSource is a Source whose workers' states can be out of date (a
// Remote that lost its broker).
type staleSource interface {
	// fleetAsOf reports whether the workers' states are current and,
	// when not, the time they last were.
	fleetAsOf() (current bool, at result.Seconds)
}

// WorkerSource is a Source that can list some of its workers in detail,
// for the fleet grid's drill-down ([runner.Runner] and [Remote] are).
type WorkerSource interface {
	// WorkerDetails returns workers lo to hi-1, clamped to the fleet.
	WorkerDetails(lo, hi int) []result.WorkerDetail
}

// New returns a dashboard model for src. ctl may be nil for a read-only
// source: the keys that change the run are then disabled and the help
// says why.
func New(src Source, ctl Controls, o Options) Model {
	m := Model{
		src:  src,
		ctl:  ctl,
		opts: o.withDefaults(),
		keys: newKeyMap(),
		help: help.New(),
		// The bar takes its colour profile from lipgloss, so a forced
		// profile (tests, NO_COLOR) applies to it too.
		bar: progress.New(progress.WithSolidFill(string(colAccent)),
			progress.WithColorProfile(lipgloss.ColorProfile())),
	}
	m.keys.setRunEnabled(ctl != nil)
	m.keys.setQuit(m.opts.Sweep, false)
	return m
}

// Init pulls the first snapshot at once; Update re-arms the tick.
func (m Model) Init() tea.Cmd {
	return func() tea.Msg { return tickMsg{} }
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update handles a resize, a tick (pull a snapshot, re-arm) or a key.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.refit()
		// A terminal that grew keeps what was drawn past the old edges
		// unless the whole screen is cleared.
		return m, tea.ClearScreen
	case tickMsg:
		m.pull()
		return m, m.tick()
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

// pull takes a snapshot and derives what the panes show from it.
func (m *Model) pull() {
	// The logs first: a run records a warning before it logs it, so the
	// snapshot after holds the record of every warning logged here, and
	// the pane shows it once.
	var lines []string
	var skipped uint64
	if m.opts.Logs != nil {
		lines, m.logSeq, skipped = m.opts.Logs.Since(m.logSeq)
	}
	l := m.src.Snapshot()
	m.live, m.have = l, true
	m.fleet.stale = false
	if ss, ok := m.src.(staleSource); ok {
		current, at := ss.fleetAsOf()
		m.fleet.stale, m.fleet.asOf = !current, at
	}
	m.rates = ratesOf(l)
	m.events.addRecords(l.Records)
	m.addSamples(l)
	if m.opts.Logs != nil {
		m.events.addLogs(l.Now, lines, skipped)
	}
	if l.Report != nil && !m.events.reported {
		m.events.addReport(l.Report)
		m.showReport()
	}
	m.keys.setRunEnabled(m.ctl != nil && l.Phase != result.PhaseDone)
	m.keys.setQuit(m.opts.Sweep, l.Phase == result.PhaseDone)
	m.refitFleet()
	m.readDetails()
}

// addSamples folds the samples newer than the history's into it, and
// logs what a person waits for that the samples show.
func (m *Model) addSamples(l result.Live) {
	m.seen.noLeader = l.Phase == PhaseRemote
	add := func(s result.Sample) {
		if m.hist.have && s.T <= m.hist.prev.T {
			return
		}
		m.hist.add(s)
		for _, text := range m.seen.observe(s) {
			m.events.insert(entry{t: s.T, kind: "event", text: text})
		}
	}
	for _, s := range l.History {
		add(s)
	}
	if hasSample(l) {
		add(l.Latest)
	}
}

// readDetails reads the selected cell's workers from the source.
func (m *Model) readDetails() {
	ws, ok := m.src.(WorkerSource)
	if !m.selecting || !ok || m.fleet.per == 0 {
		m.details = nil
		return
	}
	lo := m.cursor * m.fleet.per
	m.details = ws.WorkerDetails(lo, lo+m.fleet.per)
}

// showReport scrolls the event pane so the summary starts on its first
// line: the verdicts below it are then a scroll down (end) away, however
// many they are.
func (m *Model) showReport() {
	w, h := m.lay.size(paneLog, m)
	es, at := m.events.matching(m.filter.Value())
	m.events.scroll = max(0, linesFrom(es, at, max(1, w-2))-max(1, h-2))
}

// refit lays the screen out again after a resize, zoom or help toggle.
func (m *Model) refit() {
	m.lay = computeLayout(m.width, m.height)
	m.help.Width = m.width
	m.refitFleet()
}

// refitFleet aggregates the workers into the fleet pane's cells.
func (m *Model) refitFleet() {
	w, h := m.lay.size(paneFleet, m)
	m.fleet.aggregate(m.live.Workers, m.live, max(0, w-2), max(0, h-2))
}

// Last is the latest snapshot, with the dashboard's own pending changes
// (a pause, a speed) applied until the next snapshot shows them.
func (m Model) Last() result.Live { return m.live }

// Events is the event log as shown, oldest first, one line per entry.
func (m Model) Events() []string { return m.events.lines() }

// Quitting reports whether the user asked to quit.
func (m Model) Quitting() bool { return m.quitting }

// StoppedSweep reports whether the user quit with the key that stops the
// rest of the sweep (Options.Sweep), not only this variant.
func (m Model) StoppedSweep() bool { return m.stopSweep }

// Focused names the focused pane ("leader", "relay", "outbox", "fleet",
// "events").
func (m Model) Focused() string { return m.focus.String() }

var _ tea.Model = Model{}
