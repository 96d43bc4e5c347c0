package dash

import (
	tea "github.com/charmbracelet/bubbletea"
)

// filterInput is the event pane's "/" filter: a line of text typed in
// place (bubbles' textinput would bring a clipboard dependency for a
// feature this line does not need).
type filterInput struct {
	text    []rune
	editing bool
}

func (f *filterInput) Value() string { return string(f.text) }
func (f *filterInput) Focused() bool { return f.editing }
func (f *filterInput) Focus()        { f.editing = true }
func (f *filterInput) Blur()         { f.editing = false }
func (f *filterInput) SetValue(s string) {
	f.text = []rune(s)
}

// update edits the text by key: runes and space add, backspace removes.
func (f *filterInput) update(msg tea.KeyMsg) {
	switch msg.Type {
	case tea.KeyRunes, tea.KeySpace:
		f.text = append(f.text, msg.Runes...)
		if msg.Type == tea.KeySpace && len(msg.Runes) == 0 {
			f.text = append(f.text, ' ')
		}
	case tea.KeyBackspace:
		if len(f.text) > 0 {
			f.text = f.text[:len(f.text)-1]
		}
	case tea.KeyCtrlU:
		f.text = f.text[:0]
	}
}

// view is the filter's line: "/text", with a cursor while editing.
func (f *filterInput) view() string {
	s := "/" + string(f.text)
	if f.editing {
		return s + stFocused.Render("█") + stDim.Render("  enter keeps · esc clears")
	}
	return s + stDim.Render("  (/ edits · esc clears)")
}
