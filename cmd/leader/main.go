// Command leader runs a fleetsim leader: an embedded MQTT broker (or a
// connection to an external one), the durable bbolt outbox with its AIMD
// relay, Prometheus /metrics, and the tools that act on a running leader
// (deploy) or on its outbox file (dlq), and the credentials of worker
// hosts (credentials).
//
//	leader run --listen 127.0.0.1:1883 --outbox ./leader.db --metrics-addr 127.0.0.1:9464
//	leader deploy --version 2.0.0 --all --wave-size 100 --wave-interval 10s
//	leader dlq list
//	leader credentials --secret-file fleet.secret --range w-0000..w-0999 --out hostA.cred
package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
)

func main() {
	// SIGINT, SIGTERM, SIGHUP and a broken pipe on stdout or stderr (its
	// reader gone) all stop the leader the same way: the relay settles,
	// the leader announces itself offline, the outbox is closed, exit 0.
	ctx, stop := signal.NotifyContext(context.Background(), cli.StopSignals...)
	// Not stop: the signals stay caught until the shutdown is done.
	ctx, brokenPipe := context.WithCancel(ctx)
	release := cli.CatchSIGPIPE()
	code := Main(ctx, os.Args[1:], cli.StopOnBrokenPipe(os.Stdout, brokenPipe), cli.StopOnBrokenPipe(os.Stderr, brokenPipe))
	release()
	brokenPipe()
	stop()
	os.Exit(code)
}

// Main runs the leader command line with args and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(newRoot(ctx, stdout, stderr), args, stderr)
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var logs cli.LogOptions
	run := newRunCmd(ctx, &logs, stderr)
	root := &cobra.Command{
		Use:   "leader",
		Short: "Run a fleetsim leader, deploy to its fleet, inspect its dead letters",
		Long: `leader is the fleetsim leader as its own process. Workers (the 'worker'
command, or any MQTT client speaking docs/PROTOCOL.md) connect to its
embedded broker over TCP, or both sides connect to an external broker such
as Mosquitto. Commands wait in a durable bbolt outbox and are delivered by
a partitioned AIMD relay; a leader killed with -9 carries on from the file.

Without a subcommand, leader behaves as 'leader run'.

` + cli.ExitCodesHelp,
		Example: `  # terminal 1: the leader, with Prometheus metrics
  leader run --outbox ./leader.db --metrics-addr 127.0.0.1:9464
  # terminal 2: 1,000 workers
  worker --broker tcp://127.0.0.1:1883 --count 1000
  # terminal 3: roll out 2.0.0 in waves of 100, 10 s apart
  leader deploy --version 2.0.0 --all --wave-size 100 --wave-interval 10s`,
		Args: cli.NoArgs,
		// The root shares run's flags so that 'leader --outbox x' works.
		RunE: run.RunE,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Flags().AddFlagSet(run.Flags())
	logs.AddFlags(root)
	root.AddCommand(run, newDeployCmd(ctx, &logs, stdout, stderr), newDLQCmd(ctx, stdout), newCredentialsCmd(stdout, stderr))
	return root
}
