package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

type deployOptions struct {
	broker             string
	leaderPasswordFile string
	prefix             string
	version            string
	kind               string
	workers            string
	all                bool
	waveSize           int
	waveInterval       time.Duration
	ttl                time.Duration
	timeout            time.Duration
	requestID          string
	cancel             int // with cancelSet
	cancelSet          bool
}

func (o *deployOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.broker, "broker", "tcp://"+broker.DefaultTCPAddr, "the broker the running leader is connected to: "+cli.BrokersHelp)
	f.StringVar(&o.leaderPasswordFile, "leader-password-file", "", "the leader's MQTT password (needed when the broker checks credentials)")
	f.StringVar(&o.prefix, "topic-prefix", wire.DefaultPrefix, "the fleet's topic prefix")
	f.StringVar(&o.version, "version", "", "version to deploy (required): 1 to 64 letters, digits or . _ + -, starting with a letter or digit, e.g. 2.1.0-rc.1 (the rule the workers install by)")
	f.StringVar(&o.kind, "kind", "firmware", "what to deploy: firmware or config")
	f.StringVar(&o.workers, "workers", "", "workers to update, in wave order: ids and ranges, comma-separated, e.g. w-0000..w-0999,w-2000")
	f.BoolVar(&o.all, "all", false, "update every worker the leader has seen (sorted by id)")
	f.IntVar(&o.waveSize, "wave-size", 0, "workers per wave (0: all in one wave)")
	f.DurationVar(&o.waveInterval, "wave-interval", 0, "time between the waves' starts")
	f.DurationVar(&o.ttl, "ttl", 0, "drop a worker's update still undelivered this long after its wave started (0: never)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the leader's answer (the request is sent again meanwhile, after 2 s, 4 s, then every 8 s)")
	f.StringVar(&o.requestID, "request-id", "", "the request's id (default: a new one): give the id of a request whose answer did not come to ask again; the leader starts one deploy per id")
	f.IntVar(&o.cancel, "cancel", -1, "cancel the deploy with this number (the one 'leader deploy' printed) instead: its updates not yet sent are withdrawn, those out for delivery finish")
}

// exitUnknown is 'leader deploy”s exit code when no answer came: the
// deploy (or cancel) may or may not have happened.
const exitUnknown = 5

// request validates the flags and builds the request: a deploy, or with
// --cancel the cancel of one. changed says whether a flag was given.
func (o deployOptions) request(changed func(string) bool) (control.Request, error) {
	req := control.Request{ID: o.requestID}
	if o.requestID != "" {
		if err := wire.ValidWorkerID(o.requestID); err != nil {
			return req, cli.Usagef("--request-id %q: %v", o.requestID, err)
		}
	}
	if o.cancelSet {
		for _, f := range []string{"version", "kind", "workers", "all", "wave-size", "wave-interval", "ttl"} {
			if changed(f) {
				return req, cli.Usagef("--cancel %d: give no --%s with it (a cancel names a deploy only)", o.cancel, f)
			}
		}
		if o.cancel < 0 {
			return req, cli.Usagef("--cancel %d: want the number of a deploy, 0 or more (the one 'leader deploy' printed)", o.cancel)
		}
		req.Cancel = &o.cancel
		return req, o.connection(&req)
	}
	req.Kind, req.Version, req.All, req.WaveSize = o.kind, o.version, o.all, o.waveSize
	req.WaveIntervalMs, req.TTLMs = o.waveInterval.Milliseconds(), o.ttl.Milliseconds()
	switch {
	case o.version == "":
		return req, cli.Usagef("--version is required, e.g. --version 2.0.0")
	case wire.ValidVersion(o.version) != nil:
		return req, cli.Usagef("--%v", wire.ValidVersion(o.version))
	case o.kind != "firmware" && o.kind != "config":
		return req, cli.Usagef("--kind %q: want firmware or config", o.kind)
	case o.all == (o.workers != ""):
		return req, cli.Usagef("give exactly one of --workers (e.g. w-0000..w-0999) and --all")
	case o.waveSize < 0:
		return req, cli.Usagef("--wave-size %d: want 0 (one wave) or more", o.waveSize)
	case o.waveInterval < 0:
		return req, cli.Usagef("--wave-interval %v: want 0 or a positive duration", o.waveInterval)
	case o.ttl < 0:
		return req, cli.Usagef("--ttl %v: want 0 (none) or a positive duration", o.ttl)
	}
	if err := o.connection(&req); err != nil {
		return req, err
	}
	if o.workers != "" {
		ws, err := parseWorkers(o.workers)
		if err != nil {
			return req, cli.Usagef("--workers %q: %v", o.workers, err)
		}
		req.Workers = ws
		if err := leader.CheckWaves(len(ws), o.waveSize); err != nil {
			return req, cli.Usagef("--wave-size %d: %v", o.waveSize, err)
		}
	}
	return req, nil
}

