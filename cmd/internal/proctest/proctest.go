//go:build unix

// Package proctest runs a fleetsim binary in a process of its own, for
// the tests that must see what only a process shows: how a signal ends
// it, what it does when its output pipe breaks, its exit status. The
// process is the test binary itself, run again as the command: TestMain
// calls AsChild first, which runs the command's main when the test
// started the binary as a child.
//
//	func TestMain(m *testing.M) {
//		proctest.AsChild("FLEETSIM_TEST_RUN_WORKER", main)
//		os.Exit(m.Run())
//	}
//
//	p := proctest.Start(t, proctest.Options{Env: "FLEETSIM_TEST_RUN_WORKER"}, "--count", "3")
//	p.Stderr.WaitFor(t, p, "workers starting", time.Minute)
//	p.Signal(t, syscall.SIGHUP)
//	code := p.Wait(t, 15*time.Second)
package proctest

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// AsChild runs main, which must not return (a command's main ends with
// os.Exit), when the environment variable env is "1": the test binary was
// started by Start as the command. Otherwise it returns at once.
func AsChild(env string, main func()) {
	if os.Getenv(env) == "1" {
		main()
		os.Exit(0) // a main that returns has exited 0
	}
}

// Options says how to start the process.
type Options struct {
	// Env is the variable AsChild looks for.
	Env string
	// Vars are more environment variables, "NAME=value".
	Vars []string
	// Stdin, Stdout and Stderr, if set, are the process's standard input,
	// output and error (a pipe's write end whose reader the test closes,
	// or a pseudo-terminal); otherwise stdin is empty, and Process.Stdout
	// and Process.Stderr collect the output. Start closes them in the
	// parent once the child has them.
	Stdin, Stdout, Stderr *os.File
	// Setsid starts the process in a session of its own, as a terminal's
	// controlling process is.
	Setsid bool
}

// Process is a started child.
type Process struct {
	Cmd    *exec.Cmd
	Stdout *Lines // nil when Options.Stdout was given
	Stderr *Lines // nil when Options.Stderr was given
	done   chan struct{}
	err    error // the process's end, once done is closed
}

// Start starts the test binary as the command, with args, and kills it at
// the end of the test if it is still running.
func Start(t testing.TB, o Options, args ...string) *Process {
	t.Helper()
	p := &Process{Cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	p.Cmd.Env = append(append(os.Environ(), o.Env+"=1"), o.Vars...)
	if o.Setsid {
		p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if o.Stdin != nil {
		p.Cmd.Stdin = o.Stdin
	}
	var wg sync.WaitGroup
	var start []func()
	collect := func(given *os.File, to **Lines, pipe func() (io.ReadCloser, error)) {
		if given != nil {
			return
		}
		r, err := pipe()
		if err != nil {
			t.Fatal(err)
		}
		l := newLines()
		*to = l
		start = append(start, func() { wg.Go(func() { l.read(r) }) })
	}
	if o.Stdout != nil {
		p.Cmd.Stdout = o.Stdout
	}
	if o.Stderr != nil {
		p.Cmd.Stderr = o.Stderr
	}
	collect(o.Stdout, &p.Stdout, p.Cmd.StdoutPipe)
	collect(o.Stderr, &p.Stderr, p.Cmd.StderrPipe)
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{o.Stdin, o.Stdout, o.Stderr} {
		if f != nil {
			f.Close() // the child has its own copy (closing one twice is harmless)
		}
	}
	for _, f := range start {
		f()
	}
	go func() {
		wg.Wait() // the pipes are read to their end before Wait closes them
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.Cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process.
func (p *Process) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Wait waits for the process to end and returns its exit code. It fails
// the test if the process has not ended within timeout (on the wall
// clock), or if a signal killed it: a signal a fleetsim binary handles
// ends it with an exit code, never by the signal's default action.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("process still running after %v\n%s", timeout, p)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("process killed by %v instead of exiting\n%s", ws.Signal(), p)
		}
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// String is what the process wrote, for a failure message.
func (p *Process) String() string {
	var s string
	if p.Stdout != nil {
		s += "stdout:\n" + p.Stdout.String()
	}
	if p.Stderr != nil {
		s += "stderr:\n" + p.Stderr.String()
	}
	return s
}

// Lines collects what a pipe delivers, line by line.
type Lines struct {
	mu      sync.Mutex
	text    strings.Builder
	changed chan struct{} // closed and replaced at every line, and at the end
}

func newLines() *Lines { return &Lines{changed: make(chan struct{})} }

func (l *Lines) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.text.WriteString(sc.Text() + "\n")
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
}

func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// WaitFor waits until a line holds text, and fails the test if p ends
// first or timeout passes (on the wall clock).
func (l *Lines) WaitFor(t testing.TB, p *Process, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		seen, changed := strings.Contains(l.text.String(), text), l.changed
		l.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-changed:
		case <-p.done:
			if !strings.Contains(l.String(), text) {
				t.Fatalf("process ended (%v) before saying %q\n%s", p.err, text, p)
			}
			return
		case <-deadline:
			t.Fatalf("process has not said %q after %v\n%s", text, timeout, p)
		}
	}
}
