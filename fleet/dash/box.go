package dash

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// fit cuts s (which may hold styles) to width w with an ellipsis, and pads
// it with spaces to exactly w, so panes line up and no line ever passes
// the terminal's edge.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if sw := ansi.StringWidth(s); sw > w {
		s = ansi.Truncate(s, w, "…")
	} else if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitLines makes lines exactly h lines of width w: cut or padded.
func fitLines(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := range out {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out[i] = fit(l, w)
	}
	return out
}

// box draws a pane: a border with the title in its top edge around body,
// exactly w×h. The focused pane has a thick border, which shows without
// colour too. Panes smaller than 3×3 are left blank.
func box(title string, focused bool, w, h int, body []string) string {
	if w < 3 || h < 3 {
		return blank(w, h)
	}
	b, st := lipgloss.RoundedBorder(), stBorder
	if focused {
		b, st = lipgloss.ThickBorder(), stFocused
	}
	iw, ih := w-2, h-2
	var sb strings.Builder
	// Top edge: ╭─ Title ───╮
	top := b.Top
	if iw >= 4 && title != "" {
		t := fit(title, min(ansi.StringWidth(title), iw-3))
		rest := iw - 3 - ansi.StringWidth(t)
		sb.WriteString(st.Render(b.TopLeft+top+" ") + stTitle.Render(t) + st.Render(" "+strings.Repeat(top, rest)+b.TopRight))
	} else {
		sb.WriteString(st.Render(b.TopLeft + strings.Repeat(top, iw) + b.TopRight))
	}
	left, right := st.Render(b.Left), st.Render(b.Right)
	for _, l := range fitLines(body, iw, ih) {
		sb.WriteByte('\n')
		sb.WriteString(left + l + right)
	}
	sb.WriteByte('\n')
	sb.WriteString(st.Render(b.BottomLeft + strings.Repeat(b.Bottom, iw) + b.BottomRight))
	return sb.String()
}

// blank is w×h of spaces.
func blank(w, h int) string {
	if h <= 0 {
		return ""
	}
	return strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", max(0, w))+"\n", h), "\n")
}

// flow lays items out left to right, separated by sep, starting a new
// line when the next item would pass width w.
func flow(items []string, sep string, w int) []string {
	var lines []string
	cur, cw := "", 0
	sw := ansi.StringWidth(sep)
	for _, it := range items {
		iw := ansi.StringWidth(it)
		switch {
		case cw == 0:
			cur, cw = it, iw
		case cw+sw+iw <= w:
			cur += sep + it
			cw += sw + iw
		default:
			lines = append(lines, cur)
			cur, cw = it, iw
		}
	}
	if cw > 0 {
		lines = append(lines, cur)
	}
	return lines
}
