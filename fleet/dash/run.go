package dash

import (
	"context"
	"errors"
	"fmt"
	"log"

	tea "github.com/charmbracelet/bubbletea"
)

// ErrStopSweep is what Run returns when the user stopped the rest of a
// sweep (ctrl+c on the end screen of a variant with variants after it;
// see Options.Sweep): the caller starts no more variants. q there
// returns nil, and the caller goes on to the next.
var ErrStopSweep = errors.New("dash: the user stopped the sweep")

// Run shows the dashboard on the terminal (the alternate screen) until
// the user quits (nil, or ErrStopSweep) or ctx ends (ctx.Err()). The terminal is restored
// either way. Run catches no signals itself: to stop on SIGINT, SIGTERM or
// SIGHUP, give it a ctx that ends on them (signal.NotifyContext).
//
// While it runs, the standard logger (and log/slog's default handler,
// which writes through it) writes into o.Logs, shown in the event pane,
// instead of onto the screen behind the UI; its output, flags and prefix
// are restored on return. A slog handler of the caller's own should be
// given o.Logs as its writer for the same reason.
func Run(ctx context.Context, src Source, ctl Controls, o Options) error {
	o = o.withDefaults()
	if o.Logs == nil {
		o.Logs = NewLogBuffer(500)
	}
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(o.Logs)
	log.SetFlags(0) // the event pane shows the simulated time
	log.SetPrefix("")
	defer func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}()

	// Signals reach the dashboard through ctx alone. bubbletea's own
	// SIGINT/SIGTERM handler would race ctx: when ctx ends the program
	// first, the handler blocks forever sending its quit message to an
	// event loop that has stopped, and the program's shutdown waits for it.
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithoutSignalHandler()}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	fm, err := tea.NewProgram(New(src, ctl, o), opts...).Run()
	switch {
	case err == nil:
		if m, ok := fm.(Model); ok && m.stopSweep {
			return ErrStopSweep
		}
		return nil
	case ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled):
		return ctx.Err()
	}
	return fmt.Errorf("dash: %w", err)
}
