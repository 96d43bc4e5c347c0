package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/dash"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// dashFlags are the flags of 'sim dash'.
type dashFlags struct {
	broker       string
	prefix       string
	username     string
	passwordFile string
	refresh      time.Duration
}

// onTerminal says whether the dashboard can be drawn; tests replace it to
// get past the check.
var onTerminal = func() bool { return isTerminal(os.Stdout) && isTerminal(os.Stdin) }

// dialTimeout bounds connecting and subscribing.
const dialTimeout = 10 * time.Second

func newDashCmd(ctx context.Context, stderr io.Writer, logs *cli.LogOptions) *cobra.Command {
	var f dashFlags
	c := &cobra.Command{
		Use:   "dash --broker URL",
		Short: "Attach the live dashboard to a running leader process, read-only",
		Long: `dash attaches the live dashboard to a leader process started with 'leader run'
(its embedded broker, or the external one it uses). It reads the leader's
stats on <prefix>/_leader/stats (published every --stats-interval of the
leader; docs/PROTOCOL.md documents them) and every worker's retained status,
and shows the same panes as 'sim run': the leader's mailbox, the relay's AIMD
limits, the outbox, the fleet and an event log.

It is read-only: the keys that steer a run (pause, speed, partition, kill,
deploy) need the in-process runner of 'sim run' and are disabled. A worker
shows online or offline only: its status says no more. Workers at the latest
deploy's version are the larger of the leader's count by version (from the
workers' heartbeats) and the deploy's acked deliveries, both from the
newest stats report.

If the connection to the broker is lost (the broker restarts, the network
drops, a leader with its embedded broker is killed), the dashboard stays:
it shows the leader down and the workers as last known (dim, with the time
they were), says so in the header and the event log, and dials again with
exponential backoff and full jitter (windows from 100 ms doubling to 5 s)
until the broker takes it back.

On a broker with fleetsim's login policy (the leader's --secret-file), only
the leader's login may read these topics: pass --password-file with the
leader's password (the username defaults to "leader"). The dashboard uses its
own client id, so the leader's session is not disturbed.

` + exitCodesOf("dash"),
		Example: `  sim dash --broker tcp://127.0.0.1:1883
  sim dash --broker ssl://plant7:8883 --topic-prefix plant7 --password-file leader.pw`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			o, err := f.options()
			if err != nil {
				return err
			}
			if !onTerminal() {
				return cli.Usagef("sim dash needs a terminal (stdin and stdout); for numbers on a non-terminal, read %s or the leader's --metrics-addr", o.Topics.LeaderStats())
			}
			return runDash(ctx, o, f.refresh, log)
		},
	}
	c.Flags().StringVar(&f.broker, "broker", "", "the leader's broker (required): "+cli.BrokersHelp)
	c.Flags().StringVar(&f.prefix, "topic-prefix", wire.DefaultPrefix, "first topic level of the fleet's topics (the leader's --topic-prefix)")
	c.Flags().StringVar(&f.username, "username", "", "MQTT username (default with --password-file: \"leader\")")
	c.Flags().StringVar(&f.passwordFile, "password-file", "", "file holding the MQTT password (the leader's --leader-password-file on a broker with logins)")
	c.Flags().DurationVar(&f.refresh, "refresh", dash.DefaultRefresh, "how often the dashboard redraws (at least 20ms); the data change at the leader's --stats-interval")
	return c
}

// options checks the flags; every error is a usage error naming the flag.
func (f *dashFlags) options() (dash.RemoteOptions, error) {
	o := dash.RemoteOptions{Broker: f.broker, Username: f.username, Topics: wire.Topics{Prefix: f.prefix}}
	if f.broker == "" {
		return o, cli.Usagef("--broker is required: the leader's broker, e.g. tcp://127.0.0.1:1883")
	}
	if err := cli.Brokers("broker", f.broker); err != nil {
		return o, err
	}
	if f.prefix == "" {
		return o, cli.Usagef("--topic-prefix is empty: want the leader's prefix (default %q)", wire.DefaultPrefix)
	}
	if f.refresh < 0 {
		return o, cli.Usagef("--refresh %v: must not be negative", f.refresh)
	}
	if f.passwordFile != "" {
		pw, err := cli.ReadSecret("--password-file", f.passwordFile)
		if err != nil {
			return o, err
		}
		o.Password = string(pw)
		if o.Username == "" {
			o.Username = wire.LeaderUsername
		}
	}
	return o, nil
}

// runDash connects, shows the dashboard until the user quits or ctx ends
// (nil). A connection lost meanwhile is shown and dialed again.
func runDash(ctx context.Context, o dash.RemoteOptions, refresh time.Duration, log *slog.Logger) error {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	r, err := dash.DialRemote(dctx, o)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while connecting
		}
		return cli.Runtime(fmt.Errorf("%w; is the leader running, and is --broker its broker?", err))
	}
	defer r.Close()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		r.Keep(runCtx) // a lost connection is shown, and dialed again
	}()
	err = dash.Run(runCtx, r, nil, dash.Options{Refresh: refresh})
	stop()
	<-kept
	if err != nil && ctx.Err() == nil {
		log.Warn("dashboard", "err", err)
		return cli.Runtime(err)
	}
	return nil
}
