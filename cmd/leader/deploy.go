package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader"
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
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the leader's answer")
}

// request validates the flags and builds the deploy request.
func (o deployOptions) request() (deployRequest, string, error) {
	req := deployRequest{Kind: o.kind, Version: o.version, All: o.all, WaveSize: o.waveSize,
		WaveIntervalMs: o.waveInterval.Milliseconds(), TTLMs: o.ttl.Milliseconds()}
	switch {
	case o.version == "":
		return req, "", cli.Usagef("--version is required, e.g. --version 2.0.0")
	case wire.ValidVersion(o.version) != nil:
		return req, "", cli.Usagef("--%v", wire.ValidVersion(o.version))
	case o.kind != "firmware" && o.kind != "config":
		return req, "", cli.Usagef("--kind %q: want firmware or config", o.kind)
	case o.all == (o.workers != ""):
		return req, "", cli.Usagef("give exactly one of --workers (e.g. w-0000..w-0999) and --all")
	case o.waveSize < 0:
		return req, "", cli.Usagef("--wave-size %d: want 0 (one wave) or more", o.waveSize)
	case o.waveInterval < 0:
		return req, "", cli.Usagef("--wave-interval %v: want 0 or a positive duration", o.waveInterval)
	case o.ttl < 0:
		return req, "", cli.Usagef("--ttl %v: want 0 (none) or a positive duration", o.ttl)
	case o.timeout <= 0:
		return req, "", cli.Usagef("--timeout %v: want a positive duration", o.timeout)
	}
	if err := validBrokerURL("broker", o.broker); err != nil {
		return req, "", err
	}
	if err := validPrefix(o.prefix); err != nil {
		return req, "", err
	}
	if o.workers != "" {
		ws, err := parseWorkers(o.workers)
		if err != nil {
			return req, "", cli.Usagef("--workers %q: %v", o.workers, err)
		}
		req.Workers = ws
		if err := leader.CheckWaves(len(ws), o.waveSize); err != nil {
			return req, "", cli.Usagef("--wave-size %d: %v", o.waveSize, err)
		}
	}
	var pass string
	if o.leaderPasswordFile != "" {
		pw, err := cli.ReadSecret("leader-password-file", o.leaderPasswordFile)
		if err != nil {
			return req, "", err
		}
		pass = string(pw)
	}
	return req, pass, nil
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
		Short: "Ask a running leader to deploy a version to its workers, in waves",
		Long: `leader deploy connects to the broker a running leader uses and asks it to
deploy a version (docs/PROTOCOL.md, "Operating a running leader"). It
prints the leader's answer and exits once the deploy is in the leader's
outbox: the waves then go out on their own schedule, survive a leader
restart, and show on /metrics (fleetsim_workers_version) and on
<prefix>/_leader/stats.

It logs in as the leader (the only login allowed to command a fleet):
give --leader-password-file when the broker checks credentials. It does
not open the outbox file; for a leader that is not running, start one.

` + cli.ExitCodesHelp + `
  (1 also when no leader answered within --timeout, or it refused the deploy)`,
		Example: `  # every worker the leader has seen, 100 at a time, 10 s apart
  leader deploy --version 2.0.0 --all --wave-size 100 --wave-interval 10s

  # a canary: two ranges, config instead of firmware
  leader deploy --kind config --version 2.1.0 --workers w-0000..w-0009,w-0500..w-0509`,
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			req, pass, err := o.request()
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

func runDeploy(ctx context.Context, o deployOptions, req deployRequest, pass string, stdout io.Writer) error {
	topics := wire.Topics{Prefix: o.prefix}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	req.ID = "d" + hex.EncodeToString(rnd[:])
	co := transport.ClientOptions{ID: "_leader-deploy-" + req.ID, Broker: o.broker, CleanSession: true}
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
	answers := make(chan []byte, 1)
	err = sess.Subscribe(ctx, topics.LeaderDeployReply(req.ID), 1, func(_ string, p []byte) {
		select {
		case answers <- p:
		default:
		}
	})
	if err != nil {
		return cli.Runtime(err)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return cli.Runtime(err)
	}
	if err := sess.Publish(ctx, topics.LeaderDeploy(), 1, false, b); err != nil {
		if len(b) > broker.DefaultMaxPacketSize-1024 {
			err = fmt.Errorf("%w (the request is %d bytes: a broker refuses packets over its limit, the embedded one over 'leader run --max-packet-size', 1 MiB by default; use --all, fewer workers per deploy, or a higher limit)", err, len(b))
		}
		return cli.Runtime(fmt.Errorf("publish the deploy request: %w", err))
	}
	var ans deployAnswer
	select {
	case p := <-answers:
		if err := json.Unmarshal(p, &ans); err != nil {
			return cli.Runtime(fmt.Errorf("the leader's answer is not JSON: %w", err))
		}
	case <-ctx.Done():
		return cli.Runtime(fmt.Errorf("no answer from a leader on %s within %v: is 'leader run' running and connected to %s with --topic-prefix %s? (nothing was deployed)",
			topics.LeaderDeploy(), o.timeout, o.broker, o.prefix))
	}
	if !ans.OK {
		return cli.Runtime(fmt.Errorf("the leader refused the deploy: %s", ans.Error))
	}
	fmt.Fprintf(stdout, "deploy %d started: %s %s to %d workers in %d waves (request %s)\n",
		ans.Deploy, req.Kind, req.Version, ans.Targets, ans.Waves, req.ID)
	return nil
}
