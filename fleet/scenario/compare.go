package scenario

import (
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
