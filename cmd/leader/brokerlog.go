package main

import (
	"context"
	"log/slog"
	"strings"
)

// brokerLog quiets the embedded broker's logs: mochi logs every listener
// and hook at Info and warns about every client whose keepalive is at its
// minimum (fleetsim workers use 5 s on purpose). Below debug level only
// the broker's warnings and errors pass (refused logins and topics, the
// first drop per connection), without the keepalive warning.
type brokerLog struct {
	slog.Handler
	debug bool
}

func newBrokerLog(h slog.Handler) *slog.Logger {
	return slog.New(brokerLog{Handler: h, debug: h.Enabled(context.Background(), slog.LevelDebug)})
}

func (b brokerLog) Enabled(ctx context.Context, l slog.Level) bool {
	return (b.debug || l >= slog.LevelWarn) && b.Handler.Enabled(ctx, l)
}

func (b brokerLog) Handle(ctx context.Context, r slog.Record) error {
	if !b.debug && strings.HasPrefix(r.Message, "client keepalive is below") {
		return nil
	}
	return b.Handler.Handle(ctx, r)
}

func (b brokerLog) WithAttrs(as []slog.Attr) slog.Handler {
	return brokerLog{Handler: b.Handler.WithAttrs(as), debug: b.debug}
}

func (b brokerLog) WithGroup(name string) slog.Handler {
	return brokerLog{Handler: b.Handler.WithGroup(name), debug: b.debug}
}
