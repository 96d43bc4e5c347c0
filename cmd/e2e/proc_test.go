package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/fleettest"
)

// bin is where TestMain built the binaries.
var bin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fleetsim-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", dir, "./cmd/leader", "./cmd/worker")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	bin = dir
	return m.Run()
}

// proc is a started binary whose JSON logs (stderr) are collected.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and its output is read
	mu   sync.Mutex
	logs []map[string]any
	raw  strings.Builder
	out  strings.Builder // stdout
}

// start runs bin/name (or name, if an absolute path) with args; the process is killed at the test's end
// if it is still running.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(bin, name)
	}
	p := &proc{name: filepath.Base(name), done: make(chan struct{})}
	p.cmd = exec.Command(path, args...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Go(func() {
		b, _ := io.ReadAll(stdout)
		p.mu.Lock()
		p.out.Write(b)
		p.mu.Unlock()
	})
	readers.Go(func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec map[string]any
			_ = json.Unmarshal(sc.Bytes(), &rec)
			p.mu.Lock()
			p.raw.WriteString(sc.Text() + "\n")
			if rec != nil {
				p.logs = append(p.logs, rec)
			}
			p.mu.Unlock()
		}
	})
	go func() { // owned by p: done says it has returned
		readers.Wait()
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("--- %s %s stderr:\n%s", name, strings.Join(args, " "), p.stderr())
		}
	})
	return p
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw.String()
}

// log waits for a log record with msg and returns it.
func (p *proc) log(t *testing.T, msg string, timeout time.Duration) map[string]any {
	t.Helper()
	var found map[string]any
	fleettest.Eventually(t, timeout, p.name+" logs "+strconv.Quote(msg), func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, r := range p.logs {
			if r["msg"] == msg {
				found = r
				return nil
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before logging %q", p.name, p.cmd.ProcessState, msg)
		default:
		}
		if len(p.logs) == 0 {
			return fmt.Errorf("no log record yet")
		}
		return fmt.Errorf("%d log records, the last %q", len(p.logs), p.logs[len(p.logs)-1]["msg"])
	})
	return found
}

// stop sends sig and returns the exit code.
func (p *proc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
	return p.wait(t)
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit within 30s", p.name)
	}
	return p.cmd.ProcessState.ExitCode()
}

// run runs bin/name to completion and returns its exit code and stdout.
func run(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	p := start(t, name, args...)
	code := p.wait(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	if code != 0 {
		t.Logf("%s %v: exit %d\n%s", name, args, code, p.raw.String())
	}
	return code, p.out.String()
}

// metric reads one series from a /metrics endpoint; missing is 0.
func metric(t *testing.T, addr, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// waitMetric waits until series reads want.
func waitMetric(t *testing.T, addr, series string, want float64, timeout time.Duration) {
	t.Helper()
	fleettest.Eventually(t, timeout, fmt.Sprintf("%s == %v", series, want), func() error {
		got := metric(t, addr, series)
		return fleettest.Unless(got == want, "%s = %v", series, got)
	})
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// num reads a numeric log attribute.
func num(t *testing.T, rec map[string]any, key string) int {
	t.Helper()
	v, ok := rec[key].(float64)
	if !ok {
		t.Fatalf("log record %v: no number %q", rec, key)
	}
	return int(v)
}
