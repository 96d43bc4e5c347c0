//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// TestMaxFileSizeCeiling: --max-file-size goes no higher than what one
// load may cost. Asking for 64 MiB to load a 50 MB file (which took 9.7 s
// and 1.77 GB) is refused as a flag, before the file is opened; and a
// file at the ceiling, of the shape the YAML parser finds costliest
// (a block scalar of short lines), is loaded within 256 MB: the peak
// memory of a process of its own (sim, the test binary run as it),
// which measures memory, not time.
func TestMaxFileSizeCeiling(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: nothing to write
		t.Fatal(err)
	}
	f.Close()
	code, _, stderr := sim(t, "validate", huge, "--max-file-size", "64MiB")
	if want := `invalid argument "64MiB" for "--max-file-size" flag: want 1 byte to 4MiB`; code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("--max-file-size 64MiB: exit %d, stderr:\n%s\nwant exit 2 saying %q", code, stderr, want)
	}
	code, _, stderr = sim(t, "validate", huge, "--max-file-size", "4MiB")
	if want := "file too large (52428800 bytes, the limit is 4194304): 4MiB is the most --max-file-size allows (what one load may cost): split the file"; code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("--max-file-size 4MiB: exit %d, stderr:\n%s\nwant exit 2 saying %q", code, stderr, want)
	}

	const unit = "  a\n"
	head := minimal + "description: |\n"
	data := head + strings.Repeat(unit, (scenario.MaxFileSize-len(head))/len(unit))
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "validate", big, "--max-file-size", "4MiB")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok  "+big) {
		t.Fatalf("a %d-byte file at the ceiling: %v\n%s", len(data), err, out)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("%d bytes of block scalar: peak RSS %d MB", len(data), peak>>20)
	if peak > 256<<20 {
		t.Errorf("loading a file at the ceiling took %d MB at its peak, over the 256 MB a load may cost", peak>>20)
	}
}
