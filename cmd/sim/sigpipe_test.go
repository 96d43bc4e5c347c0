//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/proctest"
)

// TestBrokenStdout: a sim whose stdout's reader is gone (sim run … | tee
// log, and the Ctrl-C that stops sim ended tee first) is not killed by
// SIGPIPE at its next progress line: stopped, it writes its report and
// exits as it would have. (It died of SIGPIPE, no report written.)
func TestBrokenStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sim processes")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// At speed 1 the run lasts 10 s of wall time and more.
	p := proctest.Start(t, proctest.Options{Env: childEnv, Stdout: w},
		"run", "testdata/tiny.yaml", "--speed", "1", "--progress", "50ms", "--log-level", "error", "--headless", "--report", dir)
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "running") {
				break
			}
		}
		close(running)
		_, _ = io.Copy(io.Discard, r) // until the test closes r
	}()
	select {
	case <-running:
	case <-p.Done():
		t.Fatalf("sim ended before it was running\n%s", p)
	case <-time.After(time.Minute):
		t.Fatalf("sim is not running after a minute\n%s", p)
	}
	r.Close() // the next progress line finds the pipe broken
	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, p)
	}
	if _, err := os.Stat(dir + "/summary.md"); err != nil {
		t.Fatalf("no report: %v\n%s", err, p)
	}
}
