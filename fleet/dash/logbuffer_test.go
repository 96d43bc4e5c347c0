package dash

import (
	"fmt"
	"slices"
	"testing"
)

func TestLogBuffer(t *testing.T) {
	b := NewLogBuffer(3)
	fmt.Fprint(b, "one\ntw")
	if lines, next, _ := b.Since(0); !slices.Equal(lines, []string{"one"}) || next != 1 {
		t.Fatalf("after a line and a half: %q next %d", lines, next)
	}
	fmt.Fprint(b, "o\r\nthree\nfour\nfive\n")
	lines, next, skipped := b.Since(1)
	if want := []string{"three", "four", "five"}; !slices.Equal(lines, want) || next != 5 || skipped != 1 {
		t.Fatalf("Since(1) = %q next %d skipped %d, want %q next 5 skipped 1 (\"two\" overwritten)", lines, next, skipped, want)
	}
	if lines, next, skipped := b.Since(5); len(lines) != 0 || next != 5 || skipped != 0 {
		t.Fatalf("Since(5) = %q %d %d, want nothing new", lines, next, skipped)
	}
}
