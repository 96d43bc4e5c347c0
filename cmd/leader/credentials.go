package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

type credentialsOptions struct {
	secretFile string
	rng        string
	out        string
}

func newCredentialsCmd(stdout, stderr io.Writer) *cobra.Command {
	var o credentialsOptions
	c := &cobra.Command{
		Use:   "credentials",
		Short: "Issue a worker host the credentials for its range of ids",
		Long: `leader credentials writes the credentials of one range of worker ids to a
file, for the worker host that runs them ('worker --credentials-file').
They hold the range and its key, the HMAC of the range under the fleet
secret (the --secret-file of 'leader run'), never the secret itself: with
them a host logs its workers in, and gateways carrying them, and the
broker takes no id outside the range. Give each host its own range; a
host whose credentials leak can act for its own range only.

--range is two ids with the same prefix before their trailing digits
(w-0000..w-0999), the range syntax of a gateway's login (w-{0..999}), or
one id (w-0042, a range of one number). A range holds its numbers with
or without leading zeros: w-{0..999} holds w-7, w-0007 and w-00007.
Ranges issued to different hosts should not overlap: mind that
w-{0..999} and w-1{0..99} both hold w-100.

The file (mode 0600, never overwritten) is plain text; docs/PROTOCOL.md
gives its format and the password a worker in another language derives
from it.

` + cli.ExitCodesHelp,
		Example: `  # a host running w-0000 to w-0999, and one running w-1000 to w-1999
  leader credentials --secret-file fleet.secret --range w-0000..w-0999 --out hostA.cred
  leader credentials --secret-file fleet.secret --range 'w-{1000..1999}' --out hostB.cred
  # on host A (the file copied there):
  worker --broker tcp://leader.lan:1883 --credentials-file hostA.cred --count 1000

  # one device, to stdout
  leader credentials --secret-file fleet.secret --range w-0042 --out -`,
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error { return issueCredentials(o, stdout, stderr) },
	}
	f := c.Flags()
	f.StringVar(&o.secretFile, "secret-file", "", "file holding the fleet secret (the --secret-file of 'leader run'); required")
	f.StringVar(&o.rng, "range", "", "the ids: w-0000..w-0999, w-{0..999} or one id; required")
	f.StringVar(&o.out, "out", "", "file to write (created with mode 0600, never overwritten), or - for stdout; required")
	return c
}

func issueCredentials(o credentialsOptions, stdout, stderr io.Writer) error {
	switch {
	case o.secretFile == "":
		return cli.Usagef("--secret-file: required (the file 'leader run --secret-file' reads)")
	case o.rng == "":
		return cli.Usagef("--range: required, e.g. w-0000..w-0999")
	case o.out == "":
		return cli.Usagef("--out: required: a file to write, or - for stdout")
	}
	secret, err := cli.ReadSecret("secret-file", o.secretFile)
	if err != nil {
		return err
	}
	if len(secret) < broker.MinSecretLen {
		return cli.Usagef("--secret-file %s: the secret is %d bytes; want at least %d, as 'leader run' does", o.secretFile, len(secret), broker.MinSecretLen)
	}
	r, err := wire.ParseIDRange(o.rng)
	if err != nil {
		return cli.Usagef("--range: %v", err)
	}
	creds, err := wire.IssueCredentials(secret, r)
	if err != nil {
		return cli.Usagef("--range %q: %v", o.rng, err)
	}
	if o.out == "-" {
		_, err := stdout.Write(creds.File())
		return cli.Runtime(err)
	}
	f, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return cli.Usagef("--out %s: the file exists; credentials are never overwritten (remove it first, or choose another file)", o.out)
	}
	if err != nil {
		return cli.Usagef("--out %s: %v (want a new file in a writable directory)", o.out, err)
	}
	if _, err := f.Write(creds.File()); err != nil {
		f.Close()
		return cli.Runtime(fmt.Errorf("--out %s: %w", o.out, err))
	}
	if err := f.Close(); err != nil {
		return cli.Runtime(fmt.Errorf("--out %s: %w", o.out, err))
	}
	fmt.Fprintf(stderr, "credentials for %s written to %s; keep the file as secret as a password, and on that host run\n  worker --credentials-file %s --prefix %s --start %d --count %d ...\n",
		r, o.out, o.out, r.Prefix, r.First, countOf(r))
	return nil
}

// countOf is the number of numbers in r, as a worker's --count (capped
// where a count stops making sense).
func countOf(r wire.DeviceRange) uint64 {
	if r.Last-r.First >= 10_000_000 {
		return 10_000_000
	}
	return r.Last - r.First + 1
}
