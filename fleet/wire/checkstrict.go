package wire

import (
	"encoding/json"
	"fmt"
)

// StrictError is why CheckStrict or UnmarshalStrict refused a JSON text
// that encoding/json accepts.
type StrictError struct {
	// Offset is the byte in the text where the problem is: the invalid
	// byte or escape's string, or the second occurrence of a name.
	Offset int
	// Key is the name an object holds twice; "" for an encoding problem.
	Key string
	// Reason says where, what is wrong and what would be valid.
	Reason string
}

func (e *StrictError) Error() string { return e.Reason }

// CheckStrict checks one JSON text, of no particular shape, for what
// encoding/json lets pass without a word, by the rules UnmarshalStrict
// applies where it knows no Go type:
//
//   - strings that are not UTF-8, and \u escapes of a lone UTF-16
//     surrogate: a decoder replaces them with U+FFFD, so an id read back
//     is not the id that was sent, and an answer goes to another name;
//   - an object that holds the same name twice (compared after
//     unescaping, exactly): a decoder keeps the last one, so two readers
//     of the same message can disagree on what it asked.
//
// A text that is not JSON at all is refused with encoding/json's syntax
// error. Otherwise it returns nil or a *StrictError, and the names of the
// outermost value if that is an object, in order and unescaped, for a
// caller that matches field names exactly (encoding/json matches them
// ignoring case, so "ID" and "id" would fill one field).
func CheckStrict(data []byte) (keys []string, err error) {
	if !json.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("not JSON") // not reached: Valid and Unmarshal agree
	}
	s := strictScan{b: data, keys: &keys}
	s.path = s.buf[:0]
	if err := s.value(nil); err != nil {
		return nil, err
	}
	return keys, nil
}
