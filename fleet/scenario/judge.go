package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/result"
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

// Judge evaluates each expectation of s on r. A timing check (one that
// reads a Seconds value) on a run that could not keep up with its speed is
// NotJudged, with RunInfo.Behind as its detail, and so is a check that divides by zero ("not judged:
// division by zero (the divisor lost = 0)"): in floating point x / 0 is
// +Inf and would pass "fleet.count / lost > 1". Any other evaluation
// error is a Fail with the error as its detail; a Fail's detail shows the
// values the check read. Expectations are compiled when the scenario
// loads; a Scenario built in code is compiled here. A run whose
// simulated time had to be forced on gets one more verdict, first and
// failed (SettledName).
func Judge(s *Scenario, r result.Result) []result.Verdict {
	out := make([]result.Verdict, 0, len(s.Expect)+1)
	if n := r.Run.ForcedAdvances; n > 0 {
		out = append(out, result.Verdict{
			Name: SettledName, Check: "run.forced_advances == 0", Status: result.Fail,
			Detail: fmt.Sprintf("run.forced_advances = %d: simulated time was moved on before the process had settled (the run's warnings say what held it), so its timings may be wrong", n),
		})
	}
	for i, e := range s.Expect {
		v := result.Verdict{Name: e.Name, Check: e.Check}
		if v.Name == "" {
			v.Name = strings.TrimSpace(e.Check)
		}
		var c *expect.Check
		if i < len(s.checks) && s.checks[i] != nil {
			c = s.checks[i]
		} else if cc, err := expect.Compile(e.Check); err != nil {
			v.Status, v.Detail = result.Fail, "does not compile: "+err.Error()
			out = append(out, v)
			continue
		} else {
			c = cc
		}
		v.Status, v.Detail = c.Judge(r, c.Timing || e.Timing)
		out = append(out, v)
	}
	return out
}

// SettledName is the verdict Judge adds, failed, to a run whose
// simulated time had to be forced on (run.forced_advances above 0):
// whatever its expectations say, such a run is not the scenario's.
const SettledName = "simulated time moved only once the process had settled"

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

// JudgeComparisons judges s's compare: checks once every variant of its
// sweep has run. vs are s's variants (Variants) and reps their reports, in
// the same order. A comparison reading a variant that did not complete is
// not judged, and so is a timing comparison when any variant fell behind.
func JudgeComparisons(s *Scenario, vs []Variant, reps []*result.Report) []result.Verdict {
	if len(s.Compare) == 0 {
		return nil
	}
	env := expect.Comparison{Variant: map[string]result.Result{}}
	var incomplete, behind []string
	for i, v := range vs {
		if i >= len(reps) || reps[i] == nil || reps[i].Err != "" {
			incomplete = append(incomplete, v.Label)
			continue
		}
		env.Variant[v.Label] = reps[i].Result
		if run := reps[i].Result.Run; !run.KeptUp {
			label := v.Label
			if why := run.Behind(); why != "" {
				label += " (" + why + ")"
			}
			behind = append(behind, label)
		}
	}
	out := make([]result.Verdict, 0, len(s.Compare))
	for i, e := range s.Compare {
		v := result.Verdict{Name: e.Name, Check: e.Check}
		c := s.comparisons[i]
		if c == nil {
			cc, err := expect.CompileComparison(e.Check)
			if err != nil {
				v.Status, v.Detail = result.Fail, "does not compile: "+err.Error()
				out = append(out, v)
				continue
			}
			c = cc
		}
		switch {
		case len(incomplete) > 0:
			v.Status, v.Detail = result.NotJudged, "not judged: the variant "+strings.Join(incomplete, ", ")+" did not complete"
		case (c.Timing || e.Timing) && len(behind) > 0:
			v.Status, v.Detail = result.NotJudged, "not judged: the variant "+strings.Join(behind, ", ")+" fell behind its schedule (a timing comparison)"
		default:
			v.Status, v.Detail = c.JudgeComparison(env)
		}
		out = append(out, v)
	}
	return out
}
