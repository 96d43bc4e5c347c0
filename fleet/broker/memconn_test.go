package broker

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/nettest"
)

// TestMemPipeConformance runs x/net's net.Conn conformance suite (basic
// I/O, racy reads and writes, past/present/future deadlines, close while
// blocked, concurrent methods). A few of its subtests sleep 100 ms to let
// calls block first; they do not depend on the timing to pass.
func TestMemPipeConformance(t *testing.T) {
	for _, size := range []int{0, 1024} { // default, and small enough to block often
		t.Run(map[int]string{0: "default", 1024: "1KiB"}[size], func(t *testing.T) {
			nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
				c1, c2 = MemPipe(size)
				return c1, c2, func() { c1.Close(); c2.Close() }, nil
			})
		})
	}
}

// A writer that fills the buffer blocks until the reader makes room, and a
// Write returns as soon as its bytes are buffered (net.Pipe would block).
func TestMemPipeWriterBlocksAtLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := MemPipe(1000)
		defer a.Close()
		defer b.Close()

		if n, err := a.Write(make([]byte, 600)); n != 600 || err != nil {
			t.Fatalf("first write with no reader = %d, %v; want 600, nil", n, err)
		}
		done := make(chan int)
		go func() {
			n, _ := a.Write(bytes.Repeat([]byte{1}, 700)) // 400 fit, 300 wait
			done <- n
		}()
		synctest.Wait()
		select {
		case n := <-done:
			t.Fatalf("write past the limit returned (%d) with no reader", n)
		default:
		}
		if got := a.(*memConn).out.buffered(); got != 1000 {
			t.Fatalf("buffered = %d, want the limit 1000", got)
		}
		if _, err := io.ReadFull(b, make([]byte, 600)); err != nil {
			t.Fatal(err)
		}
		if n := <-done; n != 700 {
			t.Fatalf("blocked write returned %d, want 700", n)
		}
		rest := make([]byte, 700)
		if _, err := io.ReadFull(b, rest); err != nil || !bytes.Equal(rest, bytes.Repeat([]byte{1}, 700)) {
			t.Fatalf("read back %v, %v", rest[:8], err)
		}
	})
}

func TestMemPipeDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := MemPipe(100)
		defer a.Close()
		defer b.Close()

		// A blocked Read ends when its deadline passes, not before.
		start := time.Now()
		a.SetReadDeadline(start.Add(time.Second))
		_, err := a.Read(make([]byte, 10))
		checkTimeout(t, "read", err)
		if el := time.Since(start); el != time.Second {
			t.Errorf("read timed out after %v, want 1s", el)
		}

		// Moving the deadline while blocked takes effect at once.
		a.SetReadDeadline(time.Time{})
		errc := make(chan error)
		go func() { _, err := a.Read(make([]byte, 10)); errc <- err }()
		synctest.Wait()
		start = time.Now()
		a.SetReadDeadline(start.Add(3 * time.Second))
		checkTimeout(t, "read after moving the deadline", <-errc)
		if el := time.Since(start); el != 3*time.Second {
			t.Errorf("read timed out after %v, want 3s", el)
		}

		// A blocked Write (buffer full) ends at its deadline with a short count.
		start = time.Now()
		b.SetWriteDeadline(start.Add(2 * time.Second))
		n, err := b.Write(make([]byte, 150))
		checkTimeout(t, "write", err)
		if n != 100 || time.Since(start) != 2*time.Second {
			t.Errorf("write = %d after %v, want 100 after 2s", n, time.Since(start))
		}

		// Clearing the deadlines restores normal service.
		a.SetDeadline(time.Time{})
		b.SetDeadline(time.Time{})
		if _, err := io.ReadFull(a, make([]byte, 100)); err != nil {
			t.Fatalf("read after clearing the deadline: %v", err)
		}
	})
}

func checkTimeout(t *testing.T, what string, err error) {
	t.Helper()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("%s: got %v, want a net.Error with Timeout() matching os.ErrDeadlineExceeded", what, err)
	}
}

func TestMemPipeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := MemPipe(0)

		// Blocked calls on both ends are released by one Close.
		readErr := make(chan error, 2)
		go func() { _, err := a.Read(make([]byte, 1)); readErr <- err }()
		go func() {
			_, err := b.Read(make([]byte, 1)) // gets "hi" first
			if err == nil {
				_, err = io.ReadFull(b, make([]byte, 1))
				_, err = b.Read(make([]byte, 1))
			}
			readErr <- err
		}()
		synctest.Wait()
		if _, err := a.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := a.Close(); err != nil {
			t.Fatalf("first Close: %v", err)
		}
		for range 2 {
			err := <-readErr
			if !errors.Is(err, net.ErrClosed) && err != io.EOF {
				t.Errorf("blocked read ended with %v, want net.ErrClosed (own end) or io.EOF (peer)", err)
			}
		}
		if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write on closed end: %v, want net.ErrClosed", err)
		}
		if _, err := b.Write([]byte("x")); err == nil {
			t.Error("write towards a closed end succeeded")
		}
		if err := a.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close: %v, want net.ErrClosed", err)
		}
		b.Close()
	})
}

// The peer reads what was written before Close, then io.EOF.
func TestMemPipeCloseKeepsWrittenData(t *testing.T) {
	a, b := MemPipe(0)
	a.Write([]byte("last words"))
	a.Close()
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "last words" {
		t.Fatalf("ReadAll = %q, %v; want the data, then EOF", got, err)
	}
	b.Close()
}

// Concurrent Writes larger than the buffer still arrive contiguous.
func TestMemPipeConcurrentWritesStayWhole(t *testing.T) {
	a, b := MemPipe(1024)
	defer a.Close()
	defer b.Close()
	const writers, size = 8, 5000
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			if _, err := a.Write(bytes.Repeat([]byte{byte('A' + i)}, size)); err != nil {
				t.Error(err)
			}
		})
	}
	got := make([]byte, writers*size)
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	seen := map[byte]bool{}
	for off := 0; off < len(got); off += size {
		c := got[off]
		if seen[c] || !bytes.Equal(got[off:off+size], bytes.Repeat([]byte{c}, size)) {
			t.Fatalf("bytes at %d are not one whole write of %q", off, c)
		}
		seen[c] = true
	}
}

// An idle direction holds no buffer: chunks go back to the pool as soon as
// they are read.
func TestMemPipeReleasesDrainedChunks(t *testing.T) {
	a, b := MemPipe(0)
	defer a.Close()
	defer b.Close()
	p := a.(*memConn).out
	a.Write(make([]byte, 10_000))
	if c := p.held(); c != 3 {
		t.Fatalf("%d chunks held after a 10 kB write, want 3", c)
	}
	io.ReadFull(b, make([]byte, 9_000))
	if c := p.held(); c != 1 {
		t.Errorf("%d chunks held with 1 kB left, want 1", c)
	}
	io.ReadFull(b, make([]byte, 1_000))
	if c := p.held(); c != 0 {
		t.Errorf("%d chunks held after draining, want 0", c)
	}
}

func (p *pipe) buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *pipe) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.chunks)
}
