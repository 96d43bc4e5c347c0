//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// child is sim running in a process of its own: the test binary, run as
// sim (TestMain).
type child struct {
	cmd            *exec.Cmd
	stdout, stderr *lines
	done           chan struct{}
	err            error // the process's end, once done is closed
}

// lines collects what a pipe delivers and tells when a line holds a text.
type lines struct {
	mu   sync.Mutex
	text strings.Builder
	seen chan struct{} // closed when want is seen
	want string
}

func (l *lines) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.text.WriteString(sc.Text() + "\n")
		if l.want != "" && strings.Contains(sc.Text(), l.want) {
			close(l.seen)
			l.want = ""
		}
		l.mu.Unlock()
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// startSim starts sim with args; stdoutWant and stderrWant are the texts
// the test will wait for (waitLine).
func startSim(t *testing.T, stdoutWant, stderrWant string, args ...string) *child {
	t.Helper()
	c := &child{
		cmd:    exec.Command(os.Args[0], args...),
		stdout: &lines{want: stdoutWant, seen: make(chan struct{})},
		stderr: &lines{want: stderrWant, seen: make(chan struct{})},
		done:   make(chan struct{}),
	}
	c.cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.stdout.read(out) }()
	go func() { defer wg.Done(); c.stderr.read(errp) }()
	go func() {
		wg.Wait() // the pipes are read to their end before Wait closes them
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// waitLine waits for the line l was told to watch for.
func (c *child) waitLine(t *testing.T, l *lines, name string) {
	t.Helper()
	select {
	case <-l.seen:
	case <-c.done:
		t.Fatalf("sim ended (%v) before its %s said %q:\nstdout:\n%s\nstderr:\n%s", c.err, name, l.want, c.stdout, c.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("sim's %s has not said %q after 60s:\nstdout:\n%s\nstderr:\n%s", name, l.want, c.stdout, c.stderr)
	}
}

// stop sends sig and returns the exit code once sim has ended, failing
// the test if it takes more than a few seconds.
func (c *child) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	sent := time.Now()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("sim still running 15s after %v:\nstdout:\n%s\nstderr:\n%s", sig, c.stdout, c.stderr)
	}
	t.Logf("sim ended %v after %v", time.Since(sent).Round(time.Millisecond), sig)
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("sim was killed by %v instead of exiting", ws.Signal())
		}
		return ee.ExitCode()
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	return 0
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
			c := startSim(t, "", "loading scenario files", args...)
			c.waitLine(t, c.stderr, "stderr")
			code := c.stop(t, tc.sig)
			if code != tc.code || !strings.Contains(c.stderr.String(), "stopped by SIGINT/SIGTERM while loading the scenario files") {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tc.code, c.stderr)
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
			c := startSim(t, "running", "", args...)
			c.waitLine(t, c.stdout, "stdout")
			code := c.stop(t, syscall.SIGTERM)
			if code != tc.code || !strings.Contains(c.stdout.String(), tc.out) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
			}
			if tc.code == 1 && !strings.Contains(c.stderr.String(), "stopped by SIGINT/SIGTERM: the runs did not complete") {
				t.Fatalf("stderr:\n%s", c.stderr)
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
