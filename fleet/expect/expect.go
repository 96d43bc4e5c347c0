package expect

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// Limits of a check, which keep a hostile check from costing expr's
// parser its stack (it recurses once per bracket). docs/SCENARIOS.md
// lists them.
const (
	// MaxCheckLength is the longest check (an expectation or a
	// comparison), in bytes.
	MaxCheckLength = 4096
	// MaxCheckDepth is how deep brackets may nest in a check: ( [ {.
	MaxCheckDepth = 32
)

// Check is one compiled check: an expectation over a Result (Compile) or
// a comparison over a sweep's variants (CompileComparison). It is safe for
// concurrent use once compiled.
type Check struct {
	prog *vm.Program
	// Timing is set when the check reads a Seconds value: a timing check
	// is not judged on a run that fell behind its schedule.
	Timing bool
	// reads are the metric paths the check reads, shown with their values
	// when it fails.
	reads []reading
}

type reading struct {
	text   string
	prog   *vm.Program
	timing bool
}

// secondsFunc converts a Seconds to float64 inside expressions. expr treats
// only the built-in numeric types as numbers, so without it
// "leader.mailbox.wait.p99 < 2" would not type-check. The name cannot
// clash with a metric: metric names never start with "_".
const secondsFunc = "__seconds"

// secondsPatcher wraps every Seconds value an expression reads in
// secondsFunc, and so learns whether the expression is a timing check.
type secondsPatcher struct{ timing bool }

var secondsType = reflect.TypeFor[result.Seconds]()

func (p *secondsPatcher) Visit(node *exprast.Node) {
	if t := (*node).Type(); t == secondsType {
		p.timing = true
		exprast.Patch(node, &exprast.CallNode{
			Callee:    &exprast.IdentifierNode{Value: secondsFunc},
			Arguments: []exprast.Node{*node},
		})
	}
}

// secondsToFloat takes any number: a patched node's parent (sum, max)
// can be Seconds when checked first and float64 once its arguments are
// patched.
func secondsToFloat(params ...any) (any, error) {
	v := reflect.ValueOf(params[0])
	switch {
	case v.CanFloat():
		return v.Float(), nil
	case v.CanInt():
		return float64(v.Int()), nil
	case v.CanUint():
		return float64(v.Uint()), nil
	}
	return nil, fmt.Errorf("%s(%T): want a number", secondsFunc, params[0])
}

// compile compiles one expression against env (a Result, or a
// Comparison); asBool for a check, not for a metric path read for a
// failure's detail.
func compile(text string, env any, asBool bool) (*vm.Program, bool, error) {
	p := &secondsPatcher{}
	opts := []expr.Option{
		expr.Env(env),
		expr.Function(secondsFunc, secondsToFloat, new(func(any) float64)),
		expr.Function(divideFunc, divide, new(func(any, any, string) float64)),
		expr.Function(moduloFunc, modulo, new(func(any, any, string) int)),
		// Divisions first: a divisor that reads a Seconds value is then
		// converted inside the call.
		expr.Patch(&divisionPatcher{divisors: divisors(text)}),
		expr.Patch(p),
		// A verdict must depend on the run only: no wall clock.
		expr.DisableBuiltin("now"),
	}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(text, opts...)
	return prog, p.timing, err
}

// Compile compiles an expectation: a bool over the Result's names. Its
// error is a *Error locating the problem inside text.
func Compile(text string) (*Check, error) { return compileCheckIn(text, result.Result{}) }

// compileCheckIn compiles a check against env: Result{} for an
// expectation, Comparison{} for a comparison of sweep variants.
func compileCheckIn(text string, env any) (*Check, error) {
	if ce := checkSize(text); ce != nil {
		return nil, ce
	}
	prog, timing, err := compile(text, env, true)
	if err != nil {
		return nil, explain(text, err)
	}
	c := &Check{prog: prog, Timing: timing}
	tree, err := parser.Parse(text)
	if err != nil {
		return c, nil // it compiled, so this does not happen
	}
	seen := map[string]bool{}
	for _, n := range metricPaths(tree.Node) {
		t := n.String()
		if seen[t] {
			continue
		}
		seen[t] = true
		if p, timing, err := compile(t, env, false); err == nil {
			c.reads = append(c.reads, reading{text: t, prog: p, timing: timing})
		}
	}
	return c, nil
}

