package dash

// MinWidth and MinHeight are the smallest terminal the dashboard draws
// in; below it says "terminal too small".
const (
	MinWidth  = 40
	MinHeight = 12
)

const (
	headerRows = 2
	footerRows = 1
)

type rect struct{ w, h int }

// layout is where the panes go for one terminal size:
//
//	header (2 rows)
//	leader │ relay
//	outbox │
//	fleet  │ events
//	footer (1 row)
//
// The top band (leader, outbox, relay) and the bottom band (fleet,
// events) share the rows between header and footer; the outbox pane is
// dropped when the top band is too short for it.
type layout struct {
	w, h  int
	small bool // below MinWidth×MinHeight
	body  int  // rows between header and footer

	leader, outbox, relay, fleet, log rect
}

func computeLayout(w, h int) layout {
	l := layout{w: w, h: h}
	if w < MinWidth || h < MinHeight {
		l.small = true
		return l
	}
	l.body = h - headerRows - footerRows
	top := (l.body + 1) / 2
	bottom := l.body - top

	left := min(max(w*3/8, 24), w/2, 50)
	l.relay = rect{w - left, top}
	if top >= 9 {
		oh := min(max(top/3, 3), 7)
		l.outbox = rect{left, oh}
		l.leader = rect{left, top - oh}
	} else {
		l.leader = rect{left, top}
	}
	fw := w / 2
	l.fleet = rect{fw, bottom}
	l.log = rect{w - fw, bottom}
	return l
}

// size is pane p's outer size as drawn now: the whole body when zoomed.
func (l layout) size(p pane, m *Model) (w, h int) {
	if m.zoom && p == m.focus {
		return l.w, l.body
	}
	r := [...]rect{paneLeader: l.leader, paneRelay: l.relay, paneOutbox: l.outbox, paneFleet: l.fleet, paneLog: l.log}[p]
	return r.w, r.h
}
