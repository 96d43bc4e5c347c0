package wire

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// The fast path. Every message of a run is encoded once and decoded once
// or twice, so at a hundred thousand workers encoding/json's reflection
// and garbage were a fifth of the process's CPU. Decode and Encode first
// try the canonical form this package writes: one flat object, compact
// or with plain whitespace, exact lower-case field names, each once,
// strings of printable ASCII (or valid UTF-8 when decoding) without
// escapes, whole numbers, and a body that is valid JSON. Anything else
// (an escape, a null, a field name in another case, a repeated field, a
// fraction, an unknown field) goes to encoding/json, which stays the
// reference: whatever the fast path accepts, encoding/json accepts with
// the same result, and what the fast path writes is byte for byte what
// encoding/json writes (FuzzFastDecode and FuzzFastEncode; unit tests
// cover what fuzzing does not reach: a body nested past encoding/json's
// limit, a body decoded into a value already filled). Errors therefore
// always come from encoding/json and read as they always did.

// scan reads one JSON value from b at i. Every method reports false for
// anything outside the canonical form; the caller then hands the whole
// payload to encoding/json.
type scan struct {
	b []byte
	i int
}

func (s *scan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// is consumes c (after whitespace) if it comes next.
func (s *scan) is(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *scan) end() bool {
	s.space()
	return s.i == len(s.b)
}

// strBytes reads a string without escapes or control characters, in valid
// UTF-8 (encoding/json replaces invalid bytes, so those are not ours).
func (s *scan) strBytes() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start, ascii := s.i+1, true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// digits reads a JSON integer without sign, fraction or exponent, right
// at s.i, that fits in max.
func (s *scan) digits(max uint64) (uint64, bool) {
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
		s.i++
	}
	switch digits := s.i - start; {
	case digits == 0, digits > 1 && s.b[start] == '0':
		return 0, false // not a number, or a leading zero (not JSON)
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false // a fraction does not go into an integer
		}
	}
	return n, true
}

// intNum reads a JSON integer within [min, max].
func (s *scan) intNum(min, max int64) (int64, bool) {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
		n, ok := s.digits(uint64(-(min + 1)) + 1)
		return -int64(n), ok // -int64(1<<63) is math.MinInt64, as it should be
	}
	n, ok := s.digits(uint64(max))
	return int64(n), ok
}

// int64Num reads a JSON integer for an int64 field, intField one for an
// int field (narrower on a 32-bit platform), uintNum one for a uint64.
func (s *scan) int64Num() (int64, bool) { return s.intNum(math.MinInt64, math.MaxInt64) }

func (s *scan) intField() (int, bool) {
	n, ok := s.intNum(math.MinInt, math.MaxInt)
	return int(n), ok
}

func (s *scan) uintNum() (uint64, bool) {
	s.space()
	return s.digits(math.MaxUint64)
}

// boolLit reads true or false.
func (s *scan) boolLit() (v, ok bool) {
	s.space()
	switch rest := s.b[s.i:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// maxRawDepth bounds how deeply a body the fast path takes may nest.
// encoding/json refuses nesting past 10,000 levels over the whole
// payload; no body of this protocol nests more than a few, so a deeper one
// is left to encoding/json to judge.
const maxRawDepth = 64

// raw reads any JSON value but null and returns its bytes, as
// json.RawMessage keeps them. It finds where the value ends (a comma,
// whitespace or the enclosing brace at its own depth); json.Valid then
// judges the value itself. An unterminated string (or one ending in a
// backslash) leaves s.i at or past the end, which rawEnd refuses.
func (s *scan) raw() ([]byte, bool) {
	s.space()
	start, depth := s.i, 0
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			if depth++; depth > maxRawDepth {
				return nil, false
			}
		case '}', ']':
			if depth == 0 {
				return s.rawEnd(start) // the brace of the object it is in
			}
			depth--
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.rawEnd(start)
			}
		}
	}
	return s.rawEnd(start)
}

// rawEnd ends raw: the value is b[start:i], and something must follow it
// (the object it is in was never closed otherwise).
func (s *scan) rawEnd(start int) ([]byte, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	v := s.b[start:s.i]
	if len(v) == 0 || string(v) == "null" || !json.Valid(v) {
		return nil, false
	}
	return v, true
}

