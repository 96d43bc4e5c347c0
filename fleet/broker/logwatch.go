package broker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/fleetsim/fleetsim/fleet/ratelog"
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
// event loop's end, drops mochi's keepalive warning for keepalive 0,
// which fleetsim's in-memory clients use on purpose (100k of them would
// log 100k warnings), and shortens mochi's warning about a packet it
// refused (see packetError).
type watchHandler struct {
	inner slog.Handler
	st    *logState
	lim   *ratelog.Limiter
}

func newWatchHandler(inner slog.Handler, lim *ratelog.Limiter) (watchHandler, *logState) {
	st := &logState{halted: make(chan struct{})}
	return watchHandler{inner: inner, st: st, lim: lim}, st
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
	case packetErrorMsg:
		var ok bool
		if r, ok = h.packetError(r); !ok {
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
	return watchHandler{inner: h.inner.WithAttrs(as), st: h.st, lim: h.lim}
}

func (h watchHandler) WithGroup(name string) slog.Handler {
	return watchHandler{inner: h.inner.WithGroup(name), st: h.st, lim: h.lim}
}

// packetErrorMsg is mochi's warning when it refuses a packet after reading
// it, with the whole packet as attribute "pk": a refused 1 MiB publish
// became 3 MB of log, its payload written out as decimal bytes.
const packetErrorMsg = "error processing packet"

// packetError rewrites mochi's packet warning to name the packet by its
// type, topic and payload size, never its bytes, and rate-limits it per
// client. It reports false for a record to drop: one the limiter holds
// back, or a publish refused for its topic, which the hook has counted
// and logged already.
func (h watchHandler) packetError(r slog.Record) (slog.Record, bool) {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	client, drop := "", false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "error":
			if err, ok := a.Value.Any().(error); ok && errors.Is(err, packets.ErrNotAuthorized) {
				drop = true
				return false
			}
		case "client":
			client = a.Value.String()
		case "pk":
			if pk, ok := a.Value.Any().(packets.Packet); ok {
				out.AddAttrs(slog.String("packet", packetName(pk.FixedHeader.Type)),
					slog.String("topic", ratelog.Brief(pk.TopicName, 128)), slog.Int("payload_bytes", len(pk.Payload)))
			}
			return true
		}
		out.AddAttrs(a)
		return true
	})
	if drop {
		return out, false
	}
	if ok, n := h.lim.Allow("packet error of " + client); !ok {
		return out, false
	} else if n > 0 {
		out.AddAttrs(slog.Uint64("suppressed", n))
	}
	return out, true
}
