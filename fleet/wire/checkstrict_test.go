package wire_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

func TestCheckStrict(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		keys       []string // the outermost object's keys, when valid
		want       string   // "" = valid; else a substring of the error
		key        string   // the key given twice
	}{
		{"object", `{"id":"d1","version":"2","workers":["a","b"]}`, []string{"id", "version", "workers"}, "", ""},
		{"not an object", `["a","a"]`, nil, "", ""},
		{"same value twice is fine", `{"a":"x","b":"x"}`, []string{"a", "b"}, "", ""},
		{"nested keys apart", `{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, []string{"a", "b"}, "", ""},
		{"escaped key", `{"i\u0064":"d1"}`, []string{"id"}, "", ""},
		{"keys differ by case", `{"id":"a","ID":"b"}`, []string{"id", "ID"}, "", ""},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, []string{"a"}, "", ""},
		{"key inside a string", `{"a":"{\"a\":1}","b":1}`, []string{"a", "b"}, "", ""},
		{"wide object", `{` + wideKeys(40) + `}`, nil, "", ""},

		{"duplicate", `{"id":"d1","version":"2","version":"3"}`, nil, `field "version" given twice in one object (at byte 25)`, "version"},
		{"duplicate escaped", `{"id":"d1","i\u0064":"d2"}`, nil, `field "id" given twice`, "id"},
		{"duplicate nested", `{"a":[{"x":1,"y":2,"x":3}]}`, nil, `field "x" given twice`, "x"},
		{"duplicate in a wide object", `{` + wideKeys(40) + `,"k7":1}`, nil, `field "k7" given twice`, "k7"},
		{"invalid UTF-8", "{\"id\":\"d\xff1\"}", nil, "byte 8 (0xff) is not UTF-8", ""},
		{"invalid UTF-8 in a key", "{\"\xc3\":1}", nil, "byte 2 (0xc3) is not UTF-8", ""},
		{"lone low surrogate", `{"id":"d\udc001"}`, nil, `escape \udc00 at byte 8 is half a UTF-16 surrogate pair`, ""},
		{"lone high surrogate", `{"id":"d\ud800"}`, nil, `half a UTF-16 surrogate pair`, ""},
		{"high then not low", `{"id":"\ud800\u0041"}`, nil, `half a UTF-16 surrogate pair`, ""},
		{"not JSON", `{"id":`, nil, "unexpected end of JSON input", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := wire.CheckStrict([]byte(tc.text))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.keys != nil && !slices.Equal(keys, tc.keys) {
					t.Errorf("keys %q, want %q", keys, tc.keys)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var se *wire.StrictError
			if errors.As(err, &se) && se.Key != tc.key {
				t.Errorf("Key %q, want %q", se.Key, tc.key)
			}
		})
	}
}

// wideKeys is n keys "k0" to "k<n-1>", each with the value 1.
func wideKeys(n int) string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf(`"k%d":1`, i)
	}
	return strings.Join(ks, ",")
}

// FuzzCheckStrict: CheckStrict never panics; it accepts only UTF-8 JSON
// and agrees with a reference built on encoding/json's tokens about
// which texts hold a key twice.
func FuzzCheckStrict(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[{"x":1},{"x":1}]`, `{"i\u0064":1,"id":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := wire.CheckStrict(data)
		if err != nil {
			var se *wire.StrictError
			if errors.As(err, &se) && se.Key != "" && tokenDup(data) == "" {
				t.Fatalf("%q: refused for key %q twice; the reference finds none", data, se.Key)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("%q: accepted, not JSON", data)
		}
		if d := tokenDup(data); d != "" {
			t.Fatalf("%q: accepted with key %q twice", data, d)
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) == nil && top != nil && len(top) != len(keys) {
			t.Fatalf("%q: keys %q, the object has %d", data, keys, len(top))
		}
	})
}

// tokenDup returns a key some object in data holds twice, by
// encoding/json's tokens, or "".
func tokenDup(data []byte) string {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	type frame struct {
		obj     bool
		wantKey bool
		seen    map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return ""
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: v == '{', wantKey: true, seen: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.wantKey {
				if top.seen[v] {
					return v
				}
				top.seen[v] = true
				top.wantKey = false
				continue
			}
		}
		if top != nil && top.obj {
			top.wantKey = true
		}
	}
}
