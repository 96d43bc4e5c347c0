// Package yamlshape checks the shape of a YAML text before a parser sees
// it: that it is UTF-8 text without control characters, and that it
// nests no deeper, has no mapping with more keys and no more keys and
// list items in all than a scenario file may. It reads YAML's lexical
// structure (indentation, "- " and "key: ", flow brackets, quotes, block
// scalars, comments) as far as those limits need and no further, in one
// pass over the bytes, so that a broken or hostile file costs the YAML
// parser (whose work grows with the square of one mapping's keys, and
// with the nesting) nothing. Where goccy/go-yaml reads more into a file
// than YAML says, it reads that too: the scenario package's FuzzLimits
// checks that its counts are never below what the parser builds.
package yamlshape

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The limits. A shipped scenario nests at most 5 levels deep, has at most
// 12 keys in a mapping and at most 75 keys and list items in all.
const (
	// MaxDepth is how deep values may nest: mappings, lists and flow
	// brackets, each a level.
	MaxDepth = 64
	// MaxKeys is the most keys one mapping may have.
	MaxKeys = 1000
	// MaxNodes is the most keys and list items a text may have in all.
	MaxNodes = 50_000
)

// Problem is the first place a text passes a limit, or is not text.
type Problem struct {
	Offset int    // the byte
	Line   int    // 1-based
	Col    int    // 1-based, in characters, as the parser counts them
	Msg    string // what is wrong and what would be valid
	Source string // the line, each byte that is not UTF-8 shown as U+FFFD
}

// Check checks data, stopping at the first limit passed, and returns it
// (nil if none is).
func Check(data []byte) *Problem {
	p, _, _ := Measure(data)
	return p
}

// Measure is Check that also returns the largest depth and the most keys
// of one mapping it counted, for a test that compares them with what a
// parser builds.
func Measure(data []byte) (p *Problem, depth, keys int) {
	s := &shape{data: data, line: 1}
	s.check()
	return s.problem(), s.maxDepth, s.maxKeys
}

type shape struct {
	data      []byte
	i         int // the next byte
	line      int // data[i]'s line, 1-based
	lineStart int // where that line starts
	block     []level
	flow      []flowLevel
	nodes     int
	err       *limitErr
	// The largest depth and keys of a mapping seen (the fuzz test checks
	// them against what the parser builds).
	maxDepth, maxKeys int
}

// level is an open block collection: its column (bytes from the start of
// the line), how deep the parser may nest it (see item) and, for a
// mapping, its keys so far.
type level struct {
	col   int
	seq   bool
	depth int
	keys  int
}

type flowLevel struct {
	mapping  bool
	implicit bool // the mapping of one key of "[a: 1]", until ',' or ']'
	keys     int
	entry    bool // an entry (a key) has begun since the last ','
}

// limitErr is a limit passed at an offset.
type limitErr struct {
	at  int
	msg string
}

// check scans s.data, leaving the first limit passed in s.err.
func (s *shape) check() {
	// A scenario file is UTF-8 text, and YAML allows no control character
	// but tab and the line ends (the parser reads a NUL as the end of the
	// file): refuse the first byte that is not, before anything reads on.
	bad, end := badUTF8(s.data), len(s.data)
	if bad >= 0 {
		end = bad
	}
	for i, c := range s.data[:end] {
		if c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			s.i, s.line = i, 1+bytes.Count(s.data[:i], []byte{'\n'})
			s.fail(i, "the control character %U is not valid in YAML: a scenario file is text (write it escaped in a double-quoted string, as \\u%04X)", rune(c), c)
			return
		}
	}
	if bad >= 0 {
		s.i, s.line = bad, 1+bytes.Count(s.data[:bad], []byte{'\n'})
		switch {
		case bytes.HasPrefix(s.data, []byte{0xff, 0xfe}) || bytes.HasPrefix(s.data, []byte{0xfe, 0xff}):
			s.fail(bad, "the file starts with a UTF-16 byte order mark: a scenario file is UTF-8 text; save it as UTF-8")
		default:
			s.fail(bad, "the byte 0x%02X is not valid UTF-8: a scenario file is UTF-8 text; save it as UTF-8 (or write the character escaped in a double-quoted string, as \\u00E9)", s.data[bad])
		}
		return
	}
	s.run()
}

