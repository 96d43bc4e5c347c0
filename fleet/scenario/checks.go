package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/fleetsim/fleetsim/fleet/expect"
)

// expect decodes an expectation: the check as a string, or a mapping with
// name and check.
func (d *decoder) expect(n ast.Node, e *Expect, path, show string) {
	if n == nil {
		return
	}
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		d.mapping(n, reflect.ValueOf(e).Elem(), path, show)
		if strings.TrimSpace(e.Check) == "" {
			d.fail(n, show, "check is required: the expression that must hold, as in check: lost == 0")
		}
		return
	}
	text, ok := scalarText(n)
	if !ok || strings.TrimSpace(text) == "" {
		d.fail(n, show, "%s is not an expectation: want an expression such as lost == 0, or a mapping with name and check", describe(n))
		return
	}
	e.Check = text
}

// compileChecks compiles every expectation of s and marks the timing ones,
// reporting each that does not compile at its place in the file (down to
// the column of the misspelt name when the check is on one line), and
// each that cannot depend on the run (constantMessage). It sets
// s.Warnings to the checks that cannot depend on this scenario's run
// (vacuousMessage). A name given twice is refused before anything
// compiles, and so are checks past MaxChecks or MaxCheckBytes; a text
// the load has compiled already (a sweep's variant repeats the file's
// checks) is not compiled again.
func compileChecks(s *Scenario, src *source) Errors {
	s.checks = make([]*expect.Check, len(s.Expect))
	s.Warnings = nil
	errs, todo := distinctNames(s.Expect, src, "expect", "the expectation %q is already at %s: give each a different name (reports and baselines know them by name)")
	cc := src.compiled()
	if over := admit(cc, s.Expect, todo, src, "expect", false); over != nil {
		return append(errs, over...)
	}
	keys := map[string][]string{
		"events":  sortedNames(eventNames(s)),
		"windows": windowNames(s),
	}
	names := cc.internNames(keys)
	sent := s.feeds()
	for _, i := range todo {
		if len(errs) >= maxProblems {
			break
		}
		e := &s.Expect[i]
		path, at := e.place(src, "expect", i)
		k := cc.expectation(e.Check)
		err := k.err
		if err == nil {
			err = cc.unknownKeys(e.Check, keys, names)
		}
		if err != nil {
			ce := err.(*expect.Error)
			p := src.pos[at]
			errs = append(errs, src.atPos(within(src, p, e.Check, ce), path, fmt.Sprintf("check %q: %s", expect.Shorten(e.Check), ce.Msg)))
			continue
		}
		if k.constant != "" {
			errs = append(errs, src.atPos(src.pos[at], path, k.constant))
			continue
		}
		s.checks[i] = k.check
		e.Timing = k.check.Timing
		msg := k.inputsOnly
		if msg == "" {
			msg = vacuousMessage(sent, e.Check, k.vacuity)
		}
		if msg != "" {
			w := src.atPos(src.pos[at], path, msg)
			w.Warning = true
			s.Warnings = append(s.Warnings, w)
		}
	}
	return errs
}

// distinctNames names each item of list (expect or compare; place) and
// refuses each name given before, with msg (the name, and where it was
// first given). It returns the indexes of the items to compile: those
// whose name is new.
func distinctNames(items []Expect, src *source, list, msg string) (errs Errors, todo []int) {
	first := map[string]string{}
	for i := range items {
		e := &items[i]
		_, at := e.place(src, list, i)
		if where, ok := first[e.Name]; ok {
			if len(errs) < maxProblems {
				errs = append(errs, src.at(at, msg, expect.Shorten(e.Name), where))
			}
			continue
		}
		p := src.pos[at]
		first[e.Name] = fmt.Sprintf("%d:%d (%s)", p.Line, p.Col, index(list, i))
		todo = append(todo, i)
	}
	return errs, todo
}

// admit counts the checks todo of items against the load's budget
// (compiled.admit), and refuses the first past it.
func admit(cc *compiled, items []Expect, todo []int, src *source, list string, comparison bool) Errors {
	texts := make([]string, len(todo))
	for j, i := range todo {
		texts[j] = items[i].Check
	}
	j, msg := cc.admit(texts, comparison)
	if j < 0 {
		return nil
	}
	_, at := items[todo[j]].place(src, list, todo[j])
	return Errors{src.at(at, "%s", msg)}
}

