// Command worker runs a pool of simulated fleetsim workers against a
// broker: each with its own MQTT session (or behind a gateway that carries
// many on one), bounded mailbox, service time, heartbeat and telemetry,
// and reconnect policy.
//
//	worker --broker tcp://127.0.0.1:1883 --count 1000 --prefix w- --start 0
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

func main() {
	// SIGINT, SIGTERM, SIGHUP and a broken pipe on stderr (its reader
	// gone) all stop the workers the same way: offline announced, --state
	// written, exit 0.
	ctx, stop := signal.NotifyContext(context.Background(), cli.StopSignals...)
	// Not stop: the signals stay caught until the shutdown is done.
	ctx, brokenPipe := context.WithCancel(ctx)
	release := cli.CatchSIGPIPE()
	code := Main(ctx, os.Args[1:], cli.StopOnBrokenPipe(os.Stderr, brokenPipe))
	release()
	brokenPipe()
	stop()
	os.Exit(code)
}

// Main runs the worker command line with args and returns the exit code.
func Main(ctx context.Context, args []string, stderr io.Writer) int {
	return cli.Execute(newRoot(ctx, stderr), args, stderr)
}

type options struct {
	broker      string
	credentials string
	secretFile  string // no longer taken: a usage error that says what to do
	topicPrefix string
	count       int
	prefix      string
	start       uint64
	width       int
	mailbox     int
	policy      string
	service     string
	heartbeat   time.Duration
	telemetry   time.Duration
	reconnect   string
	backoffBase time.Duration
	backoffCap  time.Duration
	keepalive   time.Duration
	askTimeout  time.Duration
	ramp        time.Duration
	seed        uint64
	version     string
	report      time.Duration
	state       string
	connTimeout time.Duration
	gatewaySize sizeFlag
}

// sizeFlag is an int flag that knows whether it was given: --gateway-size
// 0 is an error, not the same as leaving it out.
type sizeFlag struct {
	n   int
	set bool
}

func (f *sizeFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want a whole number")
	}
	f.n, f.set = n, true
	return nil
}

func (f *sizeFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *sizeFlag) Type() string { return "int" }

func (o *options) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.broker, "broker", "tcp://127.0.0.1:1883", "the broker: "+cli.BrokersHelp)
	f.StringVar(&o.credentials, "credentials-file", "", "file of credentials for a range of ids, issued by 'leader credentials': each worker (and gateway) logs in with a password derived from them; every id of this process must be in their range")
	f.StringVar(&o.secretFile, "secret-file", "", "no longer taken: a worker host holds credentials for its range (--credentials-file), never the fleet secret")
	_ = f.MarkHidden("secret-file")
	f.StringVar(&o.topicPrefix, "topic-prefix", wire.DefaultPrefix, "the fleet's topic prefix")
	f.IntVar(&o.count, "count", 1, "number of workers in this process")
	f.StringVar(&o.prefix, "prefix", "w-", "worker id prefix; ids are prefix + zero-padded index")
	f.Uint64Var(&o.start, "start", 0, "index of the first worker (give each process a disjoint range)")
	f.IntVar(&o.width, "width", 4, "digits of the index; when the last index needs more, every id of the process gets that many")
	f.IntVar(&o.mailbox, "mailbox", worker.DefaultMailboxCapacity, "capacity of each worker's command mailbox")
	f.StringVar(&o.policy, "policy", "reject", "full mailbox policy: reject, drop-oldest, drop-newest, coalesce or unbounded")
	f.StringVar(&o.service, "service", "1ms", "time per command: 5ms, uniform(1ms,9ms), exp(5ms), lognormal(5ms,0.5)")
	f.DurationVar(&o.heartbeat, "heartbeat", 5*time.Second, "heartbeat interval (0: none); the leader learns versions from heartbeats")
	f.DurationVar(&o.telemetry, "telemetry", 0, "telemetry interval (0: none)")
	f.StringVar(&o.reconnect, "reconnect", "backoff", "after a lost connection: backoff (exponential, full jitter) or immediate (the thundering herd)")
	f.DurationVar(&o.backoffBase, "backoff-base", worker.DefaultReconnectBackoff.Base, "reconnect backoff base")
	f.DurationVar(&o.backoffCap, "backoff-cap", worker.DefaultReconnectBackoff.Cap, "reconnect backoff cap")
	f.DurationVar(&o.keepalive, "keepalive", worker.DefaultKeepAlive, "MQTT keepalive (at least 1s)")
	f.DurationVar(&o.askTimeout, "ask-timeout", worker.DefaultAskTimeout, "how long a worker waits for the leader's reply to a request or telemetry")
	f.DurationVar(&o.ramp, "ramp", 0, "connect ramp: the time between two workers' starts (0: all at once, a herd on the broker)")
	f.Uint64Var(&o.seed, "seed", 1, "seed; worker i draws from PCG(seed, i), so runs repeat")
	f.StringVar(&o.version, "version", worker.DefaultVersion, "version every worker starts at")
	f.DurationVar(&o.report, "report", 10*time.Second, "log a summary of the pool this often (0: only at exit)")
	f.Var(&o.gatewaySize, "gateway-size", "put the workers behind gateways of this many: one MQTT session per gateway, which announces its devices (1 to --count; the last gateway may carry fewer); unset: a session per worker")
	f.StringVar(&o.state, "state", "", "at exit, write each worker's applied state to this file as JSON: version, versions applied with counts and first-applied times, duplicates, stale (checked at start, replaced atomically at exit: a file already there stays whole until then)")
	f.DurationVar(&o.connTimeout, "connect-timeout", 15*time.Second, "exit 1 if no session has connected to --broker this long after the start (0: keep trying); once one has, lost connections are retried for ever")
}

