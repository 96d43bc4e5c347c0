package expect

import (
	"reflect"

	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm/runtime"
)

// divideFunc and moduloFunc stand for / and % in a compiled check (see
// divisionPatcher). Metric names never start with "_".
const (
	divideFunc = "__divide"
	moduloFunc = "__modulo"
)

// divisionPatcher replaces each / and % between numbers with a call that
// refuses a zero divisor. Left alone, expr divides in floating point: x /
// 0 is +Inf (or NaN for 0 / 0), and "fleet.count / lost > 1" would pass on
// a run that lost nothing; x % 0 panics. The call carries the divisor's
// text so that the verdict can name it.
type divisionPatcher struct {
	// divisors are the divisors' texts in the order Walk meets their
	// divisions (children first), from the unpatched tree: once a
	// division is patched its text would read __divide(...).
	divisors []string
	n        int
}

// divisors lists the divisors of text's / and % in Walk order.
func divisors(text string) []string {
	tree, err := parser.Parse(text)
	if err != nil {
		return nil
	}
	var out []string
	exprast.Walk(&tree.Node, visitFunc(func(n exprast.Node) {
		if b, ok := n.(*exprast.BinaryNode); ok && (b.Operator == "/" || b.Operator == "%") {
			out = append(out, b.Right.String())
		}
	}))
	return out
}

func (p *divisionPatcher) Visit(node *exprast.Node) {
	b, ok := (*node).(*exprast.BinaryNode)
	if !ok || (b.Operator != "/" && b.Operator != "%") {
		return
	}
	text := ""
	if p.n < len(p.divisors) {
		text = p.divisors[p.n]
	}
	p.n++
	fn, want := divideFunc, isNumber
	if b.Operator == "%" {
		fn, want = moduloFunc, isInteger
	}
	if !want(operandType(b.Left)) || !want(operandType(b.Right)) {
		return // expr reports the mismatch itself
	}
	exprast.Patch(node, &exprast.CallNode{
		Callee:    &exprast.IdentifierNode{Value: fn},
		Arguments: []exprast.Node{b.Left, b.Right, &exprast.StringNode{Value: text}},
	})
}

// operandType is n's type, also for a division patched during this walk
// (the tree was type-checked before it).
func operandType(n exprast.Node) reflect.Type {
	if c, ok := n.(*exprast.CallNode); ok {
		if id, ok := c.Callee.(*exprast.IdentifierNode); ok {
			switch id.Value {
			case divideFunc:
				return reflect.TypeFor[float64]()
			case moduloFunc:
				return reflect.TypeFor[int]()
			}
		}
	}
	return n.Type()
}

func isInteger(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func isNumber(t reflect.Type) bool {
	return isInteger(t) || t != nil && (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64)
}

// divisionByZero is a division or remainder whose divisor was zero: the
// Check is not judged.
type divisionByZero struct {
	divisor string // as written in the check
	value   any
}

func (e *divisionByZero) Error() string {
	v := show(e.value, false)
	if e.divisor == "" || e.divisor == v {
		return "division by zero (the divisor is " + v + ")"
	}
	return "division by zero (the divisor " + e.divisor + " = " + v + ")"
}

// divide is / with a check of the divisor; otherwise it computes what expr
// does (a float64, whatever the operands).
func divide(params ...any) (any, error) {
	if err := zeroDivisor(params); err != nil {
		return nil, err
	}
	return runtime.Divide(params[0], params[1]), nil
}

// modulo is % with a check of the divisor.
func modulo(params ...any) (any, error) {
	if err := zeroDivisor(params); err != nil {
		return nil, err
	}
	return runtime.Modulo(params[0], params[1]), nil
}

func zeroDivisor(params []any) error {
	v := reflect.ValueOf(params[1])
	var zero bool
	switch {
	case v.CanInt():
		zero = v.Int() == 0
	case v.CanUint():
		zero = v.Uint() == 0
	case v.CanFloat():
		zero = v.Float() == 0
	}
	if !zero {
		return nil
	}
	text, _ := params[2].(string)
	return &divisionByZero{divisor: text, value: params[1]}
}
