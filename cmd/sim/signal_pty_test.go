//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
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
			master, slave := openPTY(t)
			defer master.Close()
			dir := filepath.Join(t.TempDir(), "fleetsim-report")
			cmd := exec.Command(os.Args[0], "run", "testdata/tiny.yaml", "--report", dir, "--log-level", "error")
			cmd.Env = append(os.Environ(), childEnv+"=1", "TERM=xterm-256color")
			cmd.Stdin, cmd.Stdout = slave, slave
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			var (
				mu  sync.Mutex
				out bytes.Buffer
			)
			read := make(chan struct{})
			go func() {
				defer close(read)
				buf := make([]byte, 32<<10)
				for {
					n, err := master.Read(buf)
					mu.Lock()
					out.Write(buf[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			screen := func() string {
				mu.Lock()
				defer mu.Unlock()
				return out.String()
			}
			// The run takes about a second of wall time; its summary.md
			// appears once it is judged, while the dashboard waits for q.
			summary := filepath.Join(dir, "summary.md")
			deadline := time.After(60 * time.Second)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for waiting := true; waiting; {
				select {
				case <-tick.C:
					if _, err := os.Stat(summary); err == nil {
						waiting = false
					}
				case err := <-done:
					t.Fatalf("sim ended (%v) before any signal:\nstderr:\n%s", err, stderr.String())
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("no %s after 60s:\nstderr:\n%s", summary, stderr.String())
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("sim still running 15s after %v", sig)
			}
			master.SetReadDeadline(time.Now().Add(2 * time.Second))
			<-read
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Fatalf("sim was killed by %v instead of exiting", ws.Signal())
				}
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got := screen()
			if code != 0 || !strings.Contains(got, "PASS tiny") || strings.Contains(got, "STOPPED") {
				t.Errorf("exit %d, want 0 with PASS tiny and no STOPPED\nterminal:\n%q\nstderr:\n%s", code, tail(got), stderr.String())
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
	master, slave := openPTY(t)
	defer master.Close()
	// A terminal of 100×30: the dashboard draws nothing on one of no size.
	size := [4]uint16{30, 100, 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&size))); e != 0 {
		t.Skipf("set the pty's size: %v", e)
	}
	dir := filepath.Join(t.TempDir(), "fleetsim-report")
	cmd := exec.Command(os.Args[0], "run", "testdata/tiny.yaml", "--speed", "1", "--report", dir, "--log-level", "error")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout = slave, slave
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var (
		mu  sync.Mutex
		out bytes.Buffer
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The dashboard is drawn once the run is under way: its header names
	// the phase.
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			mu.Lock()
			waiting = !strings.Contains(out.String(), "running")
			mu.Unlock()
		case err := <-done:
			t.Fatalf("sim ended (%v) before q:\nstderr:\n%s", err, stderr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no dashboard after 60s:\n%q\nstderr:\n%s", tail(out.String()), stderr.String())
		}
	}
	if _, err := master.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sim still running 30s after q")
	}
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	<-read
	mu.Lock()
	got := out.String()
	mu.Unlock()
	if err != nil || !strings.Contains(got, "STOPPED tiny") || !strings.Contains(got, "stopped: by a key on the dashboard at ") {
		t.Fatalf("exit %v, want 0 and STOPPED tiny\nterminal:\n%q\nstderr:\n%s", err, tail(got), stderr.String())
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
