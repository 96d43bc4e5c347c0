package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/outbox"
)

type dlqOptions struct {
	outboxPath string
	partitions int
	max        int
	all        bool
}

func newDLQCmd(ctx context.Context, stdout io.Writer) *cobra.Command {
	var o dlqOptions
	c := &cobra.Command{
		Use:   "dlq",
		Short: "List, replay or purge the dead letters of a leader's outbox file",
		Long: `leader dlq works on the outbox file directly: the leader that uses it must
be stopped (bbolt locks the file; with a leader running, dlq exits 3 and
says so). A command goes to the dead letters when a worker rejects it or
after --max-attempts failed deliveries.

  dlq list                    a table of the dead letters, oldest first
  dlq replay ID... | --all    back to the queue, attempts reset, due at once
                              (the next 'leader run' delivers them)
  dlq purge ID... | --all     delete for good

` + cli.ExitCodesHelp,
		Example: `  leader dlq list --outbox ./leader.db
  leader dlq replay 17 18
  leader dlq purge --all`,
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return cli.Usagef("leader dlq needs a command: list, replay or purge")
		},
	}
	c.PersistentFlags().StringVar(&o.outboxPath, "outbox", "leader.db", "the leader's bbolt outbox file")
	c.PersistentFlags().IntVar(&o.partitions, "partitions", outbox.DefaultPartitions, "the leader's --partitions (another value makes the next leader start rebuild its index)")

	list := &cobra.Command{
		Use: "list", Short: "List the dead letters, oldest first", Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.max < 0 {
				return cli.Usagef("--max %d: want 0 (all) or more", o.max)
			}
			return withOutbox(o, func(st *outbox.Bolt) error { return dlqList(ctx, st, o.max, stdout) })
		},
	}
	list.Flags().IntVar(&o.max, "max", 0, "list at most this many (0: all)")

	act := func(name, done string, f func(*outbox.Bolt, context.Context, ...uint64) (int, error)) *cobra.Command {
		cmd := &cobra.Command{
			Use:   name + " [ID...]",
			Short: fmt.Sprintf("%s the given dead letters (ids from 'dlq list'), or --all", name),
			RunE: func(_ *cobra.Command, args []string) error {
				ids, err := parseIDs(args, o.all)
				if err != nil {
					return err
				}
				return withOutbox(o, func(st *outbox.Bolt) error {
					before := st.Stats().DeadLetters
					n, err := f(st, ctx, ids...)
					if err != nil {
						return cli.Runtime(err)
					}
					asked := len(ids)
					if o.all {
						asked = before
					}
					fmt.Fprintf(stdout, "%s %d of %d dead letters asked (%d left)\n", done, n, asked, st.Stats().DeadLetters)
					return nil
				})
			},
		}
		cmd.Flags().BoolVar(&o.all, "all", false, "every dead letter")
		return cmd
	}
	c.AddCommand(list, act("replay", "replayed", (*outbox.Bolt).Replay), act("purge", "purged", (*outbox.Bolt).Purge))
	return c
}

func parseIDs(args []string, all bool) ([]uint64, error) {
	if all == (len(args) > 0) {
		return nil, cli.Usagef("give dead-letter ids (from 'leader dlq list') or --all, not both and not neither")
	}
	ids := make([]uint64, len(args))
	for i, a := range args {
		id, err := strconv.ParseUint(a, 10, 64)
		if err != nil || id == 0 {
			return nil, cli.Usagef("argument %q: want a dead-letter id (a positive integer from 'leader dlq list')", a)
		}
		ids[i] = id
	}
	return ids, nil
}

// withOutbox opens an existing outbox file, runs f and closes it. A
// missing, locked, corrupt or foreign file is exit code 3.
func withOutbox(o dlqOptions, f func(*outbox.Bolt) error) error {
	if o.partitions < 1 || o.partitions > outbox.MaxPartitions {
		return cli.Usagef("--partitions %d: want 1 to %d", o.partitions, outbox.MaxPartitions)
	}
	if _, err := os.Stat(o.outboxPath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return cli.Outbox(fmt.Errorf("outbox file %s does not exist (give the leader's --outbox)", o.outboxPath))
		}
		return cli.Outbox(err)
	}
	st, err := outbox.OpenBolt(o.outboxPath, outbox.Options{Partitions: o.partitions, OpenTimeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, outbox.ErrLocked) {
			err = fmt.Errorf("%w; stop that leader first: dlq opens the file directly", err)
		}
		return cli.Outbox(err)
	}
	err = f(st)
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cli.Runtime(cerr)
	}
	return err
}

func dlqList(ctx context.Context, st *outbox.Bolt, max int, stdout io.Writer) error {
	ms, err := st.DeadLetters(ctx, max)
	if err != nil {
		return cli.Runtime(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRECEIVER\tKIND\tKEY\tATTEMPTS\tCREATED\tLAST ERROR")
	for _, m := range ms {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", m.ID, m.Receiver, m.Kind, dash(m.Key), m.Attempts,
			m.CreatedAt.UTC().Format(time.RFC3339), dash(m.LastError))
	}
	if err := tw.Flush(); err != nil {
		return cli.Runtime(err)
	}
	fmt.Fprintf(stdout, "%d dead letters (%d in the file)\n", len(ms), st.Stats().DeadLetters)
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
