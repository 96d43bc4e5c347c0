//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/cmd/internal/proctest"
)

// stop sends sig to sim and returns its exit code once it has ended,
// failing the test if that takes more than a few seconds.
func stop(t *testing.T, p *proctest.Process, sig os.Signal) int {
	t.Helper()
	sent := time.Now()
	p.Signal(t, sig)
	code := p.Wait(t, 15*time.Second)
	t.Logf("sim ended %v after %v", time.Since(sent).Round(time.Millisecond), sig)
	return code
}

// slowFolder is a folder of 200 scenario files that each take a good
// fraction of a second to parse (8,000 events, within the limits):
// loading it takes a minute or more.
func slowFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	first := filepath.Join(dir, "s000.yaml")
	body := minimal + "timeline:\n" + strings.Repeat("- at: 1s\n  deploy: {version: 1.2.3, workers: all}\n", 8000)
	if err := os.WriteFile(first, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 200; i++ {
		if err := os.Symlink(first, filepath.Join(dir, fmt.Sprintf("s%03d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSignalWhileLoading: SIGINT or SIGTERM while sim loads its files
// stops it at once (it took no notice until the files were loaded):
// validate and check exit 1, run exits 0, each saying it was stopped.
func TestSignalWhileLoading(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sim processes")
	}
	dir := slowFolder(t)
	for _, tc := range []struct {
		args []string
		sig  os.Signal
		code int
	}{
		{[]string{"validate"}, os.Interrupt, 1},
		{[]string{"check", "--baseline", t.TempDir()}, syscall.SIGTERM, 1},
		{[]string{"run", "--headless", "--report", ""}, os.Interrupt, 0},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			args := append([]string{tc.args[0], dir, "--log-level", "debug"}, tc.args[1:]...)
			p := proctest.Start(t, proctest.Options{Env: childEnv}, args...)
			p.Stderr.WaitFor(t, p, "loading scenario files", time.Minute)
			code := stop(t, p, tc.sig)
			if code != tc.code || !strings.Contains(p.Stderr.String(), "stopped by SIGINT/SIGTERM while loading the scenario files") {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, p)
			}
		})
	}
}

// TestSignalWhileRunning: SIGTERM during a run stops it at once: run
// prints the partial run as STOPPED and exits 0, check exits 1 (nothing
// was checked).
func TestSignalWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sim processes")
	}
	for _, tc := range []struct {
		cmd  string
		args []string
		code int
		out  string
	}{
		{"run", []string{"--headless", "--report", ""}, 0, "STOPPED tiny"},
		{"check", []string{"--baseline", t.TempDir(), "--update-baseline"}, 1, ""},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			// At speed 1 the run lasts 10 s of wall time and more.
			args := append([]string{tc.cmd, "testdata/tiny.yaml", "--speed", "1", "--progress", "100ms", "--log-level", "error"}, tc.args...)
			p := proctest.Start(t, proctest.Options{Env: childEnv}, args...)
			p.Stdout.WaitFor(t, p, "running", time.Minute)
			code := stop(t, p, syscall.SIGTERM)
			if code != tc.code || !strings.Contains(p.Stdout.String(), tc.out) {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, p)
			}
			if tc.code == 1 && !strings.Contains(p.Stderr.String(), "stopped by SIGINT/SIGTERM: the runs did not complete") {
				t.Fatalf("%s", p)
			}
		})
	}
}

// TestFolderWithNamedPipe: a named pipe among the scenario files is
// refused, unread, and the other files' problems are reported too (reading
// it blocked sim until a writer came).
func TestFolderWithNamedPipe(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a-bad.yaml":  strings.Replace(minimal, "1m", "10 minutes", 1),
		"c-good.yaml": minimal,
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "b-pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		defer close(done)
		code, _, stderr = sim(t, "validate", dir)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("sim validate on a folder with a named pipe has not returned after 30s")
	}
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "b-pipe.yaml")+": not a regular file (a named pipe)") ||
		!strings.Contains(stderr, `"10 minutes" is not a duration`) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
