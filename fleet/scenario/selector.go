package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// SelectorSyntax lists a selector's forms, for error messages and help.
const SelectorSyntax = `"all", a percentage ("10%"), an index range ("0-99"), "group:NAME", or a list of worker ids ([w-00001, w-00007])`

// ParseSelector reads a selector's text form: "all", "N%" (0 < N <= 100),
// "A-B" (worker indexes A to B, inclusive) or "group:NAME". A list of ids
// has no text form; it is a YAML list in a scenario file.
func ParseSelector(text string) (Selector, error) {
	t := strings.TrimSpace(text)
	sel := Selector{Text: t}
	switch {
	case t == "all":
		sel.All = true
		return sel, nil
	case strings.HasSuffix(t, "%"):
		p, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
		if err != nil || math.IsNaN(p) || p <= 0 || p > 100 {
			return sel, fmt.Errorf("%q: a percentage must be above 0 and at most 100, as in 10%% or 0.5%%", text)
		}
		sel.Percent = p
		return sel, nil
	case strings.HasPrefix(t, "group:"):
		sel.Group = strings.TrimSpace(strings.TrimPrefix(t, "group:"))
		if sel.Group == "" {
			return sel, fmt.Errorf("%q: name the group, as in group:config-servers", text)
		}
		return sel, nil
	}
	if a, b, ok := strings.Cut(t, "-"); ok && isDigits(a) && isDigits(b) {
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || from > to {
			return sel, fmt.Errorf("%q: a range is FIRST-LAST with FIRST <= LAST, as in 0-99", text)
		}
		sel.Range, sel.From, sel.To = true, from, to
		return sel, nil
	}
	if _, ok := workerIndex(t); ok {
		return sel, fmt.Errorf("%q: write worker ids as a list, as in [%s]", text, t)
	}
	return sel, fmt.Errorf("%q is not a selector: want %s", text, SelectorSyntax)
}

func isDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String returns the selector as written ("all" when it was left out).
func (sel Selector) String() string {
	if sel.Text != "" {
		return sel.Text
	}
	switch {
	case sel.Percent > 0:
		return strconv.FormatFloat(sel.Percent, 'f', -1, 64) + "%"
	case sel.Range:
		return fmt.Sprintf("%d-%d", sel.From, sel.To)
	case sel.Group != "":
		return "group:" + sel.Group
	case len(sel.IDs) > 0:
		return "[" + strings.Join(sel.IDs, ", ") + "]"
	}
	return "all"
}

// MarshalText writes the selector as written, so a scenario encodes to
// JSON readably.
func (sel Selector) MarshalText() ([]byte, error) { return []byte(sel.String()), nil }

// workerIndex returns i for the id WorkerID(i).
func workerIndex(id string) (int, bool) {
	digits, ok := strings.CutPrefix(id, "w-")
	if !ok || !isDigits(digits) {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || WorkerID(i) != id {
		return 0, false
	}
	return i, true
}

// selector decodes a selector: a text form or a list of worker ids.
func (d *decoder) selector(n ast.Node, sel *Selector, path, show string) {
	if seq, ok := n.(*ast.SequenceNode); ok {
		if len(seq.Values) == 0 {
			d.fail(n, show, "an empty list selects no worker: list worker ids, or write %s", SelectorSyntax)
			return
		}
		listed := make(map[string]bool, len(seq.Values)) // a list of 40,000 ids is checked in one pass
		for i, item := range seq.Values {
			if item = d.resolve(item, show); item == nil {
				continue
			}
			id, ok := scalarText(item)
			if !ok {
				d.fail(item, index(show, i), "%s is not a worker id", describe(item))
				continue
			}
			if err := wire.ValidWorkerID(id); err != nil {
				d.fail(item, index(show, i), "%v", err)
				continue
			}
			if listed[id] {
				d.fail(item, index(show, i), "%s is listed twice", id)
				continue
			}
			listed[id] = true
			sel.IDs = append(sel.IDs, id)
		}
		sel.Text = "[" + strings.Join(sel.IDs, ", ") + "]"
		return
	}
	text, ok := scalarText(n)
	if !ok {
		d.fail(n, show, "%s is not a selector: want %s", describe(n), SelectorSyntax)
		return
	}
	v, err := ParseSelector(text)
	if err != nil {
		d.fail(n, show, "%v", err)
		return
	}
	*sel = v
}

// fleetShape is what a selector is checked against: the fleet's size and
// its groups' sizes (the default group included).
type fleetShape struct {
	count  int
	groups map[string]int
	names  []string // in layout order
}

// check reports a selector that picks no worker or a worker the fleet does
// not have.
func (sel *Selector) check(f fleetShape) string {
	switch {
	case sel.Range:
		if sel.To >= f.count {
			return fmt.Sprintf("range %s is outside the fleet: fleet.count is %d, so indexes run 0-%d", sel.Text, f.count, f.count-1)
		}
	case sel.Group != "":
		n, ok := f.groups[sel.Group]
		if !ok {
			return fmt.Sprintf("no group %q%s; the groups are %s", sel.Group, wording.DidYouMean(sel.Group, f.names), wording.Some(f.names, maxListed))
		}
		if n == 0 {
			return fmt.Sprintf("group %q has no workers (the named groups take all of fleet.count)", sel.Group)
		}
	case len(sel.IDs) > 0:
		for _, id := range sel.IDs {
			i, ok := workerIndex(id)
			if !ok || i >= f.count {
				return fmt.Sprintf("no worker %q in this fleet: its ids run %s to %s", id, WorkerID(0), WorkerID(f.count-1))
			}
		}
	}
	return ""
}
