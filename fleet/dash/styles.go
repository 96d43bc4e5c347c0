package dash

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Colours are ANSI 256 indexes: they degrade to the 16 basic colours and
// vanish under the ASCII profile, where glyphs alone must tell states apart.
const (
	colDim     = lipgloss.Color("244")
	colBorder  = lipgloss.Color("240")
	colFocus   = lipgloss.Color("213")
	colAccent  = lipgloss.Color("63")
	colGood    = lipgloss.Color("42")
	colWarn    = lipgloss.Color("214")
	colBad     = lipgloss.Color("196")
	colUpdated = lipgloss.Color("39")
	colCut     = lipgloss.Color("201")
)

var (
	stTitle   = lipgloss.NewStyle().Bold(true)
	stDim     = lipgloss.NewStyle().Foreground(colDim)
	stWarn    = lipgloss.NewStyle().Foreground(colWarn).Bold(true)
	stBad     = lipgloss.NewStyle().Foreground(colBad).Bold(true)
	stGood    = lipgloss.NewStyle().Foreground(colGood)
	stPaused  = lipgloss.NewStyle().Reverse(true).Bold(true)
	stLine    = lipgloss.NewStyle().Foreground(colAccent)
	stBorder  = lipgloss.NewStyle().Foreground(colBorder)
	stFocused = lipgloss.NewStyle().Foreground(colFocus)
)

// lineColours tell the partitions' lines apart in the relay chart.
var lineColours = []lipgloss.Color{"63", "42", "214", "39", "205", "220"}

// stateLook is how a worker state is drawn in the fleet grid: a glyph
// that reads without colour, and a colour.
type stateLook struct {
	glyph string
	style lipgloss.Style
}

var stateLooks = [numStates]stateLook{
	result.StateOffline: {"·", lipgloss.NewStyle().Foreground(colDim)},
	result.StateOnline:  {"○", lipgloss.NewStyle().Foreground(colGood)},
	result.StateBusy:    {"◐", lipgloss.NewStyle().Foreground(colWarn)},
	result.StateFull:    {"●", lipgloss.NewStyle().Foreground(colBad)},
	result.StateUpdated: {"■", lipgloss.NewStyle().Foreground(colUpdated)},
	// Cut off by the run: a cross, so it reads apart from offline's dot
	// without colour.
	result.StatePartitioned: {"×", lipgloss.NewStyle().Foreground(colCut)},
}

// numStates is the number of WorkerState values.
const numStates = int(result.StatePartitioned) + 1