// checkSize refuses a check longer than MaxCheckLength or with brackets
// nested deeper than MaxCheckDepth, before expr's parser, which recurses
// once per bracket, sees it. Brackets inside strings and comments do not
// count.
func checkSize(text string) *Error {
	if len(text) > MaxCheckLength {
		return &Error{Msg: fmt.Sprintf("the check is %d bytes long, over the limit of %d: a check is an expression such as lost == 0", len(text), MaxCheckLength)}
	}
	depth, line, col := 0, 0, 0
	var quote rune // the quote of the string being read, or '/' and '*' for a comment
	escaped := false
	prev := rune(0)
	for _, r := range text {
		switch {
		case quote == '/':
			if r == '\n' {
				quote = 0
			}
		case quote == '*':
			if prev == '*' && r == '/' {
				quote, r = 0, 0
			}
		case quote != 0:
			switch {
			case escaped:
				escaped = false
			case r == '\\' && quote != '`':
				escaped = true
			case r == quote:
				quote, r = 0, 0
			case r == '\n' && quote != '`':
				quote = 0 // expr ends the string here, with an error
			}
		case prev == '/' && (r == '/' || r == '*'):
			quote, r = r, 0
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '(' || r == '[' || r == '{':
			if depth++; depth > MaxCheckDepth {
				return &Error{Line: line, Col: col, Msg: fmt.Sprintf("brackets nested more than %d deep: a check nests a few (max(a, b) > (c + d) * 2)", MaxCheckDepth)}
			}
		case r == ')' || r == ']' || r == '}':
			depth = max(depth-1, 0)
		}
		if r == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
		prev = r
	}
	return nil
}

// Shorten is a check's text for a message: without surrounding white
// space, and cut short if long.
func Shorten(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > 200 {
		r := []rune(text)
		if len(r) > 100 {
			text = string(r[:100]) + "..."
		}
	}
	return text
}

// Error is a check that does not compile, with the place in the
// check's text (0-based line and column) and a message for a person.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return e.Msg }

var noFieldRE = regexp.MustCompile(`type result\.(\w+) has no field (\w+)`)

// explain turns expr's error into an Error, naming the valid metric
// names near a misspelt one.
func explain(text string, err error) error {
	ce := &Error{Msg: err.Error()}
	var fe *file.Error
	if errors.As(err, &fe) {
		ce.Line, ce.Col, ce.Msg = fe.Line-1, fe.Column, fe.Message
	}
	if strings.HasPrefix(ce.Msg, "expected bool") {
		ce.Msg += ": a check must be true or false, as in lost == 0"
	}
	if strings.HasPrefix(ce.Msg, "bad number syntax") || strings.HasPrefix(ce.Msg, "unexpected token Identifier") {
		if lit, secs, col, ok := durationAt(text, ce.Line, ce.Col); ok {
			ce.Col = col
			ce.Msg = fmt.Sprintf("write %s, not %s: durations in checks are seconds", secs, lit)
			return ce
		}
	}
	tree, perr := parser.Parse(text)
	if perr != nil {
		return ce
	}
	for _, n := range metricChains(tree.Node) {
		segs, _ := segments(metricOf(n))
		parent, bad, ok := names.firstUnknown(segs)
		if !ok || !strings.Contains(ce.Msg, bad) {
			continue
		}
		children := names.children[parent]
		if parent == "" {
			ce.Msg = fmt.Sprintf("unknown name %q%s; the names are %s (docs/SCENARIOS.md describes each)",
				bad, wording.DidYouMean(bad, children), strings.Join(children, ", "))
		} else {
			ce.Msg = fmt.Sprintf("%s has no %q%s; it has %s", parent, bad, wording.DidYouMean(bad, children), strings.Join(children, ", "))
		}
		return ce
	}
	if m := noFieldRE.FindStringSubmatch(ce.Msg); m != nil {
		// Inside all(deploys, .x) expr names the Go type: name the list.
		for p, t := range names.types {
			if strings.HasSuffix(p, "[]") && t.Name() == m[1] {
				children := names.children[p]
				ce.Msg = fmt.Sprintf("%s has no %q%s; it has %s", p, m[2], wording.DidYouMean(m[2], children), strings.Join(children, ", "))
			}
		}
	}
	return ce
}

// durationAt finds a Go duration written as a number in a check ("1s",
// "500ms", "1m30s", "2 m") around column col of the check's line: expr
// reads "1s" as a malformed number, and "2 m" as a number and a name. It
// returns the literal as written, its value in seconds and the column
// where it starts.
func durationAt(text string, line, col int) (lit, secs string, start int, ok bool) {
	lines := strings.Split(text, "\n")
	if line < 0 || line >= len(lines) {
		return "", "", 0, false
	}
	r := []rune(lines[line])
	word := func(i int) bool {
		c := r[i]
		return unicode.IsLetter(c) || unicode.IsDigit(c) || c == '.' || c == '_'
	}
	if col >= len(r) {
		col = len(r) - 1
	}
	if col < 0 || !word(col) {
		return "", "", 0, false
	}
	a, b := col, col+1
	for a > 0 && word(a-1) {
		a--
	}
	for b < len(r) && word(b) {
		b++
	}
	tok, number := string(r[a:b]), string(r[a:b])
	if unicode.IsLetter(r[a]) {
		// A unit after a space: the number is the word before it.
		e := a
		for e > 0 && r[e-1] == ' ' {
			e--
		}
		if e == a || e == 0 || !word(e-1) {
			return "", "", 0, false
		}
		s := e
		for s > 0 && word(s-1) {
			s--
		}
		n := string(r[s:e])
		if _, err := strconv.ParseFloat(n, 64); err != nil {
			return "", "", 0, false
		}
		number, tok, a = n+string(r[a:b]), string(r[s:b]), s
	}
	if _, err := strconv.ParseFloat(number, 64); err == nil {
		return "", "", 0, false // a number, not a duration
	}
	d, err := time.ParseDuration(number)
	if err != nil {
		return "", "", 0, false
	}
	return tok, strconv.FormatFloat(d.Seconds(), 'f', -1, 64), a, true
}

