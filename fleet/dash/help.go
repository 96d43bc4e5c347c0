package dash

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// The help overlay lists every key the dashboard answers now, in as many
// columns as the terminal's width holds, and below them what the keys
// and the panes mean. A terminal too short for all of it scrolls it (↑ ↓
// pgup pgdn home end): the keys come first, so at 80×24 every key shows
// without scrolling.

const (
	helpGap     = 3  // columns between the key columns
	helpMinDesc = 14 // the narrowest a wrapped description gets
	helpProse   = 76 // the widest the notes are wrapped to
)

// helpEntry is one key and what it does.
type helpEntry struct{ key, desc string }

// helpEntries is every enabled binding of groups, in order.
func helpEntries(groups [][]key.Binding) []helpEntry {
	var out []helpEntry
	for _, g := range groups {
		for _, b := range g {
			if b.Enabled() {
				out = append(out, helpEntry{b.Help().Key, b.Help().Desc})
			}
		}
	}
	return out
}

// keyColumns lays es out in at most w cells: in three columns when no
// description wraps there, else in two (split where they take the
// fewest rows, descriptions wrapped to at least helpMinDesc), else in
// one. Each column's keys are as wide as its widest.
func keyColumns(es []helpEntry, w int) []string {
	if len(es) == 0 {
		return nil
	}
	even := func(n int) [][]helpEntry {
		rows := (len(es) + n - 1) / n
		var cols [][]helpEntry
		for i := 0; i < len(es); i += rows {
			cols = append(cols, es[i:min(i+rows, len(es))])
		}
		return cols
	}
	colW := func(n int) int { return (w - helpGap*(n-1)) / n }
	var cols [][]helpEntry
	if c := even(3); len(c) == 3 && columnRows(c[0], colW(3), false) > 0 &&
		columnRows(c[1], colW(3), false) > 0 && columnRows(c[2], colW(3), false) > 0 {
		cols = c
	} else if len(es) > 1 {
		best := 0
		for at := 1; at < len(es); at++ {
			a, b := columnRows(es[:at], colW(2), true), columnRows(es[at:], colW(2), true)
			if a == 0 || b == 0 {
				continue
			}
			if h := max(a, b); best == 0 || h < best || (h == best && abs(2*at-len(es)) < abs(2*len(cols[0])-len(es))) {
				best, cols = h, [][]helpEntry{es[:at], es[at:]}
			}
		}
	}
	if cols == nil {
		cols = [][]helpEntry{es}
	}
	cw := colW(len(cols))
	var blocks [][]string
	height := 0
	for _, c := range cols {
		ls := columnLines(c, cw)
		blocks = append(blocks, ls)
		height = max(height, len(ls))
	}
	out := make([]string, height)
	for r := range out {
		var parts []string
		for _, b := range blocks {
			if r < len(b) {
				parts = append(parts, b[r])
			} else {
				parts = append(parts, strings.Repeat(" ", ansi.StringWidth(b[0])))
			}
		}
		out[r] = strings.TrimRight(strings.Join(parts, strings.Repeat(" ", helpGap)), " ")
	}
	return out
}

// columnWidths is the widest key and description of col, and the
// width its descriptions get in a column cw cells wide.
func columnWidths(col []helpEntry, cw int) (kw, dw, room int) {
	for _, e := range col {
		kw, dw = max(kw, ansi.StringWidth(e.key)), max(dw, ansi.StringWidth(e.desc))
	}
	return kw, dw, cw - kw - 1
}

// columnRows is how many rows col takes in a column cw cells wide: 0
// when it does not fit (a description would wrap, unless wrap, and then
// to fewer than helpMinDesc cells).
func columnRows(col []helpEntry, cw int, wrap bool) int {
	_, dw, room := columnWidths(col, cw)
	switch {
	case room >= dw:
		return len(col)
	case !wrap || room < helpMinDesc:
		return 0
	}
	n := 0
	for _, e := range col {
		n += strings.Count(ansi.Wrap(e.desc, room, " "), "\n") + 1
	}
	return n
}

