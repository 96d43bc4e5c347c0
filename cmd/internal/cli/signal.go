package cli

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// StopSignals are the signals that stop a fleetsim binary gracefully, all
// the same way: SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal
// closed). Give them to signal.NotifyContext in main.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// CatchSIGPIPE keeps the process alive when it writes to a standard output
// or error whose reader is gone (worker 2>&1 | tee log, and the same
// Ctrl-C ended tee first): the write fails with a broken pipe (EPIPE)
// instead, and the shutdown carries on and saves what it must. Unhandled,
// the Go runtime ends the process with SIGPIPE at such a write, in the
// middle of its shutdown.
//
// Once caught, SIGPIPE is not a stop signal: the kernel sends it for a
// broken network connection too (a broker that went away), which the
// binaries ride out. A broken standard output stops them through
// StopOnBrokenPipe. Call release before the process exits.
func CatchSIGPIPE() (release func()) {
	// Never read: a signal that finds the buffer full is dropped, and
	// being caught at all is what matters.
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// StopOnBrokenPipe returns w wrapped: the first write to it that fails
// with a broken pipe (EPIPE: whoever read the output is gone, as in
// worker 2>&1 | head) calls stop, which should end the process's context
// and so stop it gracefully, as SIGINT would (a context.CancelFunc of its
// own: signal.NotifyContext's stop would also let a later signal kill
// the process in the middle of its shutdown); that write and every later
// one are dropped and reported as written, so no log line or report
// aborts the shutdown that follows. Other errors pass through. w needs
// CatchSIGPIPE, or the runtime ends the process at that write.
func StopOnBrokenPipe(w io.Writer, stop func()) io.Writer {
	return &pipeWriter{w: w, stop: stop}
}

// pipeWriter is StopOnBrokenPipe's writer; it is safe for concurrent use
// if w is.
type pipeWriter struct {
	w      io.Writer
	stop   func()
	broken atomic.Bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	if p.broken.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		if !p.broken.Swap(true) {
			p.stop()
		}
		return len(b), nil
	}
	return n, err
}
