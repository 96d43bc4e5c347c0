//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fleetsim/fleetsim/cmd/internal/proctest"
)

// openPTY opens a pseudo-terminal pair: the master the test reads and
// writes, the slave sim gets as its terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("pty number: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty slave: %v", err)
	}
	return m, s
}

// terminal is what sim has written to the pseudo-terminal it runs on.
type terminal struct {
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	read   chan struct{} // closed when the reader has stopped
}

// String is everything written so far.
func (tm *terminal) String() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// finish stops reading once what sim wrote last has been read.
func (tm *terminal) finish() string {
	tm.master.SetReadDeadline(time.Now().Add(2 * time.Second))
	<-tm.read
	return tm.String()
}

// startOnTerminal starts sim with args on a pseudo-terminal of 100×30
// (the dashboard draws nothing on one of no size), as the controlling
// process of a session of its own, as in a terminal window.
func startOnTerminal(t *testing.T, args ...string) (*proctest.Process, *terminal) {
	t.Helper()
	master, slave := openPTY(t)
	t.Cleanup(func() { master.Close() })
	size := [4]uint16{30, 100, 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&size))); e != 0 {
		t.Skipf("set the pty's size: %v", e)
	}
	p := proctest.Start(t, proctest.Options{Env: childEnv, Vars: []string{"TERM=xterm-256color"}, Stdin: slave, Stdout: slave, Setsid: true}, args...)
	tm := &terminal{master: master, read: make(chan struct{})}
	go func() {
		defer close(tm.read)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p, tm
}

// waitUntil polls cond every 20 ms until it holds, and fails the test if
// sim ends first or a minute passes.
func waitUntil(t *testing.T, p *proctest.Process, tm *terminal, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-p.Done():
			t.Fatalf("sim ended before %s\nterminal:\n%q\n%s", what, tail(tm.String()), p)
		case <-deadline:
			t.Fatalf("no %s after a minute\nterminal:\n%q\n%s", what, tail(tm.String()), p)
		}
	}
}

// TestSignalAfterJudgedRun: on the dashboard, a run's reports are on
// disk as soon as it is judged, before anyone presses q; SIGHUP (the
// terminal closed) or SIGTERM then ends sim with the run's verdict (exit
// 0, PASS, not STOPPED), the reports say passed, and the terminal is
// left as it was found (the alternate screen left). Before, SIGHUP killed
// sim (exit 129) with no report and the terminal in raw mode, and SIGTERM
// printed STOPPED for a run the reports called passed.
func TestSignalAfterJudgedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sim processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fleetsim-report")
			p, tm := startOnTerminal(t, "run", "testdata/tiny.yaml", "--report", dir, "--log-level", "error")
			// The run takes about a second of wall time; its summary.md
			// appears once it is judged, while the dashboard waits for q.
			summary := filepath.Join(dir, "summary.md")
			waitUntil(t, p, tm, summary, func() bool { _, err := os.Stat(summary); return err == nil })
			p.Signal(t, sig)
			code := p.Wait(t, 15*time.Second)
			got := tm.finish()
			if code != 0 || !strings.Contains(got, "PASS tiny") || strings.Contains(got, "STOPPED") {
				t.Errorf("exit %d, want 0 with PASS tiny and no STOPPED\nterminal:\n%q\n%s", code, tail(got), p)
			}
			// The alternate screen is left before the summary is printed.
			if i, j := strings.LastIndex(got, "\x1b[?1049l"), strings.Index(got, "PASS tiny"); i < 0 || j < i {
				t.Errorf("the terminal was not restored before the summary (leave alt screen at %d, summary at %d)", i, j)
			}
			md, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "passed") || strings.Contains(string(md), "did not complete") {
				t.Errorf("summary.md does not say the run passed:\n%s", md)
			}
			for _, f := range []string{"tiny.json", "tiny.html", "index.html"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("report file: %v", err)
				}
			}
		})
	}
}

// tail is the end of a terminal's output, for a failure message.
func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}

// TestQuitBeforeTheEnd: q on the dashboard before the run's end stops it:
// exit 0, STOPPED on the terminal, and every report says stopped, none
// failed (the HTML page showed a red "failed" badge, summary.md "did not
// complete", and the JSON report no status, only "context canceled").
func TestQuitBeforeTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sim process")
	}
	dir := filepath.Join(t.TempDir(), "fleetsim-report")
	p, tm := startOnTerminal(t, "run", "testdata/tiny.yaml", "--speed", "1", "--report", dir, "--log-level", "error")
	// The dashboard is drawn once the run is under way: its header names
	// the phase.
	waitUntil(t, p, tm, "dashboard", func() bool { return strings.Contains(tm.String(), "running") })
	if _, err := tm.master.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	code := p.Wait(t, 30*time.Second)
	got := tm.finish()
	if code != 0 || !strings.Contains(got, "STOPPED tiny") || !strings.Contains(got, "stopped: by a key on the dashboard at ") {
		t.Fatalf("exit %d, want 0 and STOPPED tiny\nterminal:\n%q\n%s", code, tail(got), p)
	}
	for file, want := range map[string]string{
		"tiny.json":  `"status": "stopped"`,
		"tiny.html":  `<span class="badge stopped">stopped</span>`,
		"summary.md": "| tiny |  | ⏹️ stopped |",
		"index.html": "<strong>stopped</strong>: by a key on the dashboard at ",
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) || strings.Contains(string(data), "failed") {
			t.Errorf("%s does not say stopped (%q), or says failed:\n%s", file, want, data)
		}
	}
}
