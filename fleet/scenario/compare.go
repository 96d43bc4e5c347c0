package scenario

import (
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// comparisonEnv is what a compare: check reads: each variant's Result, by
// the variant's label.
type comparisonEnv struct {
	Variant map[string]result.Result `expr:"variant"`
}

// metricOf strips a comparison's variant["label"] from the front of a
// member chain, leaving the Result path it reads; other chains are
// returned as they are.
func metricOf(n exprast.Node) exprast.Node {
	var chain []*exprast.MemberNode
	for cur := n; ; {
		m, ok := cur.(*exprast.MemberNode)
		if !ok {
			if id, ok := cur.(*exprast.IdentifierNode); ok && id.Value == "variant" && len(chain) >= 2 {
				// chain[len-1] is variant["label"]; chain[len-2] the first name.
				first := chain[len(chain)-2]
				if s, ok := first.Property.(*exprast.StringNode); ok {
					var root exprast.Node = &exprast.IdentifierNode{Value: s.Value}
					for i := len(chain) - 3; i >= 0; i-- {
						root = &exprast.MemberNode{Node: root, Property: chain[i].Property}
					}
					return root
				}
			}
			return n
		}
		chain = append(chain, m)
		cur = m.Node
	}
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
	var errs Errors
	labels := s.labels()
	example := "label" // a sweep that makes no variant is reported where it is written
	if len(labels) > 0 {
		example = labels[0]
	}
	s.comparisons = make([]*check, len(s.Compare))
	seen := map[string]bool{}
	for i := range s.Compare {
		e := &s.Compare[i]
		path, at := e.place(src, "compare", i)
		if seen[e.Name] {
			errs = append(errs, src.at(at, "the comparison %q is listed twice: give each a different name", e.Name))
		}
		seen[e.Name] = true
		var c *check
		var err error
		if !strings.Contains(e.Check, "variant") {
			err = &checkError{msg: fmt.Sprintf("a comparison reads the variants' results, as in variant[%q].relay.backpressure; this one reads none (an expectation of each variant goes under expect:)", example)}
		} else if c, err = compileCheckIn(e.Check, comparisonEnv{}); err == nil {
			err = unknownKeys(e.Check, map[string][]string{"variant": labels})
		}
		if err != nil {
			ce := err.(*checkError)
			errs = append(errs, src.atPos(within(src, src.pos[at], e.Check, ce), path, fmt.Sprintf("check %q: %s", shortCheck(e.Check), ce.msg)))
			continue
		}
		if msg := constantMessageIn(e.Check, c, comparisonEnv{}); msg != "" {
			errs = append(errs, src.at(at, "%s", msg))
			continue
		}
		s.comparisons[i] = c
		e.Timing = c.timing
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
	env := comparisonEnv{Variant: map[string]result.Result{}}
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
			cc, err := compileCheckIn(e.Check, comparisonEnv{})
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
		case (c.timing || e.Timing) && len(behind) > 0:
			v.Status, v.Detail = result.NotJudged, "not judged: the variant "+strings.Join(behind, ", ")+" fell behind its schedule (a timing comparison)"
		default:
			res, err := expr.Run(c.prog, env)
			var dz *divisionByZero
			switch {
			case errors.As(err, &dz):
				v.Status, v.Detail = result.NotJudged, "not judged: "+dz.Error()
			case err != nil:
				v.Status, v.Detail = result.Fail, firstLine(err.Error())
			case res == true:
				v.Status = result.Pass
			default:
				v.Status, v.Detail = result.Fail, c.valuesIn(env)
			}
		}
		out = append(out, v)
	}
	return out
}
