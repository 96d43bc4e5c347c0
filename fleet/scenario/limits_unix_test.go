//go:build unix

package scenario

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileSpecial: a named pipe and a device are refused without being
// read: a pipe would block the reader until a writer came, /dev/zero never
// end.
func TestReadFileSpecial(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(fifo, DefaultMaxFileSize); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "(a named pipe)") {
		t.Fatalf("a named pipe: %v", err)
	}
	if _, err := ReadFile("/dev/zero", DefaultMaxFileSize); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "(a device)") {
		t.Fatalf("/dev/zero: %v", err)
	}
}
