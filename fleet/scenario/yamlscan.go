package scenario

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

// run scans the file until its end or the first limit passed.
func (s *shape) run() {
	var (
		atStart    = true // the next non-blank character begins a node
		inPlain    = false
		afterValue = false // just after a quoted scalar, an alias or a flow collection: ':' is a key's
		tok        = -1    // offset where the node before a ':' began
		tokCol     = 0     // its column
		prevTok    = -1    // tok of the line before, for a ':' that starts a line
		prevTokCol = 0
		prop       = false // tok is where the node's anchor or tag begins
		prevPlain  = false // the line before ended in plain text
		// The column of the last key: the parser reads a line indented
		// more, after plain text, as more of that text, even from a '['
		// or '{'.
		lastKeyCol = -1
		// Brackets open in block plain text from a '[' or '{' that
		// starts a line (-1: none such), as they would be if the parser
		// read them as flow collections.
		textFlow   = -1
		explicit   = 0    // a block scalar's indentation indicator
		lineFirst  = true // no token yet on this line
		lineIndent = 0
		lineParent = -1 // column of the line's last key or "- " (a block scalar's parent)
		// Where plain text alone on its line began, and that line's
		// indentation, while the lines after go on with it.
		runTok, runCol, runIndent = -1, 0, 0
		newLine                   = true
		// The line before left a value to come (pending) after its item
		// at pendingCol; first is true until the line's first item.
		started, pending, first = false, false, false
		pendingCol              = 0
	)
	for s.i < len(s.data) && s.err == nil {
		inFlow := len(s.flow) > 0
		if newLine && !inFlow {
			newLine = false
			n, empty := s.indent()
			if empty {
				s.toEOL()
				if s.i < len(s.data) {
					s.newline()
				}
				newLine = true
				continue
			}
			if n == 0 {
				s.marker()
			}
			s.i += n
			pending, first = started && atStart, true
			pendingCol, started = lineParent, true
			if pendingCol < 0 {
				pendingCol = lineIndent
			}
			colon := s.byteAt(s.i) == ':' && blank(s.byteAt(s.i+1))
			if !((inPlain || prop) && lineParent < 0 && (n > runIndent || colon)) {
				runTok = -1 // this line does not go on with the text of the one before
			}
			lineIndent, lineParent = n, -1
			prevPlain, lineFirst = inPlain, true
			prevTok, prevTokCol, tok, prop = tok, tokCol, -1, false
			atStart, inPlain, afterValue = true, false, false
			if s.i >= len(s.data) { // a directive on the last line
				break
			}
		}
		newLine = false
		c := s.data[s.i]
		col := s.i - s.lineStart
		prevBlank := s.i == s.lineStart || blank(s.data[s.i-1])
		switch {
		case s.eol(s.i):
			s.newline()
			newLine = true
			continue
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
			continue
		case c == '#' && prevBlank:
			s.toEOL()
			continue
		}
		if inPlain {
			switch {
			case c == ':' && (blank(s.byteAt(s.i+1)) || inFlow && flowIndicator(s.byteAt(s.i+1))):
				inPlain = false
			case inFlow && flowIndicator(c):
				inPlain = false
			default:
				s.textBracket(c, &textFlow)
				s.i++
				continue
			}
		}
		// At a token. In a flow mapping, a node that begins an entry is
		// a key, with a ':' or without ("{a, b: 1}").
		if inFlow && atStart && c != ':' && c != ',' && c != ']' && c != '}' {
			if f := &s.flow[len(s.flow)-1]; f.mapping && !f.entry {
				f.entry = true
				s.key(s.i, &f.keys)
			}
		}
		switch {
		case c == ':' && (afterValue || blank(s.byteAt(s.i+1)) || inFlow && flowIndicator(s.byteAt(s.i+1))):
			chained := first && pending
			if tok < 0 {
				// A ':' that starts a line: the parser may take the line
				// before for its key, and that for the value of the line
				// before it.
				tok, tokCol, prop = s.nodeStart(tok, tokCol, prop, col)
				if !inFlow {
					chained = true
					if prevTok >= 0 {
						tok, tokCol = prevTok, prevTokCol
					}
				}
			}
			if !inFlow && runTok >= 0 && runTok < s.lineStart && (tok < s.lineStart || tokCol == lineIndent) {
				// Plain text alone on a line, going on over the lines
				// after it indented more: the parser may take them all
				// for one key.
				tok, tokCol, chained = runTok, runCol, true
			}
			if inFlow {
				if f := &s.flow[len(s.flow)-1]; f.mapping {
					if !f.entry { // ": 1", a key of nothing
						f.entry = true
						s.key(tok, &f.keys)
					}
				} else {
					// "[a: 1]": a mapping of one key inside the list.
					s.flow = append(s.flow, flowLevel{mapping: true, implicit: true, entry: true})
					s.deeper(tok)
					s.key(tok, &s.flow[len(s.flow)-1].keys)
				}
				s.node(tok)
			} else {
				s.item(tok, tokCol, false, chained && (tokCol <= pendingCol || tok < s.lineStart || tok == s.i))
				lineParent, first, textFlow = tokCol, false, -1
			}
			lastKeyCol = tokCol
			s.i++
			atStart, afterValue, tok, prevTok, prop = true, false, -1, -1, false
		case inFlow && (c == '[' || c == '{'):
			s.flow = append(s.flow, flowLevel{mapping: c == '{'})
			s.deeper(s.i)
			s.node(s.i)
			s.i++
			atStart, afterValue = true, false
		case inFlow && (c == ']' || c == '}') && s.closes(c):
			s.flow = s.flow[:len(s.flow)-1]
			s.i++
			atStart, afterValue = false, true
		case inFlow && c == ',':
			s.endImplicit()
			s.flow[len(s.flow)-1].entry = false
			s.node(s.i)
			s.i++
			atStart, afterValue = true, false
		case !atStart:
			// Text after a complete node (the parser will refuse it), or
			// a quote inside plain text: read on.
			s.i++
		case (c == '[' || c == '{') && !(lineFirst && prevPlain && col > lastKeyCol):
			tok, tokCol, prop = s.nodeStart(tok, tokCol, prop, col)
			s.flow = append(s.flow, flowLevel{mapping: c == '{'})
			s.deeper(s.i)
			s.i++
			atStart, afterValue = true, false
		case (c == '-' || c == '?') && blank(s.byteAt(s.i+1)) && !inFlow:
			// A list item, or an explicit key ("? ").
			s.item(s.i, col, c == '-', first && pending && col <= pendingCol)
			lineParent, first, textFlow = col, false, -1
			s.i++
			atStart, tok, prop = true, -1, false
		case (c == '"' || c == '\'') && (inFlow || !lineFirst || !prevPlain):
			// (At the start of a line after plain text, the parser may
			// read a quote as more of that text, and so does the scan.)
			tok, tokCol, prop = s.nodeStart(tok, tokCol, prop, col)
			s.quoted(c)
			atStart, afterValue = false, true
		case (c == '|' || c == '>') && !inFlow && s.blockHeader(&explicit):
			// Its lines are those indented more than its parent: the
			// line's key or item, else the collection it is in (the
			// parser wants even a file's top node indented). Taking the
			// largest guess ends it soonest: what follows is counted.
			parent := max(lineParent, lineIndent-1, 0)
			if n := len(s.block); n > 0 {
				parent = max(parent, s.block[n-1].col)
			}
			s.blockScalar(parent, explicit)
			newLine, atStart = true, false
		case c == '&' || c == '!':
			// An anchor or a tag: the node follows, and starts here (a
			// key's column is its tag's).
			if tok < 0 {
				tok, tokCol, prop = s.i, col, true
			}
			s.word(inFlow)
		case c == '*' && blank(s.byteAt(s.i+1)):
			// An alias of no name: the parser takes what follows for its
			// node, as after a tag.
			if tok < 0 {
				tok, tokCol, prop = s.i, col, true
			}
			s.i++
		case c == '*':
			tok, tokCol, prop = s.nodeStart(tok, tokCol, prop, col)
			s.word(inFlow)
			atStart, afterValue = false, true
		default:
			tok, tokCol, prop = s.nodeStart(tok, tokCol, prop, col)
			inPlain, atStart = true, false
			if !inFlow && (c == '[' || c == '{') {
				textFlow = max(textFlow, 0) // one that starts a line (see above)
			}
			s.textBracket(c, &textFlow)
			s.i++
		}
		if runTok < 0 && lineParent < 0 && tok >= s.lineStart && tokCol == lineIndent && !inFlow {
			runTok, runCol, runIndent = tok, tokCol, lineIndent
		}
		lineFirst = false
	}
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
