package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/expect"
)

const minimal = "name: minimal\nduration: 1m\nfleet:\n  count: 10\n"

// repeat builds a file of n lines made by line(i).
func repeat(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
	}
	return b.String()
}

// nestedBlock is n mappings, each the only key of the one above.
func nestedBlock(n int) string {
	return repeat(n, func(i int) string { return strings.Repeat(" ", i) + "k:\n" })
}

// TestLimitsRefuseBeforeParsing: a file past a limit of nesting or keys
// is refused with the place and the limit, quickly, whatever its size (the
// parser would take minutes and gigabytes on these, or overflow its
// stack). Each case fails without the limit: the parse does not return
// within the test's time, or returns other errors.
func TestLimitsRefuseBeforeParsing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		line, col int
		want      string
	}{
		{"block nesting", nestedBlock(2000), MaxDepth + 1, MaxDepth + 1, "nested more than 64 levels"},
		{"list items on one line", strings.Repeat("- ", 500_000), 1, 2*MaxDepth + 1, "nested more than 64 levels"},
		{"flow brackets", "a: " + strings.Repeat("[", 1<<20), 1, 4 + MaxDepth - 1, "nested more than 64 levels"},
		{"flow mappings", "a: " + strings.Repeat("{b: ", 1<<18), 1, 4 + 4*(MaxDepth-1), "nested more than 64 levels"},
		{"keys of one mapping", repeat(1_000_000, func(i int) string { return fmt.Sprintf("k%d: 1\n", i) }), MaxKeys + 1, 1, "more than 1000 keys in one mapping"},
		{"keys of a nested mapping", "fleet:\n" + repeat(100_000, func(i int) string { return fmt.Sprintf("  k%d: 1\n", i) }), MaxKeys + 2, 3, "more than 1000 keys in one mapping"},
		{"keys of a flow mapping", "a: {" + repeat(100_000, func(i int) string { return fmt.Sprintf("k%06d: 1, ", i) }), 1, 5 + 12*MaxKeys, "more than 1000 keys in one mapping"},
		{"list items", "timeline:\n" + repeat(100_000, func(int) string { return "- {a: 1}\n" }), MaxNodes/2 + 1, 4, "more than 50000 keys and list items"},
		{"keys after a quote that the parser reads as text", "a: x\n  \"\nb: " + strings.Repeat("[", 100) + "\nc: \"\n", 3, 4 + MaxDepth - 1, "nested more than 64 levels"},
		{"keys after a block scalar", "a: |\n  text\n" + nestedBlock(100), MaxDepth + 3, MaxDepth + 1, "nested more than 64 levels"},
		{"after a byte order mark", "\ufeff" + nestedBlock(100), MaxDepth + 1, MaxDepth + 1, "nested more than 64 levels"},
		{"a NUL", minimal + "seed: 1\x00\n", 5, 8, `the control character U+0000 is not valid in YAML`},
		{"an escape in a comment", minimal + "# \x1b[31m\n", 5, 3, `the control character U+001B is not valid in YAML`},
		{"a byte that is not UTF-8", minimal + "description: caf\xe9 au lait\n", 5, 17, "the byte 0xE9 is not valid UTF-8: a scenario file is UTF-8 text"},
		{"a byte that is not UTF-8 after UTF-8", minimal + "description: \u00e9t\u00e9 \xc3(\n", 5, 18, "the byte 0xC3 is not valid UTF-8"},
		{"a control character before a bad byte", minimal + "# \x1b\xff\n", 5, 3, `the control character U+001B is not valid in YAML`},
		{"UTF-16", "\xff\xfen\x00a\x00m\x00e\x00", 1, 1, "the file starts with a UTF-16 byte order mark: a scenario file is UTF-8 text; save it as UTF-8"},
		{"an empty value chained", repeat(1000, func(int) string { return "0: !\n" }), MaxDepth + 1, 1, "nested more than 64 levels"},
		{"empty items chained", repeat(1000, func(int) string { return "-\n0:\n" }), 44, 1, "nested more than 64 levels"},
		{"after a line's end alone", repeat(1000, func(i int) string { return strings.Repeat(" ", i) + "k:\r" }), MaxDepth + 1, MaxDepth + 1, "nested more than 64 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("hostile.yaml", []byte(tc.data))
			took := time.Since(start)
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("err = %.300v; want one error", err)
			}
			e := es[0]
			if e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Msg, tc.want) {
				t.Errorf("error at %d:%d %q; want at %d:%d, saying %q", e.Line, e.Col, e.Msg, tc.line, tc.col, tc.want)
			}
			if msg := err.Error(); len(msg) > 1000 {
				t.Errorf("the message is %d bytes long (its source line is not cut short)", len(msg))
			}
			// Milliseconds in fact; the bound is loose for a busy machine.
			if took > 5*time.Second {
				t.Errorf("refused after %v", took)
			}
		})
	}
}