// maxListed is the most names a message lists of those a scenario
// defines (events, windows, variants), which a file may have thousands of.
const maxListed = 20

// UnknownKeys finds a read of a named map (events["away"], windows["herd"])
// whose key is not one the scenario defines: keys lists the valid keys by
// map name. It returns a *Error at the key, or nil.
func UnknownKeys(text string, keys map[string][]string) error {
	tree, err := parser.Parse(text)
	if err != nil {
		return nil
	}
	var bad error
	root := tree.Node
	exprast.Walk(&root, visitFunc(func(n exprast.Node) {
		m, ok := n.(*exprast.MemberNode)
		if !ok || bad != nil {
			return
		}
		id, ok := m.Node.(*exprast.IdentifierNode)
		if !ok {
			return
		}
		valid, named := keys[id.Value]
		if !named {
			return
		}
		key, ok := m.Property.(*exprast.StringNode)
		if !ok {
			bad = &Error{Col: m.Property.Location().From, Msg: fmt.Sprintf("%s takes a name in quotes, as in %s[%q]", id.Value, id.Value, "name")}
			return
		}
		if !slices.Contains(valid, key.Value) {
			msg := fmt.Sprintf("%s has no %q%s", id.Value, key.Value, wording.DidYouMean(key.Value, valid))
			if len(valid) == 0 {
				msg += fmt.Sprintf("; this scenario defines no %s", id.Value)
			} else {
				msg += "; it has " + wording.Some(valid, maxListed)
			}
			bad = &Error{Col: key.Location().From, Msg: msg}
		}
	}))
	return bad
}

// Judge evaluates c on r; timing marks a timing check (c.Timing, or a
// check the scenario marked). A timing check on a run that fell behind is
// NotJudged, with result.RunInfo.Behind as its detail, and so is a check that
// divides by zero; any other evaluation error is a Fail with the error as
// its detail; a Fail's detail shows the values the check read.
func (c *Check) Judge(r result.Result, timing bool) (result.Status, string) {
	if timing && !r.Run.KeptUp {
		if why := r.Run.Behind(); why != "" {
			return result.NotJudged, why
		}
		// A Result without its lags.
		return result.NotJudged, "machine could not keep up at speed " + strconv.FormatFloat(r.Run.Speed, 'g', -1, 64)
	}
	res, err := expr.Run(c.prog, r)
	var dz *divisionByZero
	switch {
	case errors.As(err, &dz):
		return result.NotJudged, "not judged: " + dz.Error()
	case err != nil:
		return result.Fail, firstLine(err.Error())
	case res == true:
		return result.Pass, ""
	}
	return result.Fail, c.values(r)
}

// values shows what the check read: "leader.mailbox.max_depth = 1412,
// leader.mailbox.capacity = 1000".
func (c *Check) values(r result.Result) string { return c.valuesIn(r) }

// valuesIn is values over any environment the check was compiled for.
func (c *Check) valuesIn(env any) string {
	parts := make([]string, 0, len(c.reads))
	for _, rd := range c.reads {
		v, err := expr.Run(rd.prog, env)
		if err != nil {
			parts = append(parts, rd.text+": "+firstLine(err.Error()))
			continue
		}
		parts = append(parts, rd.text+" = "+show(v, rd.timing))
	}
	return strings.Join(parts, ", ")
}

// show formats a value for a failure's detail: numbers as Go prints them,
// timings with their unit, anything larger as JSON, cut short.
func show(v any, timing bool) string {
	var s string
	switch x := v.(type) {
	case float64:
		s = strconv.FormatFloat(x, 'g', 6, 64)
		switch {
		case timing && math.IsInf(x, 1):
			s += " (never)" // result.Never: a deploy that did not finish
		case timing:
			s += "s"
		}
	case string:
		s = strconv.Quote(x)
	case bool, int, int64, uint64:
		s = fmt.Sprint(x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