// build validates the flags and returns the workers' configs and dialer.
func (o options) build(log *slog.Logger) ([]worker.Config, worker.MQTTDialer, error) {
	var dial worker.MQTTDialer
	pol, svc, err := o.check()
	if err != nil {
		return nil, dial, err
	}
	dial.Broker = o.broker
	cfgs, err := o.configs(pol, svc, log)
	if err != nil {
		return nil, dial, err
	}
	if o.credentials != "" {
		creds, err := o.rangeCredentials()
		if err != nil {
			return nil, dial, err
		}
		dial.Credentials = &creds
	}
	return cfgs, dial, nil
}

// check validates the flags each on its own, and returns the mailbox
// policy and service time they name.
func (o options) check() (pol mailbox.Policy, svc dist.Dist, err error) {
	pol, err = mailbox.ParsePolicy(o.policy)
	if err != nil || pol == mailbox.Block {
		return pol, svc, cli.Usagef("--policy %q: want reject, drop-oldest, drop-newest, coalesce or unbounded (a worker never blocks)", o.policy)
	}
	svc, err = dist.Parse(o.service)
	if err != nil {
		return pol, svc, cli.Usagef("--service %q: %v (e.g. 5ms, uniform(1ms,9ms), exp(5ms), lognormal(5ms,0.5))", o.service, err)
	}
	switch {
	case o.count < 1 || o.count > 10_000_000:
		return pol, svc, cli.Usagef("--count %d: want 1 to 10000000", o.count)
	case o.start > math.MaxUint64-uint64(o.count):
		return pol, svc, cli.Usagef("--start %d: too large for --count %d", o.start, o.count)
	case o.width < 1 || o.width > 20:
		return pol, svc, cli.Usagef("--width %d: want 1 to 20", o.width)
	case o.mailbox < 1:
		return pol, svc, cli.Usagef("--mailbox %d: want at least 1", o.mailbox)
	case o.heartbeat < 0:
		return pol, svc, cli.Usagef("--heartbeat %v: want 0 (none) or a positive duration", o.heartbeat)
	case o.telemetry < 0:
		return pol, svc, cli.Usagef("--telemetry %v: want 0 (none) or a positive duration", o.telemetry)
	case o.reconnect != "backoff" && o.reconnect != "immediate":
		return pol, svc, cli.Usagef("--reconnect %q: want backoff or immediate", o.reconnect)
	case o.backoffBase <= 0:
		return pol, svc, cli.Usagef("--backoff-base %v: want a positive duration, e.g. 1s", o.backoffBase)
	case o.backoffCap < o.backoffBase:
		return pol, svc, cli.Usagef("--backoff-cap %v: want at least --backoff-base (%v)", o.backoffCap, o.backoffBase)
	case o.keepalive < time.Second:
		return pol, svc, cli.Usagef("--keepalive %v: want at least 1s", o.keepalive)
	case o.askTimeout <= 0:
		return pol, svc, cli.Usagef("--ask-timeout %v: want a positive duration", o.askTimeout)
	case o.ramp < 0:
		return pol, svc, cli.Usagef("--ramp %v: want 0 or a positive duration", o.ramp)
	case o.report < 0:
		return pol, svc, cli.Usagef("--report %v: want 0 (only at exit) or a positive duration", o.report)
	case o.connTimeout < 0:
		return pol, svc, cli.Usagef("--connect-timeout %v: want 0 (keep trying) or a positive duration, e.g. 15s", o.connTimeout)
	case o.version == "":
		return pol, svc, cli.Usagef("--version: want a version, e.g. 1.0.0")
	}
	if err := validBroker(o.broker); err != nil {
		return pol, svc, err
	}
	if p := o.topicPrefix; p == "" || strings.ContainsAny(p, "/+#") || strings.HasPrefix(p, "$") {
		return pol, svc, cli.Usagef("--topic-prefix %q: want one topic level without / + # and not starting with $, e.g. fleet", p)
	}
	if o.secretFile != "" {
		idOf := o.ids()
		return pol, svc, cli.Usagef("--secret-file: a worker no longer takes the fleet secret, which would let this host log in as any worker; "+
			"on the leader's machine run 'leader credentials --secret-file %s --range %s..%s --out host.cred' and give this worker --credentials-file host.cred",
			o.secretFile, idOf(0), idOf(o.count-1))
	}
	if g := o.gatewaySize; g.set && (g.n < 1 || g.n > o.count) {
		return pol, svc, cli.Usagef("--gateway-size %d: want 1 to --count (%d), the workers each gateway carries", g.n, o.count)
	}
	return pol, svc, nil
}

