package expect

import (
	"errors"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"

	"github.com/fleetsim/fleetsim/fleet/result"
)

// Comparison is what a compare: check reads: each variant's Result, by
// the variant's label.
type Comparison struct {
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

// CompileComparison compiles a compare: check, over Comparison.
func CompileComparison(text string) (*Check, error) { return compileCheckIn(text, Comparison{}) }

// ConstantComparisonMessage is ConstantMessage for a compare: check.
func ConstantComparisonMessage(text string, c *Check) string {
	return constantMessageIn(text, c, Comparison{})
}

// JudgeComparison evaluates a compare: check on env. A division by zero
// is not judged; any other evaluation error is a Fail with the error as
// its detail; a Fail's detail shows the values the check read.
func (c *Check) JudgeComparison(env Comparison) (result.Status, string) {
	res, err := expr.Run(c.prog, env)
	var dz *divisionByZero
	switch {
	case errors.As(err, &dz):
		return result.NotJudged, "not judged: " + dz.Error()
	case err != nil:
		return result.Fail, firstLine(err.Error())
	case res == true:
		return result.Pass, ""
	}
	return result.Fail, c.valuesIn(env)
}
