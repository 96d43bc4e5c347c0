package yamlshape

// This file is checkShape's reader of YAML's lexical structure: lines,
// indentation, flow brackets, quotes and block scalars, as far as the
// limits need.

// lineStartOf and lineOf place an offset at or before s.i.
func (s *shape) lineStartOf(at int) int {
	for at > 0 && !s.eol(at-1) {
		at--
	}
	return at
}

func (s *shape) lineOf(at int) int {
	n := s.line
	for i := at; i < s.i && i < len(s.data); i++ {
		if s.eol(i) {
			n--
		}
	}
	return n
}

func (s *shape) byteAt(i int) byte {
	if i < len(s.data) {
		return s.data[i]
	}
	return '\n' // the end of the file ends a line
}

// blank is white space, a line's end or the end of the file (which the
// parser takes a NUL for).
func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0 }

// eol reports whether data[i] ends a line: a '\n', or a '\r' alone, as
// the parser reads it (in "\r\n" the '\n' does).
func (s *shape) eol(i int) bool {
	switch s.data[i] {
	case '\n':
		return true
	case '\r':
		return i+1 == len(s.data) || s.data[i+1] != '\n'
	}
	return false
}

func flowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

// newline moves past the line's end at s.i.
func (s *shape) newline() {
	s.i++
	s.line++
	s.lineStart = s.i
}

// toEOL moves to the end of the line (or of the file).
func (s *shape) toEOL() {
	for s.i < len(s.data) && !s.eol(s.i) {
		s.i++
	}
}

// indent counts the spaces at s.i, and reports whether the line holds
// nothing else (white space only, or a comment).
func (s *shape) indent() (n int, empty bool) {
	for s.byteAt(s.i+n) == ' ' {
		n++
	}
	j := s.i + n
	for j < len(s.data) && (s.data[j] == ' ' || s.data[j] == '\t' || s.data[j] == '\r' && !s.eol(j)) {
		j++
	}
	return n, j == len(s.data) || s.eol(j) || s.data[j] == '#'
}

// scan is run's reading position in the file's structure, between one
// token and the next.
type scan struct {
	*shape
	atStart    bool // the next non-blank character begins a node
	inPlain    bool
	afterValue bool // just after a quoted scalar, an alias or a flow collection: ':' is a key's
	tok        int  // offset where the node before a ':' began
	tokCol     int  // its column
	prevTok    int  // tok of the line before, for a ':' that starts a line
	prevTokCol int
	prop       bool // tok is where the node's anchor or tag begins
	prevPlain  bool // the line before ended in plain text
	// The column of the last key: the parser reads a line indented
	// more, after plain text, as more of that text, even from a '['
	// or '{'.
	lastKeyCol int
	// Brackets open in block plain text from a '[' or '{' that starts a
	// line (-1: none such), as they would be if the parser read them as
	// flow collections.
	textFlow   int
	explicit   int  // a block scalar's indentation indicator
	lineFirst  bool // no token yet on this line
	lineIndent int
	lineParent int // column of the line's last key or "- " (a block scalar's parent)
	// Where plain text alone on its line began, and that line's
	// indentation, while the lines after go on with it.
	runTok, runCol, runIndent int
	newLine                   bool
	// The line before left a value to come (pending) after its item at
	// pendingCol; first is true until the line's first item.
	started, pending, first bool
	pendingCol              int
}

// run scans the file until its end or the first limit passed.
func (s *shape) run() {
	sc := &scan{
		shape:      s,
		atStart:    true,
		tok:        -1,
		prevTok:    -1,
		lastKeyCol: -1,
		textFlow:   -1,
		lineFirst:  true,
		lineParent: -1,
		runTok:     -1,
		newLine:    true,
	}
	for s.i < len(s.data) && s.err == nil {
		sc.step()
	}
}

// step reads on from s.i: past a line's indentation, white space or a
// comment, through plain text, or one token.
func (s *scan) step() {
	inFlow := len(s.flow) > 0
	if s.newLine && !inFlow {
		s.newLine = false
		if !s.beginLine() {
			return
		}
	}
	s.newLine = false
	c := s.data[s.i]
	col := s.i - s.lineStart
	prevBlank := s.i == s.lineStart || blank(s.data[s.i-1])
	switch {
	case s.eol(s.i):
		s.newline()
		s.newLine = true
		return
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
		return
	case c == '#' && prevBlank:
		s.toEOL()
		return
	}
	if s.inPlain && s.plain(c, inFlow) {
		return
	}
	s.token(c, col, inFlow)
	if s.runTok < 0 && s.lineParent < 0 && s.tok >= s.lineStart && s.tokCol == s.lineIndent && !inFlow {
		s.runTok, s.runCol, s.runIndent = s.tok, s.tokCol, s.lineIndent
	}
	s.lineFirst = false
}