// connection checks the flags every request needs.
func (o deployOptions) connection(*control.Request) error {
	if o.timeout <= 0 {
		return cli.Usagef("--timeout %v: want a positive duration", o.timeout)
	}
	if err := validBrokerURL("broker", o.broker); err != nil {
		return err
	}
	return validPrefix(o.prefix)
}

// password reads --leader-password-file, if given.
func (o deployOptions) password() (string, error) {
	if o.leaderPasswordFile == "" {
		return "", nil
	}
	pw, err := cli.ReadSecret("leader-password-file", o.leaderPasswordFile)
	return string(pw), err
}

// maxWorkers bounds what --workers may expand to.
const maxWorkers = 10_000_000

// parseWorkers expands "w-0000..w-0003,x-7" to w-0000 w-0001 w-0002
// w-0003 x-7. Both ends of a range share a prefix and a digit count.
func parseWorkers(spec string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		from, to, isRange := strings.Cut(item, "..")
		var ids []string
		if !isRange {
			ids = []string{item}
		} else {
			p1, n1, w1, ok1 := splitNumber(from)
			p2, n2, w2, ok2 := splitNumber(to)
			switch {
			case !ok1 || !ok2:
				return nil, fmt.Errorf("range %q: both ends must end in digits, e.g. w-0000..w-0999", item)
			case p1 != p2 || w1 != w2:
				return nil, fmt.Errorf("range %q: both ends must have the same prefix and digit count, e.g. w-0000..w-0999", item)
			case n2 < n1:
				return nil, fmt.Errorf("range %q: the end is before the start", item)
			case n2-n1+1 > maxWorkers || len(out)+int(n2-n1+1) > maxWorkers:
				return nil, fmt.Errorf("range %q: more than %d workers", item, maxWorkers)
			}
			for n := n1; n <= n2; n++ {
				ids = append(ids, fmt.Sprintf("%s%0*d", p1, w1, n))
			}
		}
		for _, id := range ids {
			if err := wire.ValidWorkerID(id); err != nil {
				return nil, err
			}
			if seen[id] {
				return nil, fmt.Errorf("worker %q given twice", id)
			}
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// splitNumber splits "w-0042" into "w-", 42 and 4 digits.
func splitNumber(s string) (prefix string, n uint64, width int, ok bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 18 {
		return "", 0, 0, false
	}
	n, err := strconv.ParseUint(s[i:], 10, 64)
	return s[:i], n, len(s) - i, err == nil
}

func newDeployCmd(ctx context.Context, logs *cli.LogOptions, stdout, stderr io.Writer) *cobra.Command {
	var o deployOptions
	c := &cobra.Command{
		Use:   "deploy",
		Short: "Ask a running leader to deploy a version to its workers, in waves, or to cancel a deploy",
		Long: `leader deploy connects to the broker a running leader uses and asks it to
deploy a version (docs/PROTOCOL.md, "Operating a running leader"). It
prints the leader's answer and exits once the deploy is in the leader's
outbox: the waves then go out on their own schedule, survive a leader
restart, and show on /metrics (fleetsim_deploy_*, fleetsim_workers_version)
and on <prefix>/_leader/stats.

With --cancel N it asks the leader to cancel deploy N instead: the
updates not yet sent (in waves due or to come) are withdrawn and never
sent, also after a restart; those out for delivery finish, and count as
delivered if acked, as cancelled if they come back undelivered.

Until the answer comes it sends the request again (after 2 s, 4 s, then
every 8 s): a leader under load may miss a request or fail to publish
its answer. The copies share the request's id, and the leader starts one
deploy per id, so a copy never deploys twice; a copy of a cancel finds
the deploy cancelled. With no answer within --timeout the outcome is
unknown (exit 5): the message says how to look, and giving the same
--request-id asks again safely.

It logs in as the leader (the only login allowed to command a fleet):
give --leader-password-file when the broker checks credentials. It does
not open the outbox file; for a leader that is not running, start one.

` + cli.ExitCodesHelp + `
  5  no answer within --timeout: the deploy (or cancel) may or may not have happened
  (1 also when the leader refused the request: then nothing was deployed or cancelled)`,
		Example: `  # every worker the leader has seen, 100 at a time, 10 s apart
  leader deploy --version 2.0.0 --all --wave-size 100 --wave-interval 10s

  # a canary: two ranges, config instead of firmware
  leader deploy --kind config --version 2.1.0 --workers w-0000..w-0009,w-0500..w-0509

  # stop deploy 3: what it has not sent yet is not sent
  leader deploy --cancel 3

  # no answer came for request d3f2a1c0 (exit 5): ask again, safely
  leader deploy --version 2.0.0 --all --wave-size 100 --request-id d3f2a1c0`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cancelSet = cmd.Flags().Changed("cancel")
			req, err := o.request(cmd.Flags().Changed)
			if err != nil {
				return err
			}
			pass, err := o.password()
			if err != nil {
				return err
			}
			if _, err := logs.Logger(stderr); err != nil {
				return err
			}
			return runDeploy(ctx, o, req, pass, stdout)
		},
	}
	o.addFlags(c)
	return c
}

func runDeploy(ctx context.Context, o deployOptions, req control.Request, pass string, stdout io.Writer) error {
	topics := wire.Topics{Prefix: o.prefix}
	if req.ID == "" {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		req.ID = "d" + hex.EncodeToString(rnd[:])
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:]) // a client id of its own, also when an id is given again
	co := transport.ClientOptions{ID: "_leader-deploy-" + req.ID + "-" + hex.EncodeToString(rnd[:]), Broker: o.broker, CleanSession: true}
	if pass != "" {
		co.Username, co.Password = wire.LeaderUsername, pass
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	sess, err := transport.Connect(ctx, co, nil)
	if err != nil {
		if pass == "" {
			err = fmt.Errorf("%w (if the broker checks credentials, give --leader-password-file)", err)
		}
		return cli.Runtime(err)
	}
	defer sess.Close(true)
	ans, copies, err := control.Ask(ctx, sess, topics, req)
	return o.outcome(req, topics, ans, copies, err, stdout)
}

// outcome prints the leader's answer, or returns the error 'leader
// deploy' exits with: the leader refused (1), nothing could be sent (1),
// or no answer came (exitUnknown).
func (o deployOptions) outcome(req control.Request, topics wire.Topics, ans control.Answer, copies int, err error, stdout io.Writer) error {
	var notSent *control.NotSentError
	switch {
	case errors.As(err, &notSent):
		if n := notSent.Bytes; n > broker.DefaultMaxPacketSize-1024 {
			err = fmt.Errorf("%w (the request is %d bytes: a broker refuses packets over its limit, the embedded one over 'leader run --max-packet-size', 1 MiB by default; use --all, fewer workers per deploy, or a higher limit)", err, n)
		}
		return cli.Runtime(err)
	case errors.Is(err, control.ErrNoAnswer):
		return &cli.Error{Code: exitUnknown, Err: fmt.Errorf("no answer from a leader on %s within %v (asked %d times): %s; is 'leader run' running and connected to %s with --topic-prefix %s?",
			topics.LeaderDeploy(), o.timeout, copies, o.unknown(req, topics), o.broker, o.prefix)}
	case err != nil:
		return cli.Runtime(err)
	case !ans.OK && req.Cancel != nil:
		return cli.Runtime(fmt.Errorf("the leader refused to cancel: %s", ans.Error))
	case !ans.OK:
		return cli.Runtime(fmt.Errorf("the leader refused the deploy: %s", ans.Error))
	}
	printAnswer(stdout, req, ans)
	return nil
}

// unknown says what no answer means, and how to find out.
func (o deployOptions) unknown(req control.Request, topics wire.Topics) string {
	if req.Cancel != nil {
		return fmt.Sprintf("deploy %d may or may not be cancelled. Asking again is safe: leader deploy --cancel %d; or look at deploy %d in the leader's stats on %s (Cancelled) or its log",
			*req.Cancel, *req.Cancel, *req.Cancel, topics.LeaderStats())
	}
	return fmt.Sprintf("the deploy may or may not have started. Asking again is safe, the leader starts one deploy per request id: give the same flags and --request-id %s; or look for request %s in the leader's stats on %s (deploys[].Request) or its log",
		req.ID, req.ID, topics.LeaderStats())
}

// printAnswer prints what the leader did.
func printAnswer(w io.Writer, req control.Request, ans control.Answer) {
	switch {
	case req.Cancel != nil && ans.Finished:
		fmt.Fprintf(w, "deploy %d had nothing left to send: nothing to cancel (request %s)\n", ans.Deploy, req.ID)
	case req.Cancel != nil:
		again := ""
		if ans.Again {
			again = ", cancelled before"
		}
		fmt.Fprintf(w, "deploy %d cancelled%s: %d updates withdrawn, %d out for delivery finish (request %s)\n", ans.Deploy, again, ans.Withdrawn, ans.InFlight, req.ID)
	case ans.Again:
		fmt.Fprintf(w, "deploy %d started: %s %s to %s in %s (request %s, which had started it before)\n",
			ans.Deploy, cmp.Or(req.Kind, string(wire.KindFirmware)), req.Version, count(ans.Targets, "worker"), count(ans.Waves, "wave"), req.ID)
	default:
		fmt.Fprintf(w, "deploy %d started: %s %s to %s in %s (request %s)\n",
			ans.Deploy, cmp.Or(req.Kind, string(wire.KindFirmware)), req.Version, count(ans.Targets, "worker"), count(ans.Waves, "wave"), req.ID)
	}
}

// count is n things, in the singular for one: "1 wave", "4 waves".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
