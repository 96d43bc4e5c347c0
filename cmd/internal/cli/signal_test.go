//go:build unix

package cli

import (
	"errors"
	"os"
	"testing"
)

// TestStopOnBrokenPipe: the first write to a pipe whose reader is gone
// stops the process once, and neither it nor a later write reports an
// error that could abort the shutdown that follows; other errors pass.
func TestStopOnBrokenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stops := 0
	out := StopOnBrokenPipe(w, func() { stops++ })
	if n, err := out.Write([]byte("read\n")); n != 5 || err != nil || stops != 0 {
		t.Fatalf("a write with a reader: %d, %v, %d stops", n, err, stops)
	}
	r.Close()
	for range 3 {
		if n, err := out.Write([]byte("nobody reads this\n")); n != 18 || err != nil {
			t.Fatalf("a write to the broken pipe: %d, %v; want it dropped as written", n, err)
		}
	}
	if stops != 1 {
		t.Fatalf("%d stops, want 1", stops)
	}

	w.Close()
	closed := StopOnBrokenPipe(w, func() { t.Fatal("stopped on an error that is not a broken pipe") })
	if _, err := closed.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a write to a closed file: %v, want os.ErrClosed", err)
	}
}