// object reads a flat object, handing each field's name to field, which
// reads the value. A name seen twice is not the canonical form.
func (s *scan) object(field func(name []byte) bool) bool {
	if !s.is('{') {
		return false
	}
	if s.is('}') {
		return true
	}
	for {
		name, ok := s.strBytes()
		if !ok || !s.is(':') || !field(name) {
			return false
		}
		if s.is(',') {
			continue
		}
		return s.is('}')
	}
}

// once marks bit in seen and reports whether it was clear.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// decodeFast decodes the canonical form of an envelope into env, as
// strictUnmarshal would; false leaves the payload to strictUnmarshal, and
// env with whatever was read before the fast path gave up, for the caller
// to reset.
func decodeFast(payload []byte, env *Envelope) bool {
	s := scan{b: payload}
	var seen uint32
	ok := s.object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "v":
			env.V, ok = s.intField()
			return ok && once(&seen, 1<<0)
		case "id":
			env.ID, ok = s.strCopy()
			return ok && once(&seen, 1<<1)
		case "kind":
			var v []byte
			v, ok = s.strBytes()
			env.Kind = internKind(v)
			return ok && once(&seen, 1<<2)
		case "ref":
			env.Ref, ok = s.strCopy()
			return ok && once(&seen, 1<<3)
		case "key":
			env.Key, ok = s.strCopy()
			return ok && once(&seen, 1<<4)
		case "seq":
			env.Seq, ok = s.uintNum()
			return ok && once(&seen, 1<<5)
		case "ttl_ms":
			env.TTLMs, ok = s.int64Num()
			return ok && once(&seen, 1<<6)
		case "attempt":
			env.Attempt, ok = s.intField()
			return ok && once(&seen, 1<<7)
		case "sent_ms":
			env.SentMs, ok = s.int64Num()
			return ok && once(&seen, 1<<8)
		case "result":
			var v []byte
			v, ok = s.strBytes()
			env.Result = internResult(v)
			return ok && once(&seen, 1<<9)
		case "retry_after_ms":
			env.RetryAfterMs, ok = s.int64Num()
			return ok && once(&seen, 1<<10)
		case "reason":
			env.Reason, ok = s.strCopy()
			return ok && once(&seen, 1<<11)
		case "body":
			var v []byte
			v, ok = s.raw()
			env.Body = append(json.RawMessage(nil), v...)
			return ok && once(&seen, 1<<12)
		}
		return false
	})
	return ok && s.end()
}

// strCopy reads a string and copies it.
func (s *scan) strCopy() (string, bool) {
	v, ok := s.strBytes()
	return string(v), ok
}

// internKind returns the constant for a known kind's name without
// allocating, and a copy of any other.
func internKind(v []byte) Kind {
	for _, k := range knownKinds {
		if string(v) == string(k) {
			return k
		}
	}
	return Kind(v)
}

var knownKinds = [...]Kind{KindHeartbeat, KindAck, KindRequest, KindTelemetry, KindReply, KindConfig, KindFirmware, KindJob, KindPing}

// internResult is internKind for results.
func internResult(v []byte) Result {
	for _, r := range [...]Result{ResultOK, ResultFull, ResultReject} {
		if string(v) == string(r) {
			return r
		}
	}
	return Result(v)
}

// decodeBodyFast decodes the canonical form of the bodies that travel most
// into v, as strictUnmarshal would; false leaves them to strictUnmarshal.
func decodeBodyFast(b []byte, v any) bool {
	s := scan{b: b}
	var seen uint32
	var ok bool
	switch v := v.(type) {
	case *Heartbeat:
		hb := *v // encoding/json sets only the fields present
		ok = s.object(func(name []byte) bool {
			var ok bool
			switch string(name) {
			case "version":
				hb.Version, ok = s.strCopy()
				return ok && once(&seen, 1<<0)
			case "mailbox_depth":
				hb.MailboxDepth, ok = s.intField()
				return ok && once(&seen, 1<<1)
			case "busy":
				hb.Busy, ok = s.boolLit()
				return ok && once(&seen, 1<<2)
			}
			return false
		})
		if ok && s.end() {
			*v = hb
			return true
		}
	case *Apply:
		return oneString(b, "version", &v.Version)
	case *Request:
		return oneString(b, "what", &v.What)
	}
	return false
}

