package scenario

import (
	"github.com/fleetsim/fleetsim/fleet/expect"
	"github.com/fleetsim/fleetsim/fleet/scenario/internal/yamlshape"
)

// Limits of a scenario file, checked before a parser sees it. A shipped
// scenario is under 2 KB, nests at most 5 levels deep, has at most 12 keys
// in a mapping (a scenario's mappings have at most 14 keys to choose
// from), at most 75 keys and list items in all, and checks of at most 130
// bytes with brackets 1 deep; these bounds are far above that and keep a
// broken or hostile file from costing the YAML parser minutes and
// gigabytes (its work grows with the square of one mapping's keys, and
// with the nesting) or the expression parser its stack (it recurses once
// per bracket). docs/SCENARIOS.md lists them.
const (
	// DefaultMaxFileSize is the largest file, in bytes, that ReadFile is
	// usually given (sim's --max-file-size).
	DefaultMaxFileSize = 1 << 20
	// MaxFileSize is the largest file one load should read (the most
	// sim's --max-file-size allows). At its peak a load takes up to 45
	// bytes of memory per byte of file (the YAML parser's; a file of
	// block scalars or quoted text costs it most), so 4 MiB keeps one
	// load within 256 MB; docs/BENCHMARKS.md has the measurements.
	MaxFileSize = 4 << 20
	// MaxDepth is how deep values may nest: mappings, lists and flow
	// brackets, each a level.
	MaxDepth = yamlshape.MaxDepth
	// MaxKeys is the most keys one mapping may have.
	MaxKeys = yamlshape.MaxKeys
	// MaxNodes is the most keys and list items a file may have in all.
	MaxNodes = yamlshape.MaxNodes
	// MaxCheckLength and MaxCheckDepth are the limits on one check (an
	// expectation or a comparison), which fleet/expect enforces.
	MaxCheckLength = expect.MaxCheckLength
	MaxCheckDepth  = expect.MaxCheckDepth
)

// Limits of what a file makes once parsed, checked before the work they
// bound: an alias repeats its anchor's value, a check costs its compiler
// a quarter of a millisecond and more per byte, and each variant of a
// sweep is a copy of the scenario, built and checked whole. A shipped
// scenario repeats no text by alias, compiles at most 11 checks of 1.7 KB
// in all, and its variants hold at most 300 keys and list items together.
// docs/SCENARIOS.md lists them; MaxNodes counts the keys and list items
// with the aliases expanded too.
const (
	// MaxAliasBytes is the most text aliases may repeat: each alias
	// counts the bytes of the scalars of the value it stands for.
	MaxAliasBytes = 1 << 20
	// MaxChecks is the most checks (expectations and comparisons) one
	// load compiles, a sweep's variants' included; a text given twice is
	// compiled once.
	MaxChecks = 1000
	// MaxCheckBytes is the most bytes those checks may hold in all.
	MaxCheckBytes = 64 << 10
	// MaxSweepNodes is the most keys and list items a sweep's variants
	// may hold together: the variants times the file's keys and list
	// items, aliases expanded.
	MaxSweepNodes = 250_000
)

// checkShape checks data against MaxDepth, MaxKeys and MaxNodes, and
// that it is UTF-8 text, in one pass over its bytes before the YAML
// parser sees it (yamlshape), and returns an Error at the first place
// that is not (nil if none is). It does not split the file into lines
// (newSource): a refused file may hold millions.
func checkShape(file string, data []byte) *Error {
	p := yamlshape.Check(data)
	if p == nil {
		return nil
	}
	return &Error{File: file, Line: p.Line, Col: p.Col, Msg: p.Msg, Source: p.Source}
}
