package transport

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// mochi 2.7.9 gives no way to wait for its event loop goroutine to end
// after Server.Close; the loop's last act is this debug line. The broker's
// logger watches for it during shutdown, so Broker.Close can return after
// the loop is gone.
const loopHaltedMsg = "system event loop halted"

// logState is shared by a watchHandler and the handlers derived from it.
type logState struct {
	closing atomic.Bool   // shutdown began: let debug records through to Handle
	halted  chan struct{} // closed when loopHaltedMsg is seen
	once    sync.Once
}

// watchHandler wraps the user's slog.Handler for mochi: it watches for the
// event loop's end and drops mochi's keepalive warning for keepalive 0,
// which fleetsim's in-memory clients use on purpose (100k of them would
// log 100k warnings).
type watchHandler struct {
	inner slog.Handler
	st    *logState
}

func newWatchHandler(inner slog.Handler) (watchHandler, *logState) {
	st := &logState{halted: make(chan struct{})}
	return watchHandler{inner: inner, st: st}, st
}

func (h watchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l) || (l == slog.LevelDebug && h.st.closing.Load())
}

func (h watchHandler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case loopHaltedMsg:
		h.st.once.Do(func() { close(h.st.halted) })
	case mqtt.ErrMinimumKeepalive.Error():
		if keepaliveZero(r) {
			return nil
		}
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func keepaliveZero(r slog.Record) bool {
	zero := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "keepalive" {
			zero = a.Value.String() == "0"
			return false
		}
		return true
	})
	return zero
}

func (h watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return watchHandler{inner: h.inner.WithAttrs(as), st: h.st}
}

func (h watchHandler) WithGroup(name string) slog.Handler {
	return watchHandler{inner: h.inner.WithGroup(name), st: h.st}
}
