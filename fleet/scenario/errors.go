package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
)

// Error is one problem in a scenario file: where it is (file, line and
// column, 1-based; 0 when unknown), the YAML path of the value
// ("timeline[2].deploy.version") and what is wrong with it, including the
// offending text and what would be valid.
type Error struct {
	File      string
	Line, Col int
	Path, Msg string
	// Source is the file's line at Line, for the caret under it ("" when
	// unknown).
	Source string
	// Warning marks a problem that does not stop the file from loading
	// (Scenario.Warnings).
	Warning bool
}

// Error formats e as "file:line:col: path: msg", or for a warning
// "file:line:col: warning: path: msg".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Warning {
		b.WriteString("warning: ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// quote writes the source line with a caret under the column, indented
// by a tab so that it stands apart from the message.
func (e *Error) quote(b *strings.Builder) {
	if e.Source == "" || e.Line <= 0 {
		return
	}
	line, col := []rune(e.Source), e.Col
	if len(line) > maxQuote {
		// A long line (a generated file, a hostile one) is shown around
		// the column, not whole.
		from := min(max(col-1-maxQuote/3, 0), len(line)-maxQuote)
		head, tail := "", ""
		if from > 0 {
			head = "..."
		}
		if from+maxQuote < len(line) {
			tail = "..."
		}
		line = []rune(head + string(line[from:from+maxQuote]) + tail)
		col += len(head) - from
	}
	fmt.Fprintf(b, "\n\t%s\n\t", string(line))
	// Keep tabs so the caret lines up under the same character.
	for i, r := range line {
		if i+1 >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
}

// maxQuote is the longest source line quoted under an error, in
// characters.
const maxQuote = 160

// A file with thousands of values can have thousands of problems, each of
// which can cost a search through every name the file defines (for "did
// you mean"): a load reports at most maxProblems of them, and each
// message lists at most maxListed names.
const (
	maxProblems = 100
	maxListed   = 20
)

// capped keeps the first maxProblems of es in file order and, when there
// were as many, says at the last that the rest of the file was not
// checked.
func (es Errors) capped() Errors {
	if len(es) < maxProblems {
		return es
	}
	es = es[:maxProblems]
	last := es[len(es)-1]
	return append(es, &Error{File: last.File, Line: last.Line, Col: last.Col, Msg: fmt.Sprintf("stopped at %d problems: fix these, and load the file again for the rest", maxProblems)})
}

// Errors is every problem found in one scenario file, in file order. Load
// and Parse return it (as an error) when the file is not valid; a caller
// tells bad input from an unreadable file with errors.As. Scenario.Warnings
// is one too.
type Errors []*Error

// Error formats each problem on its own line, followed by the source line
// with a caret under the column.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
		e.quote(&b)
	}
	return b.String()
}

// sorted returns es in file order without repeats (a sweep's variants can
// report the same problem more than once).
func (es Errors) sorted() Errors {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(es, func(a, b *Error) bool { return *a == *b })
}

// position is a line and column in a file, 1-based (0: unknown).
type position struct{ Line, Col int }

// source locates the values of one decoded document, by path, for the
// errors found after decoding (validation, expectations, Scale).
type source struct {
	file  string
	lines *lines
	// pos maps a value's path to where it is written. A path not in it
	// was not written (its default applies).
	pos map[string]position
	// note is appended to the messages about values the file sets (which
	// variant of a sweep, which --workers).
	note string
	// labels name the sweep entry of each swept path.
	labels map[string]string
	// anchors are the document's anchors by name, in document order (the
	// aliases in a sweep's values refer to them too).
	anchors map[string][]ast.Node
	// nodes counts the document's keys and list items, aliases expanded
	// (0 for a Scenario built in code): what each variant of a sweep
	// copies and checks again. extents are its anchors' values', measured
	// (checkExpansion).
	nodes   int
	extents map[ast.Node]extent
	// checks are the checks compiled for this document and its variants.
	checks *compiled
}

func newSource(file string, data []byte) *source {
	return &source{file: file, lines: &lines{text: string(data)}, pos: map[string]position{}, anchors: map[string][]ast.Node{}, checks: &compiled{}}
}

// lines is a file's text split into lines when a message first quotes
// one: a file of a million empty lines costs 4 bytes a line, not a
// string header each (so lines past 2 GiB are not quoted).
type lines struct {
	text   string
	once   sync.Once
	starts []int32 // where each line starts
}

// line returns line n (1-based) without its line end, and whether the
// file has it.
func (l *lines) line(n int) (string, bool) {
	if l == nil {
		return "", false
	}
	l.once.Do(func() {
		l.starts = append(l.starts, 0)
		for i := 0; i < min(len(l.text), math.MaxInt32-1); i++ {
			if l.text[i] == '\n' {
				l.starts = append(l.starts, int32(i+1))
			}
		}
	})
	if n < 1 || n > len(l.starts) {
		return "", false
	}
	end := len(l.text)
	if n < len(l.starts) {
		end = int(l.starts[n]) - 1
	}
	return strings.TrimRight(l.text[l.starts[n-1]:end], "\r"), true
}

// has reports whether the value at path was written in the file.
func (s *source) has(path string) bool {
	_, ok := s.pos[path]
	return ok
}

// at returns an Error for the value at path, placed at the value or, if it
// was not written, at its nearest written parent (a missing key is reported
// at the mapping that lacks it).
func (s *source) at(path, format string, args ...any) *Error {
	p, ok := s.pos[path]
	q := path
	for !ok && q != "" {
		q = parent(q)
		p, ok = s.pos[q]
	}
	if q == "" && len(s.labels) > 0 {
		// Not written in the file, but a sweep value made it wrong: point
		// at the swept value nearest to it.
		best := -1
		for lp := range s.labels {
			if n := commonSteps(lp, path); n > best || n == best && lp < q {
				best, q = n, lp
			}
		}
		p, ok = s.pos[q]
	}
	if !ok {
		p = position{1, 1}
	}
	msg := fmt.Sprintf(format, args...)
	for q := path; q != ""; q = parent(q) {
		if l, ok := s.labels[q]; ok {
			// A swept value: name the sweep entry that set it.
			return s.atPos(p, l+path[len(q):], msg)
		}
	}
	return s.atPos(p, path, msg+s.note)
}

// atPos returns an Error at p.
func (s *source) atPos(p position, path, msg string) *Error {
	e := &Error{File: s.file, Line: p.Line, Col: p.Col, Path: path, Msg: msg}
	e.Source, _ = s.lines.line(p.Line)
	return e
}

// commonSteps counts the leading dotted steps a and b share.
func commonSteps(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

// parent strips the last step of a path: "a.b[2]" → "a.b" → "a" → "".
func parent(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// join appends a key to a path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a sequence index to a path.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
