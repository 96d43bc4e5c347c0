package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"

	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

var (
	selectorType = reflect.TypeFor[Selector]()
	expectType   = reflect.TypeFor[Expect]()
	durationType = reflect.TypeFor[Duration]()
	distType     = reflect.TypeFor[dist.Dist]()
	policyType   = reflect.TypeFor[mailbox.Policy]()
	edgeType     = reflect.TypeFor[Edge]()
)

const (
	distSyntax  = dist.Syntax
	policyNames = "reject, drop-oldest, drop-newest, block, coalesce or unbounded"
)

// Load reads and parses the scenario file at path (see Parse). An
// unreadable file is an error wrapping the os error; a file with problems
// is an Errors listing all of them.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a scenario file strictly and validates it: an unknown key,
// a value of the wrong type or out of range, an event with no action or
// two, a selector naming a group or a worker the fleet does not have, a
// check that does not compile against Result or that cannot depend on the
// run (lost >= 0)... Every problem is reported, as an Errors, each with
// file:line:col, the YAML path, the offending text and what would be
// valid. file names the data in messages.
//
// The returned Scenario has its defaults filled in, its timeline sorted by
// time (stably) and its expectations compiled. Every variant of its sweep
// has been built and validated too (Variants). Its Warnings list the
// checks that cannot depend on this scenario's run: they read only counts
// it never produces.
func Parse(file string, data []byte) (*Scenario, error) {
	src := newSource(file, data)
	body, errs := parseDocument(src, data)
	if errs != nil {
		return nil, errs
	}
	d := newDecoder(src, body)
	s := &Scenario{File: file}
	d.value(body, reflect.ValueOf(s).Elem(), "", "")
	errs = append(errs, d.errs...)
	errs = append(errs, finish(s, src, d.failed())...)
	sweep, serrs := readSweep(d, body)
	errs = append(errs, serrs...)
	s.Sweep = sweep
	s.src = src
	if len(serrs) == 0 {
		errs = append(errs, compileComparisons(s, src)...)
	}
	if len(sweep) > 0 && (len(errs) == 0 || len(errs) == len(serrs)) {
		// Each swept value once, the other parameters at their first value,
		// so that a bad value is reported once at its place in the sweep;
		// then, if they all pass, every combination (values can clash).
		var all []Variant // with one parameter, the loop builds them all
		pick := make([]int, len(sweep))
		for i, p := range sweep {
			for j := range p.Values {
				if j == 0 && i > 0 {
					continue
				}
				clear(pick)
				pick[i] = j
				v, verrs := s.variant(src, pick)
				errs = append(errs, verrs...)
				if len(verrs) == 0 {
					all = append(all, v)
				}
			}
		}
		if len(errs) == 0 && len(sweep) > 1 {
			vs, err := s.Variants()
			if err != nil {
				var es Errors
				if !errors.As(err, &es) {
					return nil, err
				}
				errs = append(errs, es...)
			}
			all = vs
		}
		if len(errs) == 0 {
			s.Warnings = commonWarnings(all)
		}
	}
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	return s, nil
}

// commonWarnings are the warnings every variant has: a check that reads
// only what some variants never send still compares the others.
func commonWarnings(vs []Variant) Errors {
	if len(vs) == 0 {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(vs[0].Scenario.Warnings), func(w *Error) bool {
		for _, v := range vs[1:] {
			if !slices.ContainsFunc(v.Scenario.Warnings, func(x *Error) bool { return *x == *w }) {
				return true
			}
		}
		return false
	})
}

// parseDocument parses data into its one YAML document's body, a mapping.
func parseDocument(src *source, data []byte) (body ast.Node, errs Errors) {
	defer func() {
		// The parser is outside code: a bug in it must not take the
		// process down on a user's file.
		if r := recover(); r != nil {
			body, errs = nil, Errors{src.atPos(position{1, 1}, "", fmt.Sprintf("the YAML parser failed on this file (%v): check its syntax", r))}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			p := ye.GetToken().Position
			return nil, Errors{src.atPos(position{p.Line, p.Column}, "", "YAML syntax: "+ye.GetMessage())}
		}
		return nil, Errors{src.atPos(position{1, 1}, "", "YAML syntax: "+firstLine(err.Error()))}
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, Errors{src.atPos(position{1, 1}, "", "the file holds no scenario: it needs at least name, duration and fleet.count")}
	}
	if len(docs) > 1 {
		return nil, Errors{src.atPos(nodePos(docs[1].Body), "", "a file holds one scenario: this is a second YAML document (after ---); put it in its own file")}
	}
	body = docs[0].Body
	if c, ok := body.(*ast.CommentGroupNode); ok && c != nil {
		return nil, Errors{src.atPos(position{1, 1}, "", "the file holds only comments: a scenario needs at least name, duration and fleet.count")}
	}
	n := newDecoder(src, nil).resolve(body, "")
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return body, nil
	}
	return nil, Errors{src.atPos(nodePos(body), "", fmt.Sprintf("%s is not a scenario: the file must be a mapping of keys (name, description, duration, fleet, leader, timeline, expect, sweep...)", describe(n)))}
}

// finish completes a decoded scenario: mechanism defaults, validation,
// the scenario-level defaults, compiled expectations, and the timeline in
// time order. skip lists the paths that already failed to decode, whose
// validation would only repeat the problem.
func finish(s *Scenario, src *source, skip map[string]bool) Errors {
	for i := range s.Timeline {
		if s.Timeline[i].path == "" {
			s.Timeline[i].path = index("timeline", i)
		}
	}
	fillDefaults(s, src)
	errs := validate(s, src)
	s.applyDefaults()
	errs = append(errs, compileChecks(s, src)...)
	slices.SortStableFunc(s.Timeline, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return slices.DeleteFunc(errs, func(e *Error) bool {
		for p := e.Path; p != ""; p = parent(p) {
			if skip[p] {
				return true
			}
		}
		return false
	})
}