func windowNames(s *Scenario) []string {
	out := make([]string, 0, len(s.Windows))
	for _, w := range s.Windows {
		out = append(out, w.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// place names item i of the list (expect or compare) for messages: its
// path, and where its check is written (at, the path to point at). It
// gives an unnamed item its check's text as its name.
func (e *Expect) place(src *source, list string, i int) (path, at string) {
	path = index(list, i)
	at = path
	if src.has(join(path, "check")) {
		at = join(path, "check")
	}
	if e.Name == "" {
		e.Name = strings.TrimSpace(e.Check)
	}
	return path, at
}

// within moves p from the start of a one-line scalar to the column of ce
// inside it, if the line shows the check there as written (plain, or
// quoted without escapes before the column).
func within(src *source, p position, text string, ce *expect.Error) position {
	text1, ok := src.lines.line(p.Line)
	if ce.Line != 0 || !ok || strings.Contains(text, "\n") {
		return p
	}
	line := []rune(text1)
	start := p.Col - 1
	if start < len(line) && (line[start] == '"' || line[start] == '\'') {
		start++
	}
	prefix := []rune(text)
	if ce.Col > len(prefix) {
		return p
	}
	prefix = prefix[:ce.Col]
	if start+len(prefix) > len(line) || string(line[start:start+len(prefix)]) != string(prefix) {
		return p
	}
	return position{p.Line, start + ce.Col + 1}
}

// Check returns expectation i (s.Expect[i]) compiled: when the file
// loaded, or now for a Scenario built in code; the error says why it
// does not compile.
func (s *Scenario) Check(i int) (*expect.Check, error) {
	if i < len(s.checks) && s.checks[i] != nil {
		return s.checks[i], nil
	}
	return expect.Compile(s.Expect[i].Check)
}

// Comparison returns comparison i (s.Compare[i]) compiled: when the file
// loaded, or now for a Scenario built in code; the error says why it
// does not compile.
func (s *Scenario) Comparison(i int) (*expect.Check, error) {
	if i < len(s.comparisons) && s.comparisons[i] != nil {
		return s.comparisons[i], nil
	}
	return expect.CompileComparison(s.Compare[i].Check)
}

// labels lists the sweep's variant labels in run order (the last
// parameter varying fastest), as Variants names them.
func (s *Scenario) labels() []string {
	out := []string{""}
	for _, p := range s.Sweep {
		var next []string
		for _, prefix := range out {
			for i := range p.Values {
				next = append(next, join2(prefix, p.label(i)))
			}
		}
		out = next
	}
	if len(s.Sweep) == 0 {
		return nil
	}
	return out
}

func join2(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// compileComparisons compiles the compare: checks of s against its
// sweep's variants, reporting each problem at its place in the file: a
// comparison without a sweep, a check that does not compile, a variant
// label the sweep does not make.
func compileComparisons(s *Scenario, src *source) Errors {
	if len(s.Compare) == 0 {
		return nil
	}
	if len(s.Sweep) == 0 {
		return Errors{src.at("compare", "compare: checks compare a sweep's variants, and this scenario has no sweep: move them to expect:, or add a sweep")}
	}
	labels := s.labels()
	example := "label" // a sweep that makes no variant is reported where it is written
	if len(labels) > 0 {
		example = labels[0]
	}
	s.comparisons = make([]*expect.Check, len(s.Compare))
	errs, todo := distinctNames(s.Compare, src, "compare", "the comparison %q is already at %s: give each a different name")
	cc := src.compiled()
	if over := admit(cc, s.Compare, todo, src, "compare", true); over != nil {
		return append(errs, over...)
	}
	for _, i := range todo {
		if len(errs) >= maxProblems {
			break
		}
		e := &s.Compare[i]
		path, at := e.place(src, "compare", i)
		var c *expect.Check
		var err error
		if !strings.Contains(e.Check, "variant") {
			err = &expect.Error{Msg: fmt.Sprintf("a comparison reads the variants' results, as in variant[%q].relay.backpressure; this one reads none (an expectation of each variant goes under expect:)", example)}
		} else if k := cc.comparison(e.Check); k.err != nil {
			err = k.err
		} else {
			c = k.check
			err = expect.UnknownKeys(e.Check, map[string][]string{"variant": labels})
		}
		if err != nil {
			ce := err.(*expect.Error)
			errs = append(errs, src.atPos(within(src, src.pos[at], e.Check, ce), path, fmt.Sprintf("check %q: %s", expect.Shorten(e.Check), ce.Msg)))
			continue
		}
		if msg := expect.ConstantComparisonMessage(e.Check, c); msg != "" {
			errs = append(errs, src.at(at, "%s", msg))
			continue
		}
		s.comparisons[i] = c
		e.Timing = c.Timing
	}
	return errs
}