// columnLines draws col in a column cw cells wide, the descriptions
// wrapped to what is left of it after the keys.
func columnLines(col []helpEntry, cw int) []string {
	kw, dw, room := columnWidths(col, cw)
	dw = min(dw, max(1, room))
	var ls []string
	for _, e := range col {
		for i, d := range strings.Split(ansi.Wrap(e.desc, dw, " "), "\n") {
			k := ""
			if i == 0 {
				k = e.key
			}
			ls = append(ls, stTitle.Render(fmt.Sprintf("%-*s", kw, k))+" "+stDim.Render(fmt.Sprintf("%-*s", dw, d)))
		}
	}
	return ls
}

func abs(n int) int { return max(n, -n) }

// helpLines is the overlay's content for an interior w cells wide: the
// keys, then the notes.
func (m *Model) helpLines(w int) []string {
	lines := keyColumns(helpEntries(m.keys.FullHelp()), w)
	pw := min(w, helpProse)
	wrap := func(st lipgloss.Style, text string) {
		for _, l := range strings.Split(ansi.Wrap(text, pw, " "), "\n") {
			lines = append(lines, st.Render(l))
		}
	}
	para := func(st lipgloss.Style, text string) {
		lines = append(lines, "")
		wrap(st, text)
	}
	switch {
	case m.ctl == nil:
		para(stWarn, "space + - p h k d are disabled: this is a read-only view (no in-process runner to steer).")
	case m.live.Phase == result.PhaseDone:
		para(stDim, "The run has finished: space + - p h k d do nothing.")
	default:
		para(stDim, fmt.Sprintf("Keys that change the run are logged in the event pane and recorded in the run's report. + and - step the speed from %s to %s.",
			fmtSpeed(MinKeySpeed), fmtSpeed(MaxKeySpeed)))
	}
	if sw := m.opts.Sweep; sw.on() {
		para(stDim, fmt.Sprintf("This is variant %d of %d of a sweep. q before a variant ends stops it (not judged) and the variants after it; "+
			"on a variant's end screen q goes on to the next variant, and ctrl+c stops the sweep.", sw.Variant, sw.Variants))
	}
	para(stDim, "The charts show the whole run in simulated seconds; [ ] zoom and ← → pan over it (on the fleet pane the arrows select a cell and list its workers).")
	var legend []string
	for _, s := range stateOrder {
		lk := stateLooks[s]
		legend = append(legend, lk.style.Render(lk.glyph)+" "+s.String())
	}
	lines = append(lines, "")
	lines = append(lines, flow(append([]string{"fleet:"}, legend...), "  ", pw)...)
	wrap(stDim, "A cell standing for several workers shows their majority state (a tie shows the worse one).")
	return lines
}

// helpInner is the overlay's interior width in a body w cells wide.
func helpInner(w int) int { return max(1, w-4) }

// helpView is the help overlay, centred in the body, w×h; scrolled to
// m.helpTop when it is taller than the body.
func (m *Model) helpView(w, h int) string {
	lines := m.helpLines(helpInner(w))
	bw := 2
	for _, l := range lines {
		bw = max(bw, ansi.StringWidth(l)+4)
	}
	bw = min(bw, w)
	ih := max(1, h-2)
	title := "Help (? or esc to close)"
	if len(lines) > ih {
		top := min(m.helpTop, len(lines)-ih)
		below := len(lines) - top - ih
		title = "Help (? or esc to close · ↑ ↓ scroll)"
		lines = lines[top : top+ih]
		if below > 0 {
			lines[ih-1] = stDim.Render(fmt.Sprintf("↓ %d more %s", below, plural(below, "line", "lines")))
		}
	}
	bh := min(len(lines)+2, h)
	padded := make([]string, len(lines))
	for i, l := range lines {
		padded[i] = " " + l
	}
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box(title, true, bw, bh, padded))
}

// scrollHelp moves the help overlay by n lines (down when positive),
// within its content.
func (m *Model) scrollHelp(n int) {
	total := len(m.helpLines(helpInner(m.width)))
	m.helpTop = min(max(0, m.helpTop+n), max(0, total-max(1, m.lay.body-2)))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
