package dash

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"go.uber.org/goleak"
)

// The golden screens are compared without colour: the ASCII profile
// drops every colour and attribute, and glyphs alone must carry meaning.
//
// teatest's NewTestModel starts a goroutine that waits for SIGINT for as
// long as the process lives (it cannot be stopped); it is not ours.
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
	)
}