// oneString decodes the canonical form of an object with one string
// field, name, into *dst; false leaves *dst as it was.
func oneString(b []byte, name string, dst *string) bool {
	s := scan{b: b}
	val, seen := *dst, false
	ok := s.object(func(n []byte) bool {
		if string(n) != name || seen {
			return false
		}
		seen = true
		var ok bool
		val, ok = s.strCopy()
		return ok
	})
	if ok && s.end() {
		*dst = val
		return true
	}
	return false
}

// plain reports whether encoding/json writes v as it is between quotes:
// printable ASCII with nothing it escapes.
func plain(v string) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c < 0x20, c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// compactRaw reports whether encoding/json writes the valid JSON v as it
// is: no whitespace to drop, nothing to escape (it escapes <, > and & and
// rewrites U+2028 and U+2029, so non-ASCII goes the slow way too).
func compactRaw(v []byte) bool {
	for _, c := range v {
		switch {
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '<', c == '>', c == '&', c >= 0x7f:
			return false
		}
	}
	return json.Valid(v)
}

// fieldWriter appends "name":value pairs to an object.
type fieldWriter struct {
	b  []byte
	ok bool // every string so far was plain
}

func (w *fieldWriter) name(n string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, n...)
	w.b = append(w.b, '"', ':')
}

func (w *fieldWriter) str(n, v string) {
	w.ok = w.ok && plain(v)
	w.name(n)
	w.b = append(w.b, '"')
	w.b = append(w.b, v...)
	w.b = append(w.b, '"')
}

func (w *fieldWriter) int(n string, v int64) {
	w.name(n)
	w.b = appendInt(w.b, v)
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		return appendUint(b, uint64(-v))
	}
	return appendUint(b, uint64(v))
}

func appendUint(b []byte, v uint64) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// encodeFast writes env as json.Marshal does, or reports false for a
// string or body that json.Marshal would escape or compact.
func encodeFast(env *Envelope) ([]byte, bool) {
	w := fieldWriter{b: make([]byte, 1, 96+len(env.Body)+len(env.ID)+len(env.Reason)), ok: true}
	w.b[0] = '{'
	w.int("v", int64(env.V))
	if env.ID != "" {
		w.str("id", env.ID)
	}
	w.str("kind", string(env.Kind))
	if env.Ref != "" {
		w.str("ref", env.Ref)
	}
	if env.Key != "" {
		w.str("key", env.Key)
	}
	if env.Seq != 0 {
		w.name("seq")
		w.b = appendUint(w.b, env.Seq)
	}
	if env.TTLMs != 0 {
		w.int("ttl_ms", env.TTLMs)
	}
	if env.Attempt != 0 {
		w.int("attempt", int64(env.Attempt))
	}
	if env.SentMs != 0 {
		w.int("sent_ms", env.SentMs)
	}
	if env.Result != "" {
		w.str("result", string(env.Result))
	}
	if env.RetryAfterMs != 0 {
		w.int("retry_after_ms", env.RetryAfterMs)
	}
	if env.Reason != "" {
		w.str("reason", env.Reason)
	}
	if len(env.Body) > 0 {
		if !compactRaw(env.Body) {
			return nil, false
		}
		w.name("body")
		w.b = append(w.b, env.Body...)
	}
	return append(w.b, '}'), w.ok
}

// bodyFast writes the bodies that travel most as json.Marshal does, or
// reports false.
func bodyFast(v any) ([]byte, bool) {
	w := fieldWriter{b: make([]byte, 1, 64), ok: true}
	w.b[0] = '{'
	switch v := v.(type) {
	case Heartbeat:
		if v.Version != "" {
			w.str("version", v.Version)
		}
		w.int("mailbox_depth", int64(v.MailboxDepth))
		if v.Busy {
			w.name("busy")
			w.b = append(w.b, "true"...)
		}
	case Apply:
		w.str("version", v.Version)
	case Request:
		w.str("what", v.What)
		if v.Done != "" {
			w.str("done", v.Done)
		}
	default:
		return nil, false
	}
	return append(w.b, '}'), w.ok
}
