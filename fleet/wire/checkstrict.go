package wire

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// StrictError is why CheckStrict refused a JSON text.
type StrictError struct {
	// Offset is the byte in the text where the problem is: the invalid
	// byte or escape, or the second occurrence of a key.
	Offset int
	// Key is the key an object holds twice; "" for an encoding problem.
	Key string
	// Reason says what is wrong and what would be valid.
	Reason string
}

func (e *StrictError) Error() string { return e.Reason }

// CheckStrict checks one JSON text for what encoding/json lets pass
// without a word:
//
//   - bytes that are not UTF-8, and \u escapes of a lone UTF-16 surrogate:
//     a decoder replaces them with U+FFFD, so an id read back is not the
//     id that was sent, and an answer goes to another name;
//   - an object that holds the same key twice (compared after unescaping,
//     exactly): a decoder keeps the last one, so two readers of the same
//     message can disagree on what it asked.
//
// A text that is not JSON at all is refused with encoding/json's syntax
// error. Otherwise it returns nil or a *StrictError, and the keys of the
// outermost value if that is an object, in order and unescaped, for a
// caller that matches field names exactly (encoding/json matches them
// ignoring case, so "ID" and "id" would fill one field). It reads data
// twice and allocates for the keys only.
func CheckStrict(data []byte) (keys []string, err error) {
	if !json.Valid(data) {
		var v struct{}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("not JSON") // not reached: Valid and Unmarshal agree
	}
	if !utf8.Valid(data) {
		at := invalidUTF8At(data)
		return nil, &StrictError{Offset: at, Reason: fmt.Sprintf("byte %d (0x%02x) is not UTF-8: JSON text must be UTF-8", at, data[at])}
	}
	var stack []strictFrame
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, strictFrame{obj: true, wantKey: true})
		case '[':
			stack = append(stack, strictFrame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := &stack[len(stack)-1]; top.obj {
				top.wantKey = true
			}
		case '"':
			end, escaped, serr := scanString(data, i)
			if serr != nil {
				return nil, serr
			}
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				top := &stack[n-1]
				top.wantKey = false
				key := string(data[i+1 : end])
				if escaped {
					_ = json.Unmarshal(data[i:end+1], &key) // valid: json.Valid said so
				}
				if top.has(key) {
					return nil, &StrictError{Offset: i, Key: key,
						Reason: fmt.Sprintf("key %s twice in one object (at byte %d): give each key once", clipQuote(key), i)}
				}
				top.add(key)
				if n == 1 {
					keys = append(keys, key)
				}
			}
			i = end
		}
	}
	return keys, nil
}

// strictFrame is an object or array CheckStrict is inside.
type strictFrame struct {
	obj     bool
	wantKey bool // the next string is a key
	keys    []string
	set     map[string]struct{} // once keys is long, so a wide object costs O(n)
}

const strictLinear = 16

func (f *strictFrame) has(k string) bool {
	if f.set != nil {
		_, ok := f.set[k]
		return ok
	}
	for _, x := range f.keys {
		if x == k {
			return true
		}
	}
	return false
}

func (f *strictFrame) add(k string) {
	if f.set == nil && len(f.keys) < strictLinear {
		f.keys = append(f.keys, k)
		return
	}
	if f.set == nil {
		f.set = make(map[string]struct{}, 2*strictLinear)
		for _, x := range f.keys {
			f.set[x] = struct{}{}
		}
		f.keys = nil
	}
	f.set[k] = struct{}{}
}

// scanString returns the index of the quote that closes the string
// opening at data[start], whether it holds escapes, and an error for an
// escape of a lone surrogate. data is valid JSON.
func scanString(data []byte, start int) (end int, escaped bool, err error) {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '"':
			return i, escaped, nil
		case '\\':
			escaped = true
			if data[i+1] != 'u' {
				i++
				continue
			}
			r := hex4(data[i+2 : i+6])
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return 0, false, loneSurrogate(data, i)
			case r >= 0xD800 && r <= 0xDBFF:
				if i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
					return 0, false, loneSurrogate(data, i)
				}
				if lo := hex4(data[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
					return 0, false, loneSurrogate(data, i)
				}
				i += 6
			}
			i += 5
		}
	}
	return len(data) - 1, escaped, nil // not reached on valid JSON
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func loneSurrogate(data []byte, at int) error {
	return &StrictError{Offset: at, Reason: fmt.Sprintf("escape %s at byte %d is half a UTF-16 surrogate pair: JSON strings must be Unicode text", data[at:at+6], at)}
}

// invalidUTF8At returns the offset of the first byte that is not part of
// a valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}