// beginLine moves past the indentation of a line in block context, and
// reports whether a token follows on it: false past an empty line, or
// a directive on the last line.
func (s *scan) beginLine() bool {
	n, empty := s.indent()
	if empty {
		s.toEOL()
		if s.i < len(s.data) {
			s.newline()
		}
		s.newLine = true
		return false
	}
	if n == 0 {
		s.marker()
	}
	s.i += n
	s.pending, s.first = s.started && s.atStart, true
	s.pendingCol, s.started = s.lineParent, true
	if s.pendingCol < 0 {
		s.pendingCol = s.lineIndent
	}
	colon := s.byteAt(s.i) == ':' && blank(s.byteAt(s.i+1))
	if !((s.inPlain || s.prop) && s.lineParent < 0 && (n > s.runIndent || colon)) {
		s.runTok = -1 // this line does not go on with the text of the one before
	}
	s.lineIndent, s.lineParent = n, -1
	s.prevPlain, s.lineFirst = s.inPlain, true
	s.prevTok, s.prevTokCol, s.tok, s.prop = s.tok, s.tokCol, -1, false
	s.atStart, s.inPlain, s.afterValue = true, false, false
	return s.i < len(s.data)
}

// plain reads c inside plain text, and reports whether it is more of
// that text (false: a ':' or flow indicator that ends it).
func (s *scan) plain(c byte, inFlow bool) bool {
	switch {
	case c == ':' && (blank(s.byteAt(s.i+1)) || inFlow && flowIndicator(s.byteAt(s.i+1))):
		s.inPlain = false
	case inFlow && flowIndicator(c):
		s.inPlain = false
	default:
		s.textBracket(c, &s.textFlow)
		s.i++
		return true
	}
	return false
}

// token reads the token c at s.i, at column col.
func (s *scan) token(c byte, col int, inFlow bool) {
	// In a flow mapping, a node that begins an entry is a key, with a
	// ':' or without ("{a, b: 1}").
	if inFlow && s.atStart && c != ':' && c != ',' && c != ']' && c != '}' {
		if f := &s.flow[len(s.flow)-1]; f.mapping && !f.entry {
			f.entry = true
			s.key(s.i, &f.keys)
		}
	}
	switch {
	case c == ':' && (s.afterValue || blank(s.byteAt(s.i+1)) || inFlow && flowIndicator(s.byteAt(s.i+1))):
		s.colon(col, inFlow)
	case inFlow && s.flowPunct(c):
	case !s.atStart:
		// Text after a complete node (the parser will refuse it), or a
		// quote inside plain text: read on.
		s.i++
	default:
		s.nodeToken(c, col, inFlow)
	}
}

// colon reads a ':' that ends a key: in block context it makes the key
// an item of the mapping at the key's column.
func (s *scan) colon(col int, inFlow bool) {
	chained := s.first && s.pending
	if s.tok < 0 {
		// A ':' that starts a line: the parser may take the line before
		// for its key, and that for the value of the line before it.
		s.tok, s.tokCol, s.prop = s.nodeStart(s.tok, s.tokCol, s.prop, col)
		if !inFlow {
			chained = true
			if s.prevTok >= 0 {
				s.tok, s.tokCol = s.prevTok, s.prevTokCol
			}
		}
	}
	if !inFlow && s.runTok >= 0 && s.runTok < s.lineStart && (s.tok < s.lineStart || s.tokCol == s.lineIndent) {
		// Plain text alone on a line, going on over the lines after it
		// indented more: the parser may take them all for one key.
		s.tok, s.tokCol, chained = s.runTok, s.runCol, true
	}
	if inFlow {
		if f := &s.flow[len(s.flow)-1]; f.mapping {
			if !f.entry { // ": 1", a key of nothing
				f.entry = true
				s.key(s.tok, &f.keys)
			}
		} else {
			// "[a: 1]": a mapping of one key inside the list.
			s.flow = append(s.flow, flowLevel{mapping: true, implicit: true, entry: true})
			s.deeper(s.tok)
			s.key(s.tok, &s.flow[len(s.flow)-1].keys)
		}
		s.node(s.tok)
	} else {
		s.item(s.tok, s.tokCol, false, chained && (s.tokCol <= s.pendingCol || s.tok < s.lineStart || s.tok == s.i))
		s.lineParent, s.first, s.textFlow = s.tokCol, false, -1
	}
	s.lastKeyCol = s.tokCol
	s.i++
	s.atStart, s.afterValue, s.tok, s.prevTok, s.prop = true, false, -1, -1, false
}

