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
	// Sweep places the run among the variants of its scenario's sweep;
	// the zero value is a run on its own.
	Sweep Sweep
}

// Sweep is where a run stands in a sweep that shows its variants on the
// dashboard in turn. The header says "variant 2 of 3", and on a
// variant's end screen with variants after it, q goes on to the next
// and ctrl+c stops the sweep (Run then returns ErrStopSweep).
type Sweep struct {
	// Variant counts from 1; Variants is how many the sweep has (0: not
	// a sweep).
	Variant, Variants int
	// Label is the variant's values alone ("static-floor"), for the
	// header.
	Label string
}

// next reports whether variants follow this one.
func (s Sweep) next() bool { return s.Variants > 1 && s.Variant < s.Variants }

// on reports whether the run is one variant of a sweep.
func (s Sweep) on() bool { return s.Variants > 1 }

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
