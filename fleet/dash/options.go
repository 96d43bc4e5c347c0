package dash

import (
	"io"
	"time"
)

// Options configure the dashboard. The zero value is ready to use.
type Options struct {
	// Refresh is how often the model pulls a snapshot. Default 100ms;
	// shorter values are raised to MinRefresh, so the dashboard never
	// redraws more than 50 times a second.
	Refresh time.Duration
	// Logs collects log lines for the event pane. Run makes one when nil
	// and points the standard logger at it while the UI is up.
	Logs *LogBuffer
	// Input and Output are where Run reads keys and draws; nil means the
	// terminal (os.Stdin and os.Stdout).
	Input  io.Reader
	Output io.Writer
}

// DefaultRefresh and MinRefresh bound Options.Refresh.
const (
	DefaultRefresh = 100 * time.Millisecond
	MinRefresh     = 20 * time.Millisecond
)

func (o Options) withDefaults() Options {
	if o.Refresh == 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Refresh < MinRefresh {
		o.Refresh = MinRefresh
	}
	return o
}