// flowPunct reads a flow collection's bracket or ',' inside one, and
// reports whether c was one (a bracket that does not close the innermost
// collection is text).
func (s *scan) flowPunct(c byte) bool {
	switch {
	case c == '[' || c == '{':
		s.flow = append(s.flow, flowLevel{mapping: c == '{'})
		s.deeper(s.i)
		s.node(s.i)
		s.i++
		s.atStart, s.afterValue = true, false
	case (c == ']' || c == '}') && s.closes(c):
		s.flow = s.flow[:len(s.flow)-1]
		s.i++
		s.atStart, s.afterValue = false, true
	case c == ',':
		s.endImplicit()
		s.flow[len(s.flow)-1].entry = false
		s.node(s.i)
		s.i++
		s.atStart, s.afterValue = true, false
	default:
		return false
	}
	return true
}

// nodeToken reads the token that begins a node: a collection, an item or
// explicit key, a scalar, an anchor, tag or alias.
func (s *scan) nodeToken(c byte, col int, inFlow bool) {
	switch {
	case (c == '[' || c == '{') && !(s.lineFirst && s.prevPlain && col > s.lastKeyCol):
		s.tok, s.tokCol, s.prop = s.nodeStart(s.tok, s.tokCol, s.prop, col)
		s.flow = append(s.flow, flowLevel{mapping: c == '{'})
		s.deeper(s.i)
		s.i++
		s.atStart, s.afterValue = true, false
	case (c == '-' || c == '?') && blank(s.byteAt(s.i+1)) && !inFlow:
		// A list item, or an explicit key ("? ").
		s.item(s.i, col, c == '-', s.first && s.pending && col <= s.pendingCol)
		s.lineParent, s.first, s.textFlow = col, false, -1
		s.i++
		s.atStart, s.tok, s.prop = true, -1, false
	case (c == '"' || c == '\'') && (inFlow || !s.lineFirst || !s.prevPlain):
		// (At the start of a line after plain text, the parser may read
		// a quote as more of that text, and so does the scan.)
		s.tok, s.tokCol, s.prop = s.nodeStart(s.tok, s.tokCol, s.prop, col)
		s.quoted(c)
		s.atStart, s.afterValue = false, true
	case (c == '|' || c == '>') && !inFlow && s.blockHeader(&s.explicit):
		s.blockBody()
	case c == '&' || c == '!':
		// An anchor or a tag: the node follows, and starts here (a key's
		// column is its tag's).
		if s.tok < 0 {
			s.tok, s.tokCol, s.prop = s.i, col, true
		}
		s.word(inFlow)
	case c == '*' && blank(s.byteAt(s.i+1)):
		// An alias of no name: the parser takes what follows for its
		// node, as after a tag.
		if s.tok < 0 {
			s.tok, s.tokCol, s.prop = s.i, col, true
		}
		s.i++
	case c == '*':
		s.tok, s.tokCol, s.prop = s.nodeStart(s.tok, s.tokCol, s.prop, col)
		s.word(inFlow)
		s.atStart, s.afterValue = false, true
	default:
		s.tok, s.tokCol, s.prop = s.nodeStart(s.tok, s.tokCol, s.prop, col)
		s.inPlain, s.atStart = true, false
		if !inFlow && (c == '[' || c == '{') {
			s.textFlow = max(s.textFlow, 0) // one that starts a line (see textFlow)
		}
		s.textBracket(c, &s.textFlow)
		s.i++
	}
}

// blockBody skips a block scalar's lines after its header. Its lines are
// those indented more than its parent: the line's key or item, else the
// collection it is in (the parser wants even a file's top node
// indented). Taking the largest guess ends it soonest: what follows is
// counted.
func (s *scan) blockBody() {
	parent := max(s.lineParent, s.lineIndent-1, 0)
	if n := len(s.block); n > 0 {
		parent = max(parent, s.block[n-1].col)
	}
	s.blockScalar(parent, s.explicit)
	s.newLine, s.atStart = true, false
}

