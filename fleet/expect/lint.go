package expect

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
	"github.com/fleetsim/fleetsim/fleet/result"
)

// boundHint is the advice for a check that compares a name with a bound
// the run can never cross.
const boundHint = "compare with a bound the run could cross"

// ConstantMessage says why the check, compiled as c against a Result,
// cannot depend on the run (it is true, or false, whatever the Result
// holds), or returns "" when it can. constantCheck decides; the check's
// text explains.
func ConstantMessage(text string, c *Check) string {
	return constantMessageIn(text, c, result.Result{})
}

// constantMessageIn is ConstantMessage for a check compiled against env
// (a Result, or a Comparison).
func constantMessageIn(text string, c *Check, env any) string {
	if d := zeroDivision(text); d != "" {
		return fmt.Sprintf("check %q divides by zero whatever the run measures (%s): it is never judged; divide by a name the run measures", strings.TrimSpace(text), d)
	}
	outcome, constant := constantCheck(c.prog, reflect.TypeOf(env), func(part string) (*vm.Program, error) {
		p, _, err := compile(part, env, true)
		return p, err
	})
	if !constant {
		return ""
	}
	reason, hint := whyConstant(text, outcome)
	is, cannot := "true", "fail"
	if !outcome {
		is, cannot = "false", "pass"
	}
	return fmt.Sprintf("check %q is %s whatever the run measures: it cannot %s (%s); %s", strings.TrimSpace(text), is, cannot, reason, hint)
}

// zeroDivision returns the first division (or remainder) of text by a
// written 0, or "".
func zeroDivision(text string) string {
	tree, err := parser.Parse(text)
	if err != nil {
		return ""
	}
	found := ""
	exprast.Walk(&tree.Node, visitFunc(func(n exprast.Node) {
		if b, ok := n.(*exprast.BinaryNode); ok && (b.Operator == "/" || b.Operator == "%") && found == "" {
			if v, ok := constValue(b.Right); ok && v == 0 {
				found = b.String()
			}
		}
	}))
	return found
}

// whyConstant explains a constant check: it reads no name; or it, or a
// part of it, compares an expression with itself or a name that is never
// negative with a bound at or below 0; or a part subtracts an expression
// from itself. Failing those, it names what the check reads.
func whyConstant(text string, outcome bool) (reason, hint string) {
	tree, err := parser.Parse(text)
	if err != nil {
		return "no value the run measures changes it", boundHint
	}
	var reads []exprast.Node // every name, a result's or not ($env)
	for _, n := range metricChains(tree.Node) {
		if _, ok := segments(n); ok {
			reads = append(reads, n)
		}
	}
	if len(reads) == 0 {
		return "it reads no result name", "compare a result name with a bound, as in lost == 0"
	}
	var nodes []exprast.Node
	exprast.Walk(&tree.Node, visitFunc(func(n exprast.Node) { nodes = append(nodes, n) }))
	for _, n := range slices.Backward(nodes) { // the whole check first
		if v, why, hint, ok := alwaysSo(n); ok {
			if n != tree.Node {
				return fmt.Sprintf("%s is always %v: %s", n, v, why), hint
			}
			if v == outcome {
				return why, hint
			}
		}
		if b, ok := n.(*exprast.BinaryNode); ok && b.Operator == "-" && same(b.Left, b.Right) {
			return fmt.Sprintf("%s is always 0", n), "compare different names, or a name with a bound"
		}
	}
	var texts []string
	for _, n := range reads {
		if t := n.String(); !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	return "no value of " + wording.List(texts) + " changes it", boundHint
}

// alwaysSo reports whether n is a comparison whose value is known without
// the run: an expression with itself, or a number that is never negative
// with a bound it cannot cross.
func alwaysSo(n exprast.Node) (value bool, why, hint string, ok bool) {
	b, isBin := n.(*exprast.BinaryNode)
	if !isBin {
		return false, "", "", false
	}
	op := b.Operator
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
	default:
		return false, "", "", false
	}
	if same(b.Left, b.Right) {
		return op == "==" || op == "<=" || op == ">=", fmt.Sprintf("it compares %s with itself", b.Left), "compare it with another name or a bound", true
	}
	x, other := b.Left, b.Right
	if _, isConst := constValue(x); isConst {
		// 0 <= x is x >= 0.
		x, other = other, x
		op = map[string]string{"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	c, isConst := constValue(other)
	if !isConst || !nonNegative(x) {
		return false, "", "", false
	}
	why = x.String() + " is never negative"
	switch {
	case op == ">=" && c <= 0, op == ">" && c < 0, op == "!=" && c < 0:
		return true, why, boundHint, true
	case op == "<" && c <= 0, op == "<=" && c < 0, op == "==" && c < 0:
		return false, why, boundHint, true
	}
	return false, "", "", false
}

// same reports whether a and b are the same expression, one that reads
// something.
func same(a, b exprast.Node) bool {
	if a.String() != b.String() {
		return false
	}
	reads := false
	exprast.Walk(&a, visitFunc(func(n exprast.Node) {
		switch n.(type) {
		case *exprast.IdentifierNode, *exprast.PointerNode:
			reads = true
		}
	}))
	return reads
}

// constValue is the number n writes, as in 0, 0.5 or -1.
func constValue(n exprast.Node) (float64, bool) {
	switch m := n.(type) {
	case *exprast.IntegerNode:
		return float64(m.Value), true
	case *exprast.FloatNode:
		return m.Value, true
	case *exprast.UnaryNode:
		if v, ok := constValue(m.Node); ok {
			switch m.Operator {
			case "-":
				return -v, true
			case "+":
				return v, true
			}
		}
	}
	return 0, false
}

// nonNegative reports whether n is a number that cannot be below 0: a
// result name that holds a number (every count, time, ratio and limit),
// or a length, count or absolute value.
func nonNegative(n exprast.Node) bool {
	if b, ok := n.(*exprast.BuiltinNode); ok {
		return b.Name == "len" || b.Name == "count" || b.Name == "abs"
	}
	segs, ok := segments(n)
	if !ok {
		return false
	}
	t := resultType
	for _, s := range segs {
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Array:
			t = t.Elem()
			continue
		case reflect.Struct:
		default:
			return false
		}
		f, ok := exprField(t, s)
		if !ok {
			return false
		}
		t = f.Type
	}
	return isNumber(t)
}
