// Package cli holds what the fleetsim binaries share: exit codes, usage
// errors that name the flag at fault, logging set-up and secret files.
package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// Exit codes of every fleetsim binary.
const (
	ExitOK      = 0 // the command did what it was asked, or was stopped by SIGINT/SIGTERM/SIGHUP
	ExitRuntime = 1 // a failure while running (broker unreachable, port in use, lost session, ...)
	ExitUsage   = 2 // bad flags or arguments: the message names the flag and what would be valid
	ExitOutbox  = 3 // the outbox file is unusable: locked by another process, corrupt, not an outbox
	ExitFailed  = 4 // sim: a scenario ran and failed its expectations or its baseline
)

// ExitCodesHelp is the exit-code table for long help texts.
const ExitCodesHelp = `Exit codes:
  0  ok (also after SIGINT, SIGTERM or SIGHUP: a graceful stop)
  1  runtime failure (broker unreachable, port in use, session lost, ...)
  2  bad flags or arguments (the message names the flag and the valid values)
  3  outbox file unusable (locked by a running leader, corrupt, not an outbox)`

// Error is an error with the exit code it should end the process with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a bad-flag or bad-argument error (exit code 2).
func Usagef(format string, a ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// Runtime marks err as a runtime failure (exit code 1).
func Runtime(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: ExitRuntime, Err: err}
}

// Outbox marks err as an unusable outbox file (exit code 3).
func Outbox(err error) error { return &Error{Code: ExitOutbox, Err: err} }

// Code returns the exit code for err: nil is 0, an *Error its Code,
// anything else a runtime failure.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitRuntime
}

// Execute runs root with args, prints an error (with a hint to --help for
// usage errors) to stderr, and returns the exit code. Cobra's own flag
// errors and unknown arguments count as usage errors.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &Error{Code: ExitUsage, Err: err}
	})
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	code := Code(err)
	fmt.Fprintf(stderr, "%s: error: %v\n", root.Name(), err)
	if code == ExitUsage && cmd != nil {
		fmt.Fprintf(stderr, "Run '%s --help' for the flags and examples.\n", cmd.CommandPath())
	}
	return code
}

// NoArgs refuses positional arguments, naming them (a usage error).
func NoArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if c.HasSubCommands() {
		names := []string{}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		return Usagef("unknown command %q for %q (valid: %s)", args[0], c.CommandPath(), strings.Join(names, ", "))
	}
	return Usagef("%s takes no arguments, got %q", c.CommandPath(), args)
}

// LogOptions are the logging flags every binary has.
type LogOptions struct {
	Level  string
	Format string
}

// AddFlags registers --log-level and --log-format on c, for c and every
// command under it, and makes each of them check both flags before it
// runs (Validate), whether or not it logs: a bad value is the same usage
// error everywhere. A command under c that sets its own
// PersistentPreRunE must call Validate itself.
func (o *LogOptions) AddFlags(c *cobra.Command) {
	c.PersistentFlags().StringVar(&o.Level, "log-level", "info", "log level: debug, info, warn or error")
	c.PersistentFlags().StringVar(&o.Format, "log-format", "text", "log format on stderr: text or json")
	pre := c.PersistentPreRunE
	c.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := o.Validate(); err != nil {
			return err
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}

// Validate checks --log-level and --log-format: a usage error naming the
// flag and the valid values.
func (o LogOptions) Validate() error {
	_, err := o.level()
	if err == nil && o.Format != "text" && o.Format != "json" {
		err = Usagef("--log-format %q: want text or json", o.Format)
	}
	return err
}

func (o LogOptions) level() (slog.Level, error) {
	switch o.Level {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, Usagef("--log-level %q: want debug, info, warn or error", o.Level)
}

// Logger builds the slog logger to w, or a usage error naming the flag
// (Validate).
func (o LogOptions) Logger(w io.Writer) (*slog.Logger, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	lvl, _ := o.level()
	ho := &slog.HandlerOptions{Level: lvl}
	if o.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return slog.New(slog.NewTextHandler(w, ho)), nil
}

// ReadSecret reads a secret or password file named by flag: its content
// without surrounding white space, which must not be empty. An unreadable
// or empty file is a usage error naming the flag.
func ReadSecret(flag, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Usagef("--%s: %v", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, Usagef("--%s %s: the file is empty", flag, path)
	}
	return []byte(s), nil
}

// BrokersHelp describes a --broker flag's value, for flag help.
const BrokersHelp = "tcp://host:port (or mqtt://, ssl://, tls://, mqtts://); the nodes of a cluster separated by commas, tried in turn at every (re)connect"

// Brokers checks a --broker flag (named flag): one network broker URL,
// or several separated by commas (transport.ParseBrokers); the usage
// error names the entry at fault.
func Brokers(flag, value string) error {
	urls, err := transport.ParseBrokers(value)
	if err != nil {
		return Usagef("--%s %q: %v", flag, value, err)
	}
	for _, u := range urls {
		if u.Scheme == "mem" {
			return Usagef("--%s %q: mem:// is the embedded broker inside one process; want a network broker: tcp://host:port", flag, value)
		}
	}
	return nil
}