// ids returns the id of the process's i-th worker: --prefix and its
// index, zero-padded to --width or to the last index's digits if more.
func (o options) ids() func(i int) string {
	width := max(o.width, len(fmt.Sprint(o.start+uint64(o.count)-1)))
	return func(i int) string { return fmt.Sprintf("%s%0*d", o.prefix, width, o.start+uint64(i)) }
}

// configs returns each worker's config, and an error naming the flag if
// an id the flags make is not valid.
func (o options) configs(pol mailbox.Policy, svc dist.Dist, log *slog.Logger) ([]worker.Config, error) {
	idOf := o.ids()
	cfgs := make([]worker.Config, o.count)
	var gateway string
	for i := range cfgs {
		idx := o.start + uint64(i)
		id := idOf(i)
		if i == 0 || i == len(cfgs)-1 { // the prefix is the only part that can be bad
			if err := wire.ValidWorkerID(id); err != nil {
				return nil, cli.Usagef("--prefix %q: %v", o.prefix, err)
			}
		}
		if o.gatewaySize.set && i%o.gatewaySize.n == 0 {
			// Named after its first device, so that processes with
			// disjoint worker ranges never share a gateway id.
			gateway = wire.GatewayIDPrefix + id
			if err := wire.ValidGatewayID(gateway); err != nil {
				return nil, cli.Usagef("--gateway-size: gateway %q (%s + its first worker's id): %v; use a shorter --prefix", gateway, wire.GatewayIDPrefix, err)
			}
		}
		cfgs[i] = worker.Config{
			ID: id, Index: idx, Seed: o.seed, Topics: wire.Topics{Prefix: o.topicPrefix}, Gateway: gateway,
			Mailbox: mailbox.Options{Capacity: o.mailbox, Policy: pol}, Service: svc,
			Heartbeat: o.heartbeat, Telemetry: o.telemetry,
			Reconnect: worker.Reconnect{Immediate: o.reconnect == "immediate", Backoff: flow.Backoff{Base: o.backoffBase, Cap: o.backoffCap}},
			KeepAlive: o.keepalive, AskTimeout: o.askTimeout, Version: o.version, Logger: log,
		}
	}
	return cfgs, nil
}