// textBracket counts a bracket c in block plain text as the flow
// collection it would open or close: a '[' or '{' that starts a line
// after plain text is more of that text when the line is indented more
// than the last key, and the scan reads it so; but should the parser read
// it as a collection, its nesting is counted here.
func (s *shape) textBracket(c byte, open *int) {
	if *open < 0 {
		return
	}
	switch c {
	case '[', '{':
		*open++
		d := *open
		if n := len(s.block); n > 0 {
			d += s.block[n-1].depth
		}
		s.depth(s.i, d)
	case ']', '}':
		*open = max(*open-1, 0)
	}
}

// nodeStart is where a node that begins at col begins: at its anchor or
// tag if prop says tok is one.
func (s *shape) nodeStart(tok, tokCol int, prop bool, col int) (int, int, bool) {
	if prop && tok >= s.lineStart {
		return tok, tokCol, false
	}
	return s.i, col, false
}

// closes reports whether c closes the innermost flow collection (after
// the mapping of one key of "[a: 1]", which it ends): the parser reads a
// '}' in a list, or a ']' in a mapping, as text.
func (s *shape) closes(c byte) bool {
	if c == ']' {
		s.endImplicit()
	}
	return s.flow[len(s.flow)-1].mapping == (c == '}')
}

// endImplicit closes the mapping of one key of "[a: 1]" at its end.
func (s *shape) endImplicit() {
	if n := len(s.flow); n > 0 && s.flow[n-1].implicit {
		s.flow = s.flow[:n-1]
	}
}

// marker skips a directive line to its end, or a document marker at the
// start of a line, as the parser reads them ("---" before a blank, "..."
// before anything but a dot). The collections open stay open: a second
// document is refused after parsing, and until then counting its keys
// with the first's only counts more.
func (s *shape) marker() {
	rest := s.data[s.i:]
	switch {
	case len(rest) > 0 && rest[0] == '%':
		s.toEOL()
	case len(rest) >= 3 && string(rest[:3]) == "---" && blank(s.byteAt(s.i+3)),
		len(rest) >= 3 && string(rest[:3]) == "..." && (len(rest) == 3 || rest[3] != '.'):
		s.i += 3
	}
}

// word skips an anchor, alias or tag name, up to a ':' that may be a
// key's.
func (s *shape) word(inFlow bool) {
	s.i++
	for s.i < len(s.data) && !blank(s.data[s.i]) && !(inFlow && flowIndicator(s.data[s.i])) &&
		!(s.data[s.i] == ':' && blank(s.byteAt(s.i+1))) {
		s.i++
	}
}

// quoted skips a quoted scalar starting at s.i, to its closing quote:
// the parser ends it there whatever the lines between.
func (s *shape) quoted(q byte) {
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case q == '"' && c == '\\':
			s.i = min(s.i+2, len(s.data))
			continue
		case c == q && q == '\'' && s.byteAt(s.i+1) == '\'':
			s.i += 2
			continue
		case c == q:
			s.i++
			return
		case s.eol(s.i):
			s.newline()
			continue
		}
		s.i++
	}
}

// blockHeader reports whether s.i starts a block scalar's header ("|",
// ">-", "|2+" ...), and moves past it to the end of its line. explicit is
// set to its indentation indicator (0: none).
func (s *shape) blockHeader(explicit *int) bool {
	j := s.i + 1
	*explicit = 0
	for j < len(s.data) && (s.data[j] >= '0' && s.data[j] <= '9' || s.data[j] == '+' || s.data[j] == '-') {
		if d := s.data[j]; d >= '1' && d <= '9' {
			*explicit = int(d - '0')
		}
		j++
	}
	if !blank(s.byteAt(j)) {
		return false
	}
	s.i = j
	s.toEOL()
	return true
}

// blockScalar skips a block scalar's lines, from the end of its
// header: the lines indented as its first line, which must be indented
// more than its parent, and the empty lines among them. It stops at the
// start of the first line that is not part of it.
func (s *shape) blockScalar(parent, explicit int) {
	indent := -1
	if explicit > 0 {
		// Its lines are indented by that much more than its parent: a
		// line indented less ends it.
		indent = parent + explicit
	}
	for s.i < len(s.data) {
		s.newline() // the end of the line before
		n, empty := s.indent()
		if empty && s.byteAt(s.i+n) != '#' || empty && indent >= 0 && n >= indent {
			s.toEOL()
			continue
		}
		if indent < 0 {
			if n <= parent {
				return
			}
			indent = n
		}
		if n < indent {
			return
		}
		s.toEOL()
	}
}