// TestLimitsCountOnlyStructure: what the parser reads as text (quoted
// scalars, block scalars, comments) and keys of different mappings do not
// count towards the limits, so that a real scenario never meets them.
func TestLimitsCountOnlyStructure(t *testing.T) {
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	for _, tc := range []struct {
		name string
		data string
	}{
		{"brackets in a double-quoted description", minimal + "description: \"" + deep + "\"\n"},
		{"brackets in a single-quoted description", minimal + "description: 'it''s " + deep + "'\n"},
		{"a multi-line quoted description", minimal + "description: \"line\n  " + deep + "\n  end\"\n"},
		{"keys and nesting in a block scalar", minimal + "description: |\n" + repeat(2*MaxKeys, func(i int) string { return fmt.Sprintf("  k%d: %s\n", i, deep) }) + "seed: 3\n"},
		{"a folded block scalar with indentation", minimal + "description: >-\n" + repeat(200, func(i int) string { return strings.Repeat(" ", i+2) + "x:\n" })},
		{"comments", minimal + repeat(2*MaxKeys, func(i int) string { return fmt.Sprintf("# k%d: %s\n", i, deep) }) + "seed: 3 # " + deep + "\n"},
		{"brackets in plain text", minimal + "description: see [a] and {b} " + deep + "\n"},
		{"the byte order mark", "\ufeff" + minimal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("real.yaml", []byte(tc.data)); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
	// Keys of many mappings: refused for being unknown, not for their number.
	many := repeat(3, func(i int) string {
		return fmt.Sprintf("m%d:\n", i) + repeat(MaxKeys, func(j int) string { return fmt.Sprintf("  k%d: 1\n", j) })
	})
	if _, err := Parse("many.yaml", []byte(many)); err == nil || strings.Contains(err.Error(), "more than") {
		t.Fatalf("three mappings of %d keys: %.300v; want unknown keys, not a limit", MaxKeys, err)
	}
}

// TestBOM: a byte order mark at the start of a file is ignored, and the
// columns of the first line are counted without it.
func TestBOM(t *testing.T) {
	s, err := Parse("bom.yaml", []byte("\ufeff"+minimal))
	if err != nil {
		t.Fatalf("a file starting with a byte order mark: %v", err)
	}
	if s.Name != "minimal" || s.Fleet.Count != 10 {
		t.Fatalf("loaded %q with %d workers", s.Name, s.Fleet.Count)
	}
	_, err = Parse("bom.yaml", []byte("\ufeffnam: x\n"))
	var es Errors
	if !errors.As(err, &es) || es[0].Line != 1 || es[0].Col != 1 || !strings.Contains(es[0].Msg, `unknown key "nam"`) {
		t.Fatalf("err = %v; want unknown key \"nam\" at 1:1", err)
	}
}

// TestCheckLimits: a check past MaxCheckLength or MaxCheckDepth is refused
// before expr parses it, at its place in the file; one at the limits
// compiles. 500,000 nested brackets overflowed expr's stack (a crash that
// no recover catches).
func TestCheckLimits(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("(", n) + "lost" + strings.Repeat(")", n) + " == 0" }
	for _, tc := range []struct {
		name      string
		check     string
		line, col int
		want      string
	}{
		{"500,000 brackets", nest(500_000), 6, 5, "the check is 1000009 bytes long, over the limit of 4096"},
		{"deep brackets", nest(expect.MaxCheckDepth + 1), 6, 5 + expect.MaxCheckDepth, "brackets nested more than 32 deep"},
		{"deep lists", "lost in " + strings.Repeat("[", 40) + "0" + strings.Repeat("]", 40), 6, 5 + 8 + expect.MaxCheckDepth, "brackets nested more than 32 deep"},
		{"brackets after a comment line", "lost == 0 // it's\n || " + nest(expect.MaxCheckDepth+1), 6, 5, "brackets nested more than 32 deep"},
		{"long", "lost == 0" + strings.Repeat(" || lost == 0", 400), 6, 5, "bytes long, over the limit of 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := minimal + "expect:\n  - " + quoteYAML(tc.check) + "\n"
			_, err := Parse("checks.yaml", []byte(data))
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("err = %.300v; want one error", err)
			}
			e := es[0]
			if e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Msg, tc.want) || e.Path != "expect[0]" {
				t.Errorf("error at %d:%d %s: %.200q; want at %d:%d, expect[0], saying %q", e.Line, e.Col, e.Path, e.Msg, tc.line, tc.col, tc.want)
			}
			if len(e.Msg) > 400 {
				t.Errorf("the message quotes the whole check: %d bytes", len(e.Msg))
			}
		})
	}
	for _, ok := range []string{
		nest(expect.MaxCheckDepth),
		"lost == 0 // " + strings.Repeat("(", 100),
		"lost == 0 /* " + strings.Repeat("[", 100) + " */",
		`lost == len("` + strings.Repeat("{", 100) + `") - 100`,
	} {
		if _, err := expect.Compile(ok); err != nil {
			t.Errorf("compileCheck(%.60q...): %v", ok, err)
		}
	}
}

// quoteYAML writes s as a YAML scalar: plain on one line, a literal block
// over several.
func quoteYAML(s string) string {
	if strings.Contains(s, "\n") {
		return "|\n      " + strings.ReplaceAll(s, "\n", "\n      ")
	}
	return s
}

// TestReadFile: a file over the size limit and a directory are refused
// without being read; a file at the limit is read.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at.yaml")
	if err := os.WriteFile(at, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(at, int64(len(minimal))); err != nil || string(data) != minimal {
		t.Fatalf("a file at the limit: %q, %v", data, err)
	}
	if _, err := ReadFile(at, int64(len(minimal)-1)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("(%d bytes, the limit is %d)", len(minimal), len(minimal)-1)) {
		t.Fatalf("a file a byte over the limit: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: no time to write
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(big, DefaultMaxFileSize); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "52428800 bytes, the limit is 1048576") {
		t.Fatalf("a 50 MB file: %v", err)
	}
	if _, err := Load(big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Load of a 50 MB file: %v", err)
	}
	if _, err := ReadFile(dir, DefaultMaxFileSize); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "(a directory)") {
		t.Fatalf("a directory: %v", err)
	}
}
