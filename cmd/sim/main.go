// Command sim runs fleetsim scenarios in one process: an embedded MQTT
// broker, a leader on a bbolt outbox, thousands of simulated workers over
// real MQTT sessions, the scenario's timeline in scaled simulated time, and
// a live dashboard on a terminal.
//
//	sim run scenarios/wave-deploy.yaml        # watch it on the dashboard
//	sim check scenarios/ --junit junit.xml    # gate a CI on the scenarios
//	sim validate my-scenario.yaml             # check a file without running it
//	sim list                                  # the shipped scenarios
//	sim new my-scenario                       # a commented scenario to start from
//	sim schema > scenario.schema.json         # the format's JSON Schema, for editors
//	sim dash --broker tcp://127.0.0.1:1883    # watch a running leader process
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
)

func main() {
	// SIGHUP (the terminal closed) stops sim as SIGINT and SIGTERM do:
	// the dashboard restores the terminal, the reports are written and
	// the exit code is the runs' verdict, not the signal's.
	// A write to a stdout or stderr whose reader is gone (sim check | tee
	// log, and the Ctrl-C that stops sim ended tee first) fails instead
	// of killing sim with SIGPIPE before it has written its reports.
	ctx, stop := signal.NotifyContext(context.Background(), cli.StopSignals...)
	release := cli.CatchSIGPIPE()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	release()
	stop()
	os.Exit(code)
}

// Main runs the sim command line with args and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(newRoot(ctx, stdout, stderr), args, stderr)
}

const exitCodes = `Exit codes:
  0  every run passed: its expectations and comparisons (and, for check, its
     baseline); also 'sim run' whose run was stopped (q on the dashboard,
     SIGINT, SIGTERM or SIGHUP) before it was judged, when no run judged
     before it failed
  1  runtime failure (a run could not start, a report could not be written);
     also 'sim check' and 'sim validate' stopped by SIGINT/SIGTERM/SIGHUP
     (nothing passes unchecked)
  2  bad flags or arguments, or a scenario file with errors or past the limits
     (file:line:col and what would be valid); 'sim check': also a baseline it
     cannot compare with (missing, unreadable, or of another --workers or
     --gateway-size), refused before any run starts
  3  the outbox file a scenario names is unusable (locked, corrupt, not an outbox)
  4  a run FAILED: an expectation or a comparison across a sweep's variants
     was false, or its simulated time had to be forced on
     (run.forced_advances), or (check) its baseline regressed, or (check
     --require-kept-up) it fell behind its schedule; or it was NOT JUDGED: it
     has checks and none could be judged (each divided by zero, or read a
     timing on a run that fell behind), so it has shown nothing

Each run's verdict is one of PASS, FAIL, STOPPED or NOT JUDGED, and the
terminal, the JSON report's "status", JUnit, summary.md and the HTML pages
all say the same one (docs/REPORTS.md, "The verdict").

SIGINT, SIGTERM or SIGHUP (the terminal closed) stops sim at once, whether it
is loading files, running or checking; the dashboard leaves the terminal as
it found it. 'sim run' writes a run's reports (--report) as soon as the run
is judged, before the dashboard waits for q: a run judged before the stop
keeps its verdict (PASS, FAIL or NOT JUDGED), and only a run stopped before
its end reads STOPPED.`

// exitCodesOf is a subcommand's exit codes: only those it can exit with,
// one line each; the root's help has them in full.
func exitCodesOf(cmd string) string {
	lines := map[string][]string{
		"run": {
			"0  every run passed, or the run was stopped before it was judged (STOPPED)",
			"1  runtime failure: a run could not start, a report could not be written",
			"2  bad flags or arguments, or a scenario file with errors",
			"3  the outbox file a scenario names is unusable",
			"4  a run failed or was not judged",
		},
		"check": {
			"0  every run passed: expectations, comparisons and baseline",
			"1  runtime failure, or stopped by SIGINT/SIGTERM/SIGHUP (nothing was checked)",
			"2  bad flags or arguments, a scenario file with errors, or a baseline it",
			"   cannot compare with (missing, unreadable, another size): before any run",
			"3  the outbox file a scenario names is unusable",
			"4  a run failed or was not judged",
		},
		"validate": {
			"0  every file loads (warnings do not change it)",
			"1  stopped by SIGINT/SIGTERM/SIGHUP: nothing was validated",
			"2  bad flags or arguments, or a scenario file with errors",
		},
		"new": {
			"0  the scenario was written",
			"1  the file could not be written",
			"2  a bad name, or the file exists",
		},
		"schema": {
			"0  the schema was written",
			"1  stdout could not be written",
		},
		"dash": {
			"0  the dashboard was closed (q), or stopped by SIGINT/SIGTERM/SIGHUP",
			"1  the broker could not be reached at the start, or the terminal failed",
			"2  bad flags, or no terminal to draw on",
		},
	}[cmd]
	return "Exit codes ('sim --help' has them all, in full):\n  " + strings.Join(lines, "\n  ")
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var logs cli.LogOptions
	root := &cobra.Command{
		Use:   "sim",
		Short: "Run fleetsim scenarios: a leader, its fleet and a timeline of trouble, in one process",
		Long: `sim runs scenario files against a real leader, real MQTT sessions and a real
bbolt outbox, all in one process, in virtual time: simulated time moves to the
next thing due only once the whole process has settled, so a run measures the
same on a busy machine as on an idle one. On a terminal 'sim run' shows the
live dashboard, at most the scenario's speed (simulated seconds per wall
second); elsewhere it prints progress lines and goes as fast as the machine
allows. 'sim check' judges expectations and baselines for CI.

A scenario is a file path, a directory of *.yaml files, or the name of a
shipped scenario (see 'sim list'). docs/SCENARIOS.md documents the format.

` + exitCodes,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	logs.AddFlags(root)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newRunCmd(ctx, stdout, stderr, &logs),
		newCheckCmd(ctx, stdout, stderr, &logs),
		newValidateCmd(ctx, stdout, stderr, &logs),
		newListCmd(stdout),
		newSchemaCmd(stdout),
		newNewCmd(stdout, stderr),
		newDashCmd(ctx, stderr, &logs),
	)
	return root
}