// badUTF8 returns the offset of the first byte of data that is not valid
// UTF-8, or -1.
func badUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// problem is the limit passed, if any, with its place.
func (s *shape) problem() *Problem {
	if s.err == nil {
		return nil
	}
	start := s.lineStartOf(s.err.at)
	end := start
	for end < len(s.data) && s.data[end] != '\n' {
		end++
	}
	return &Problem{
		Offset: s.err.at, Line: s.lineOf(s.err.at),
		// The column in characters, as the parser's positions are.
		Col:    utf8.RuneCount(s.data[start:s.err.at]) + 1,
		Msg:    s.err.msg,
		Source: validText(bytes.TrimRight(s.data[start:end], "\r")),
	}
}

// validText is line as text, each byte that is not UTF-8 shown as U+FFFD
// (one character each, as the column counts them).
func validText(line []byte) string {
	if utf8.Valid(line) {
		return string(line)
	}
	var b strings.Builder
	for len(line) > 0 {
		r, n := utf8.DecodeRune(line)
		b.WriteRune(r) // utf8.RuneError for a bad byte, n == 1
		line = line[n:]
	}
	return b.String()
}

func (s *shape) fail(at int, format string, args ...any) {
	if s.err == nil {
		s.err = &limitErr{at: at, msg: fmt.Sprintf(format, args...)}
	}
}

// node counts a key or a list item.
func (s *shape) node(at int) {
	if s.nodes++; s.nodes > MaxNodes {
		s.fail(at, "more than %d keys and list items in the file: a scenario has a hundred or so; is this file generated by mistake?", MaxNodes)
	}
}

// deeper checks the depth after opening a level at.
func (s *shape) deeper(at int) {
	d := len(s.flow)
	if n := len(s.block); n > 0 {
		d += s.block[n-1].depth
	}
	s.depth(at, d)
}

// depth checks a depth d reached at.
func (s *shape) depth(at, d int) {
	s.maxDepth = max(s.maxDepth, d)
	if d > MaxDepth {
		s.fail(at, "values nested more than %d levels deep: a scenario nests about 5; is this file generated by mistake?", MaxDepth)
	}
}

// key counts one more key of a mapping that has *keys.
func (s *shape) key(at int, keys *int) {
	*keys++
	s.maxKeys = max(s.maxKeys, *keys)
	if *keys > MaxKeys {
		s.fail(at, "more than %d keys in one mapping: a scenario's mappings have at most a few dozen", MaxKeys)
	}
}

// item places a block key (seq false) or a "- " item at col: it closes
// the collections indented more, and continues the one at col or opens a
// new one.
//
// chained is an item that starts a line after a line left a value to come
// ("key:", "- ", "key: !tag"), and is indented no more than that line's
// item. YAML makes it a sibling, but goccy/go-yaml may make it that value,
// one level deeper, and the next such line deeper again ("0: !\n0: !\n...",
// "-\n0:\n-\n0:\n..."), whatever the indentation says: its collection is
// counted one level deeper each time.
func (s *shape) item(at, col int, seq, chained bool) {
	b := s.block
	var last *level // the collection closed last, the nearest to col
	deepest := 0    // the depth of the collections closed
	if len(b) > 0 {
		deepest = b[len(b)-1].depth
	}
	for len(b) > 0 && b[len(b)-1].col > col {
		last = &b[len(b)-1]
		b = b[:len(b)-1]
	}
	if n := len(b); n > 0 && b[n-1].col == col && b[n-1].seq && !seq {
		b = b[:n-1] // a key at a list's column: the list (a value written at its key's column) has ended
	}
	if n := len(b); n > 0 && b[n-1].col == col && b[n-1].seq == seq {
		if !seq {
			s.key(at, &b[n-1].keys)
		}
	} else {
		l := level{col: col, seq: seq, depth: 1}
		if len(b) > 0 {
			l.depth += b[len(b)-1].depth
		}
		if last != nil && last.seq == seq {
			// Indented less than the collection it follows, and more
			// than the one around it: the parser takes it for the next
			// item of the former. Count it so.
			l.keys = last.keys
		}
		b = append(b, l)
		if !seq {
			s.key(at, &b[len(b)-1].keys)
		}
	}
	if chained {
		// Inside what it follows, not beside it.
		b[len(b)-1].depth = max(b[len(b)-1].depth, deepest) + 1
	}
	s.block = b
	s.deeper(at)
	s.node(at)
}