// rangeCredentials reads --credentials-file and checks that its range
// admits every worker id of the process.
func (o options) rangeCredentials() (wire.Credentials, error) {
	creds, err := readCredentials(o.credentials)
	if err != nil {
		return creds, err
	}
	// The ids have one width, so all of them lie between the first and
	// the last, in the range if these two are.
	idOf := o.ids()
	for _, id := range []string{idOf(0), idOf(o.count - 1)} {
		if err := creds.Range.Admits(id); err != nil {
			return creds, cli.Usagef("--credentials-file %s: %v (this process runs %s to %s; issue credentials that cover them, or change --prefix, --start, --count)",
				o.credentials, err, idOf(0), idOf(o.count-1))
		}
	}
	return creds, nil
}

// readCredentials reads a --credentials-file (at most
// wire.MaxCredentialsSize bytes read, so a wrong path to a large file
// fails fast).
func readCredentials(path string) (wire.Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return wire.Credentials{}, cli.Usagef("--credentials-file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, wire.MaxCredentialsSize+1))
	if err != nil {
		return wire.Credentials{}, cli.Usagef("--credentials-file %s: %v", path, err)
	}
	c, err := wire.ParseCredentials(data)
	if err != nil {
		return wire.Credentials{}, cli.Usagef("--credentials-file %s: %v", path, err)
	}
	return c, nil
}

// checkGateways checks that the credentials admit each gateway's login:
// its devices' range, whose prefix is their ids without the trailing
// digits, must have the credentials' prefix.
func checkGateways(path string, c *wire.Credentials, gws []*worker.Gateway) error {
	if c == nil {
		return nil
	}
	for _, g := range gws {
		if err := c.Range.Admits(wire.GatewayUsername(g.ID(), g.Range())); err != nil {
			return cli.Usagef("--credentials-file %s: gateway %s: %v (a gateway's range has its devices' prefix before their trailing digits: issue the credentials for %s)",
				path, g.ID(), err, wire.DeviceRange{Prefix: g.Range().Prefix, First: c.Range.First, Last: c.Range.Last})
		}
	}
	return nil
}

func validBroker(u string) error { return cli.Brokers("broker", u) }

// exitCodes is worker's exit-code table: it has no outbox, so never
// exits 3.
const exitCodes = `Exit codes:
  0  stopped by SIGINT, SIGTERM, SIGHUP or a broken pipe on its output: a
     graceful stop (every worker announced offline, --state written)
  1  runtime failure: no session connected within --connect-timeout (nothing
     listening, no answer), or --state could not be written
  2  bad flags or a bad --credentials-file (the message names the flag and the
     valid values), or the broker refused the login before any session
     connected (bad or missing credentials: retrying cannot help)`

// longHelp is worker's --help: what it runs, how and what it writes.
const longHelp = `worker runs --count simulated workers in one process, each with its own MQTT
session to --broker (a leader's embedded broker, or Mosquitto/EMQX/HiveMQ
that the leader also uses). Worker ids are --prefix plus the zero-padded
index, from --start: w-0000, w-0001, ... Several worker processes, on one
machine or many, with disjoint ranges form one fleet.

Each worker announces itself on its retained status topic (its MQTT last
will says offline), takes commands into a bounded mailbox (answering ok,
or full with a retry-after hint), spends --service on each, applies a
config or firmware version once per idempotency key and sequence number
(a redelivery is a duplicate, an older sequence number stale: neither
is applied), sends heartbeats with its version, and reconnects after a
lost connection by --reconnect. A worker's applied state lives as long
as the process.

With --gateway-size N the workers sit behind gateways of N, as devices
behind edge gateways: each gateway is one MQTT session, named gw- plus
its first worker's id (gw-w-0000 carries w-0000 to w-0009 at N = 10,
so processes with disjoint ranges never share one), logged in as
gateway/<id>/<prefix>{<first>..<last>}, its client id too (with
--credentials-file, a password derived from that username). It says
"online <epoch>" on
<topic-prefix>/_gateway/<id>/status, with "offline <epoch>" as its last
will, and announces each of its workers "online <epoch> via <id>"; a
worker that drops off it gets "offline <epoch> via <id>" from the
gateway. When the gateway's session is lost, so are its workers'; it
reconnects with the --backoff-* policy and they follow.

Against a broker that checks logins (a leader's embedded broker run with
--secret-file), give --credentials-file: credentials for a range of ids,
issued on the leader's machine by 'leader credentials --range'. Each
worker and gateway of this process logs in with a password derived from
them, and the broker takes only ids of that range: this host can act for
its own workers and for no other. Every id of the process must be in the
range, or worker exits 2 before connecting. (worker never takes the fleet
secret itself.)

It logs a summary every --report and at exit: workers online, applied
updates, duplicates, versions. With --state FILE it also writes, at exit,
each worker's applied state as JSON — the version it runs, each version
it applied with how many times (more than 1 is an update applied twice),
the wall time it first applied each (RFC 3339, UTC, milliseconds),
duplicates and stale commands it skipped — so that exactly-once, and a
rollout's pacing, can be checked per worker, not only in total:

  {"workers": [{"id": "w-0000", "version": "2.0.0", "applied": 1,
    "applied_versions": {"2.0.0": 1},
    "applied_at": {"2.0.0": "2026-01-02T15:04:05.123Z"},
    "duplicates": 1, "stale": 0, "acked_ok": 2}, ...]}

worker logs each failed connect with its reason (connection refused,
no answer, login refused: one line per reason every 5 s at most, with
how many more failed alike). If none of its sessions has connected
--connect-timeout after the start, it exits 1 naming the broker and the
reason; if the broker refuses a login before then (bad or missing
credentials), it exits 2 at once, since retrying cannot help. Once a
session has connected, a lost connection is retried for ever by
--reconnect: a broker's outage is ridden out.

On SIGINT, SIGTERM or SIGHUP (the terminal closed), or when whoever
reads its output is gone (a broken pipe: worker 2>&1 | head), every
worker announces itself offline and disconnects cleanly, --state is
written, and worker exits 0. The state file is replaced atomically (a
new file renamed over the old): a worker killed at any point leaves
the previous file or the new one, never a part.

`

// examples are worker's --help examples.
const examples = `  # 1,000 workers against a leader on this machine
  worker --broker tcp://127.0.0.1:1883 --count 1000

  # the second half of a 2,000-worker fleet, from another machine, with
  # credentials for its range (on the leader's machine: leader credentials
  # --secret-file fleet.secret --range w-1000..w-1999 --out hostB.cred),
  # slow commands and a gentle connect ramp
  worker --broker tcp://leader.lan:1883 --credentials-file hostB.cred \
    --count 1000 --start 1000 --service 'uniform(1ms,9ms)' --ramp 2ms

  # the thundering herd: no backoff after the broker restarts
  worker --count 5000 --reconnect immediate

  # 10,000 workers behind 100 gateways: 100 MQTT sessions
  worker --count 10000 --gateway-size 100

  # keep each worker's applied versions for a check after the run
  worker --count 100 --state workers.json`

func newRoot(ctx context.Context, stderr io.Writer) *cobra.Command {
	var o options
	var logs cli.LogOptions
	c := &cobra.Command{
		Use:     "worker",
		Short:   "Run a pool of simulated fleetsim workers against a broker",
		Long:    longHelp + exitCodes,
		Example: examples,
		Args:    cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			cfgs, dial, err := o.build(log.With("component", "worker"))
			if err != nil {
				return err
			}
			if o.state != "" {
				if err := checkState(o.state); err != nil {
					return err
				}
			}
			return run(ctx, cfgs, dial, o, log)
		},
	}
	c.SetErr(stderr)
	c.SetOut(stderr)
	o.addFlags(c)
	logs.AddFlags(c)
	return c
}
