package scenario

import (
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
)

// eventNames maps each named timeline event to its index in the timeline.
func eventNames(s *Scenario) map[string]int {
	out := map[string]int{}
	for i, ev := range s.Timeline {
		if ev.Name != "" {
			out[ev.Name] = i
		}
	}
	return out
}

// sortedNames lists a name set in order, for messages.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// windows checks the timeline's event names and the windows: names unique
// and valid, every edge a time within the timeline or a named event, and
// each window's start before its end.
func (v *validator) windows(s *Scenario) {
	seen := map[string]string{}
	for i := range s.Timeline {
		ev := &s.Timeline[i]
		if ev.Name == "" {
			continue
		}
		path := join(ev.path, "name")
		v.name(path, ev.Name, "the event", false)
		if ev.Name[0] < 'a' || ev.Name[0] > 'z' {
			v.errorf(path, "%q: an event's name starts with a letter (a window's from and to read a leading digit as a time)", ev.Name)
		}
		if first, ok := seen[ev.Name]; ok {
			v.errorf(path, "the name %q is already %s's: give each event a different name", ev.Name, first)
		}
		seen[ev.Name] = ev.path
	}
	named := eventNames(s)
	windows := map[string]bool{}
	for i := range s.Windows {
		if v.full() {
			break
		}
		w := &s.Windows[i]
		path := index("windows", i)
		v.name(join(path, "name"), w.Name, "a window", true)
		if windows[w.Name] {
			v.errorf(join(path, "name"), "the window %q is already defined above: give each window a different name", w.Name)
		}
		windows[w.Name] = true
		if w.From.Text == "" {
			v.errorf(join(path, "from"), "from is required: where the window starts, a time (45s) or a named event (heal)")
		}
		from, okFrom := v.edge(s, named, join(path, "from"), w.From, 0)
		to, okTo := v.edge(s, named, join(path, "to"), w.To, s.Duration.D())
		if okFrom && okTo && w.From.Text != "" && from >= to {
			v.errorf(join(path, "to"), "the window ends at %v, not after it starts (%v): want to after from", to, from)
		}
	}
}

// edge resolves a window edge to its simulated time (def when left out),
// reporting an unknown event or a time past the timeline's end.
func (v *validator) edge(s *Scenario, named map[string]int, path string, e Edge, def time.Duration) (time.Duration, bool) {
	switch {
	case e.Text == "":
		return def, true
	case e.Event != "":
		i, ok := named[e.Event]
		if !ok {
			if !v.full() { // the suggestion searches every name
				v.errorf(path, "no timeline event is named %q%s; %s", e.Event, wording.DidYouMean(e.Event, sortedNames(named)), namedList(named))
			}
			return 0, false
		}
		return s.Timeline[i].At.D(), true
	case s.Duration > 0 && e.At > s.Duration:
		v.errorf(path, "%v is after the end of the timeline (duration %v)", e.At, s.Duration)
		return 0, false
	}
	return e.At.D(), true
}

func namedList(named map[string]int) string {
	if len(named) == 0 {
		return "no event has a name: give one a name (name: heal) to start or end a window at it"
	}
	return "the named events are " + wording.Some(sortedNames(named), maxListed)
}

// Span is a window's edges in simulated time, for a validated scenario.
func (w *Window) Span(s *Scenario) (from, to time.Duration) {
	at := func(e Edge, def time.Duration) time.Duration {
		switch {
		case e.Text == "":
			return def
		case e.Event != "":
			for _, ev := range s.Timeline {
				if ev.Name == e.Event {
					return ev.At.D()
				}
			}
		}
		return e.At.D()
	}
	return at(w.From, 0), at(w.To, s.Duration.D())
}
