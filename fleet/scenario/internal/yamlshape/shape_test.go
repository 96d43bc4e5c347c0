package yamlshape

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheck: each limit, and text that is not UTF-8 or holds a control
// character, is refused at its first byte past it, by line and column;
// a file within them passes.
func TestCheck(t *testing.T) {
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "k%d: 1\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, text string
		line, col  int
		msg        string // "" = within the limits
	}{
		{"a scenario", "name: a\nfleet:\n  count: 10\ntimeline:\n  - at: 1s\n    deploy: {version: 2.0.0, workers: [w-1, w-2]}\n", 0, 0, ""},
		{"nesting", "a: " + strings.Repeat("[", MaxDepth+1), 1, 4 + MaxDepth - 1, "nested more than 64 levels"},
		{"keys in one mapping", keys(MaxKeys + 1), MaxKeys + 1, 1, "more than 1000 keys in one mapping"},
		{"keys and items in all", "a:\n" + strings.Repeat("- 1\n", MaxNodes), MaxNodes + 1, 1, "more than 50000 keys and list items"},
		{"not UTF-8", "a: 1\nb: caf\xe9\n", 2, 7, "the byte 0xE9 is not valid UTF-8"},
		{"a control character", "a: 1\nb: x\x01\n", 2, 5, "the control character U+0001"},
		{"UTF-16", "\xff\xfea\x00", 1, 1, "UTF-16 byte order mark"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Check([]byte(tc.text))
			if tc.msg == "" {
				if p != nil {
					t.Fatalf("refused: %+v", p)
				}
				return
			}
			if p == nil || !strings.Contains(p.Msg, tc.msg) || p.Line != tc.line || p.Col != tc.col {
				t.Fatalf("got %+v; want %q at %d:%d", p, tc.msg, tc.line, tc.col)
			}
		})
	}
}
