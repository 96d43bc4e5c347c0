package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// runOptions are the flags of 'leader run'.
type runOptions struct {
	listen             string
	broker             string
	secretFile         string
	leaderPasswordFile string
	insecureNoAuth     bool
	prefix             string
	clientID           string
	maxPacketSize      int
	limits             brokerLimits

	outboxPath   string
	durability   string
	partitions   int
	maxAttempts  int
	limitInitial int
	limitMin     int
	limitMax     int
	relayIntv    time.Duration
	relayBatch   int
	askTimeout   time.Duration
	suspectAfter time.Duration
	mailbox      int
	retryAfter   string
	heartbeat    time.Duration
	seed         uint64

	metricsAddr   string
	statsEvery    time.Duration
	deployHistory int
}

func (o *runOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.listen, "listen", broker.DefaultTCPAddr, "host:port of the embedded broker's TCP listener (port 0: any free port, logged); a non-loopback address needs --secret-file and --leader-password-file, or --insecure-no-auth")
	f.StringVar(&o.broker, "broker", "", "use this external broker instead of the embedded one: "+cli.BrokersHelp)
	f.StringVar(&o.secretFile, "secret-file", "", "file holding the fleet secret (at least 16 bytes) that worker hosts' credentials derive from ('leader credentials'); turns on the broker's login and topic policy")
	f.StringVar(&o.leaderPasswordFile, "leader-password-file", "", "file holding the leader's MQTT password (with --secret-file; with --broker: the password to log in with)")
	f.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "allow a non-loopback --listen without credentials: ANYONE who can reach the port can command the fleet")
	f.StringVar(&o.prefix, "topic-prefix", wire.DefaultPrefix, "first topic level of every fleet topic (several fleets can share a broker)")
	f.IntVar(&o.maxPacketSize, "max-packet-size", broker.DefaultMaxPacketSize, "longest MQTT packet in bytes a TCP client may send to the embedded broker (at least 66560: a message may be 64 KiB); a longer one is refused from its header, unread, and the client disconnected; a CONNECT is bounded to 4 KiB before the login")
	o.limits.addFlags(c)
	f.StringVar(&o.clientID, "client-id", "", "the leader's MQTT client id: starts with _, A-Z a-z 0-9 . _ - (default: a random _leader-<hex> per process, so several leaders can share a broker; the leader's rights come from its login, not from this id)")

	f.StringVar(&o.outboxPath, "outbox", "leader.db", "the bbolt outbox file (created if missing; one leader per file)")
	f.StringVar(&o.durability, "durability", "sync", "when an enqueue is on disk: sync (fsync each), batch (group commit), none (no fsync: survives kill -9, not power loss)")
	f.IntVar(&o.partitions, "partitions", outbox.DefaultPartitions, fmt.Sprintf("relay partitions, each with its own AIMD limiter and loop (1..%d)", outbox.MaxPartitions))
	f.IntVar(&o.maxAttempts, "max-attempts", outbox.DefaultOptions.MaxAttempts, "failed deliveries before a command goes to the dead letters")
	f.IntVar(&o.limitInitial, "limit-initial", flow.DefaultLimiterOptions.Initial, "AIMD: starting concurrent deliveries per partition")
	f.IntVar(&o.limitMin, "limit-min", flow.DefaultLimiterOptions.Min, "AIMD: floor of the limit")
	f.IntVar(&o.limitMax, "limit-max", flow.DefaultLimiterOptions.Max, "AIMD: ceiling of the limit")
	f.DurationVar(&o.relayIntv, "relay-interval", outbox.DefaultRelayOptions.Interval, "how often each partition polls the outbox for newly due commands")
	f.IntVar(&o.relayBatch, "relay-batch", outbox.DefaultRelayOptions.Batch, fmt.Sprintf("most commands one poll leases (1..%d)", outbox.MaxBatch))
	f.DurationVar(&o.suspectAfter, "suspect-after", 0, "a worker not heard from for this long (no message, no online status) is suspect: its commands wait, spending no attempt, until it is heard; a few of the workers' heartbeat intervals, e.g. 1m (0: never)")
	f.DurationVar(&o.askTimeout, "ask-timeout", leader.DefaultAskTimeout, "how long a delivery waits for the worker's ack before it is retried")
	f.IntVar(&o.mailbox, "mailbox", leader.DefaultMailboxCapacity, "capacity of the leader's mailbox for worker requests and telemetry (full: answered \"full, retry after\")")
	f.StringVar(&o.retryAfter, "retry-after", "drain", "the hint of a \"full, retry after\" answer: drain (the time the mailbox takes to drain, the same for every worker refused meanwhile) or spread (each refused worker a slot of its own, one service time after the previous one's: a herd comes back at the pace the leader serves)")
	f.DurationVar(&o.heartbeat, "heartbeat-interval", 5*time.Second, "the leader's cadence for processing heartbeats (in between, a worker's newer heartbeat replaces its waiting one)")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the relay's and the reconnects' jitter and the leader's service times")

	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics on this host:port, e.g. 127.0.0.1:9464 (empty: off)")
	f.DurationVar(&o.statsEvery, "stats-interval", 2*time.Second, "publish the leader's stats as JSON on <prefix>/_leader/stats this often (0: off)")
	f.IntVar(&o.deployHistory, "deploy-history", leader.DefaultDeployHistory, "deploys the leader keeps in the outbox and shows (fleetsim_deploy_* on /metrics, the stats topic): the newest ones, and any older one still in flight")
}

// runConfig is what validate makes of runOptions.
type runConfig struct {
	o          runOptions
	durability outbox.Durability
	retry      mailbox.RetryHint
	auth       *broker.Auth // embedded broker's policy, or nil
	leaderPass string       // for --broker
}

// validate checks the flags; every error names the flag and the valid
// values (exit code 2).
func (o runOptions) validate() (runConfig, error) {
	rc := runConfig{o: o}
	var err error
	if rc.durability, err = outbox.ParseDurability(o.durability); err != nil {
		return rc, cli.Usagef("--durability %q: want sync, batch or none", o.durability)
	}
	if rc.retry, err = mailbox.ParseRetryHint(o.retryAfter); err != nil {
		return rc, cli.Usagef("--retry-after %q: want drain or spread", o.retryAfter)
	}
	if err := o.validateRelay(); err != nil {
		return rc, err
	}
	if err := validPrefix(o.prefix); err != nil {
		return rc, err
	}
	if o.clientID != "" {
		if err := validClientID(o.clientID); err != nil {
			return rc, err
		}
	}
	if err := validMaxPacketSize(o.maxPacketSize, o.broker != ""); err != nil {
		return rc, err
	}
	if err := o.limits.validate(o.maxPacketSize, o.broker != ""); err != nil {
		return rc, err
	}
	if o.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(o.metricsAddr); err != nil {
			return rc, cli.Usagef("--metrics-addr %q: want host:port, e.g. 127.0.0.1:9464", o.metricsAddr)
		}
	}
	if o.broker != "" {
		return o.validateExternal(rc)
	}
	return o.validateEmbedded(rc)
}

// validateRelay checks the outbox's, the relay's and the leader's numbers.
func (o runOptions) validateRelay() error {
	switch {
	case o.outboxPath == "":
		return cli.Usagef("--outbox: want a file path, e.g. ./leader.db")
	case o.partitions < 1 || o.partitions > outbox.MaxPartitions:
		return cli.Usagef("--partitions %d: want 1 to %d", o.partitions, outbox.MaxPartitions)
	case o.maxAttempts < 1:
		return cli.Usagef("--max-attempts %d: want at least 1", o.maxAttempts)
	case o.limitMin < 1:
		return cli.Usagef("--limit-min %d: want at least 1", o.limitMin)
	case o.limitMax < o.limitMin:
		return cli.Usagef("--limit-max %d: want at least --limit-min (%d)", o.limitMax, o.limitMin)
	case o.limitInitial < o.limitMin || o.limitInitial > o.limitMax:
		return cli.Usagef("--limit-initial %d: want between --limit-min (%d) and --limit-max (%d)", o.limitInitial, o.limitMin, o.limitMax)
	case o.relayIntv <= 0:
		return cli.Usagef("--relay-interval %v: want a positive duration, e.g. 5ms", o.relayIntv)
	case o.relayBatch < 1 || o.relayBatch > outbox.MaxBatch:
		return cli.Usagef("--relay-batch %d: want 1 to %d", o.relayBatch, outbox.MaxBatch)
	case o.askTimeout <= 0:
		return cli.Usagef("--ask-timeout %v: want a positive duration, e.g. 5s", o.askTimeout)
	case o.suspectAfter < 0 || o.suspectAfter > 0 && o.suspectAfter < time.Second:
		return cli.Usagef("--suspect-after %v: want 0 (never) or at least 1s, e.g. 1m", o.suspectAfter)
	case o.mailbox < 1:
		return cli.Usagef("--mailbox %d: want at least 1", o.mailbox)
	case o.heartbeat <= 0:
		return cli.Usagef("--heartbeat-interval %v: want a positive duration, e.g. 5s", o.heartbeat)
	case o.statsEvery < 0:
		return cli.Usagef("--stats-interval %v: want 0 (off) or a positive duration", o.statsEvery)
	case o.deployHistory < 1:
		return cli.Usagef("--deploy-history %d: want at least 1", o.deployHistory)
	}
	return nil
}

// validateExternal checks the flags of a leader on an external broker
// (--broker), and reads the password it logs in with.
func (o runOptions) validateExternal(rc runConfig) (runConfig, error) {
	if err := validBrokerURL("broker", o.broker); err != nil {
		return rc, err
	}
	if o.secretFile != "" {
		return rc, cli.Usagef("--secret-file: only for the embedded broker; with --broker, the external broker checks logins (give --leader-password-file to log in as %q)", wire.LeaderUsername)
	}
	if o.leaderPasswordFile != "" {
		pw, err := cli.ReadSecret("leader-password-file", o.leaderPasswordFile)
		if err != nil {
			return rc, err
		}
		rc.leaderPass = string(pw)
	}
	return rc, nil
}

// validateEmbedded checks the flags of the embedded broker's listener and
// login, and reads the secret and the password.
func (o runOptions) validateEmbedded(rc runConfig) (runConfig, error) {
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return rc, cli.Usagef("--listen %q: want host:port, e.g. %s", o.listen, broker.DefaultTCPAddr)
	}
	if (o.secretFile == "") != (o.leaderPasswordFile == "") {
		return rc, cli.Usagef("--secret-file and --leader-password-file go together: give both (credentials on) or neither")
	}
	if o.secretFile != "" {
		secret, err := cli.ReadSecret("secret-file", o.secretFile)
		if err != nil {
			return rc, err
		}
		if len(secret) < broker.MinSecretLen {
			return rc, cli.Usagef("--secret-file %s: the secret is %d bytes; want at least %d (e.g. head -c 32 /dev/urandom | base64 > %s)", o.secretFile, len(secret), broker.MinSecretLen, o.secretFile)
		}
		pw, err := cli.ReadSecret("leader-password-file", o.leaderPasswordFile)
		if err != nil {
			return rc, err
		}
		rc.auth = &broker.Auth{LeaderPassword: string(pw), Secret: secret, Topics: wire.Topics{Prefix: o.prefix}}
	} else if !isLoopback(host) && !o.insecureNoAuth {
		return rc, cli.Usagef("--listen %q is not a loopback address: anyone who can reach it could command the fleet; give --secret-file and --leader-password-file, listen on 127.0.0.1, or add --insecure-no-auth if that is really what you want", o.listen)
	}
	return rc, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validBrokerURL checks a broker URL flag.
func validBrokerURL(flag, u string) error { return cli.Brokers(flag, u) }

// validPrefix checks --topic-prefix as the broker's policy would.
func validPrefix(p string) error {
	if p == "" || strings.ContainsAny(p, "/+#") || strings.HasPrefix(p, "$") {
		return cli.Usagef("--topic-prefix %q: want one topic level without / + # and not starting with $, e.g. %s", p, wire.DefaultPrefix)
	}
	return nil
}

// runHelp is the long help of 'leader run'.
const runHelp = `leader run starts the leader and serves until SIGINT, SIGTERM or SIGHUP.

By default it starts an embedded MQTT broker listening on --listen
(127.0.0.1:1883) and publishes and subscribes on it inline, with no MQTT
session between. With --broker it starts no broker and connects to an
external one (Mosquitto, EMQX, HiveMQ, ...).

Commands (deploys, jobs) wait in the bbolt file --outbox until a worker
acknowledges them; a leader restarted on the same file carries on, even
after kill -9. Only one leader can hold a file: a second one exits with
code 3, as it does for a corrupt file or another program's bbolt file.

With --metrics-addr it serves Prometheus metrics (fleetsim_*) on /metrics.
Every --stats-interval it publishes its stats as JSON on
<prefix>/_leader/stats. It takes deploy requests from 'leader deploy' on
<prefix>/_leader/deploy (docs/PROTOCOL.md). It keeps the progress of its
newest --deploy-history deploys in the outbox file, so a restarted leader
shows them (fleetsim_deploy_*) and goes on counting them.

On the embedded broker it has no MQTT session, so no client can take
it over. With --broker its MQTT client id is its own (--client-id; by
default a random _leader-<hex> per process), so several leaders, each
with its own --topic-prefix, can share one broker; its rights there come
from its login (username leader), not from its client id.

The embedded broker refuses a packet from a TCP client longer than
--max-packet-size (1 MiB; a CONNECT, read before the login, over 4 KiB)
from its header, without reading it, and disconnects the client. It
bounds what TCP clients can make it hold: a packet begun must arrive
whole within --packet-read-timeout (10 s) whatever the client's
keepalive; the packets still arriving may hold --max-partial-bytes
(64 MiB) between them; at most --max-connections (10,000) are open at
once. Each worker may publish --worker-rate messages a second (20, a
burst of 200) and --worker-byte-rate bytes (64 KiB, a burst of 1 MiB), a
gateway as many per device in its range; more are dropped (a QoS 1
publish still acknowledged), so one worker's flood cannot crowd out the
others' messages on their way to the leader, whose login is not limited.
(Without --secret-file, where a username proves nothing and a client
without one could be a gateway of any size, only clients that give a
username are limited.)
Every refusal on the way to the leader is counted by reason
(fleetsim_refused_total{reason} on /metrics, stats.Refused in the stats
JSON: auth, topic, packet_too_large, packet_timeout, partial_budget,
connection_limit, rate_limited, payload_too_large, malformed, forged_ack)
and logged at warn with its size, never its payload, at most once per
client and reason every 10 s.

With --secret-file, worker hosts log in with credentials for their own
range of ids, issued with 'leader credentials' (the fleet secret never
leaves this machine). A gateway (one MQTT session carrying many devices)
logs in to the embedded broker as gateway/<id>/<device range>, e.g.
gateway/gw-w-0000/w-{0..999}, that username its client id too, and may
act only for the devices in its range.
When a gateway's session dies, its last will takes every device it
announced offline at once (docs/PROTOCOL.md, Gateways;
fleetsim_leader_gateway* on /metrics).

It says "online" (retained) on <prefix>/_leader/status once it serves;
its session's last will says "offline" for it if it dies without a
goodbye.

If its session with the broker is lost (an external broker restarts, the
network drops), it keeps running: deliveries pause (those in flight are
handed back with no attempt charged, so an outage sends nothing to the
dead letters), it dials again with exponential backoff and full jitter
(windows from 100 ms doubling to 5 s; the --seed draws the jitter),
subscribes again, says "online" again and resumes from the outbox. Each
loss and each reconnect is logged once; fleetsim_leader_broker_* on
/metrics and Broker in the stats count them.

On SIGINT, SIGTERM or SIGHUP (the terminal closed), or when whoever
reads its output is gone (a broken pipe), it stops the relay (deliveries
in flight settle or are handed back uncharged), announces itself
offline, closes the outbox and the broker, and exits 0.

` + cli.ExitCodesHelp

func newRunCmd(ctx context.Context, logs *cli.LogOptions, stderr io.Writer) *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the leader (the default command)",
		Long:  runHelp,
		Example: `  # a leader for workers on this machine, metrics on :9464
  leader run --outbox ./leader.db --metrics-addr 127.0.0.1:9464

  # reachable from other machines: credentials required
  head -c 32 /dev/urandom | base64 > fleet.secret
  head -c 16 /dev/urandom | base64 > leader.password
  leader run --listen 0.0.0.0:1883 --secret-file fleet.secret --leader-password-file leader.password
  # and the credentials of a worker host running w-0000 to w-0999
  leader credentials --secret-file fleet.secret --range w-0000..w-0999 --out hostA.cred

  # against Mosquitto instead of the embedded broker
  leader run --broker tcp://127.0.0.1:1883 --durability batch`,
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rc, err := o.validate()
			if err != nil {
				return err
			}
			log, err := logs.Logger(stderr)
			if err != nil {
				return err
			}
			return runLeader(ctx, rc, log)
		},
	}
	o.addFlags(c)
	return c
}

// runLeader wires the leader as fleettest does: outbox, broker, session,
// leader; then the deploy control, the stats publisher and /metrics. It
// returns after everything it started has stopped.
func runLeader(ctx context.Context, rc runConfig, log *slog.Logger) error {
	o := rc.o
	topics := wire.Topics{Prefix: o.prefix}
	st, err := openOutbox(rc, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("close outbox", "err", err)
		}
	}()

	// The metrics listener first: a port in use fails before anything else.
	var metricsLn net.Listener
	if o.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", o.metricsAddr); err != nil {
			return cli.Runtime(fmt.Errorf("--metrics-addr: %w", err))
		}
		defer metricsLn.Close()
	}

	// The will says offline for a leader that dies without its goodbye.
	// A client id of its own: a fixed one would let a second leader (or
	// anyone who may log in) take this one's session over at the broker.
	if o.clientID == "" {
		o.clientID = newClientID()
	}
	co := transport.ClientOptions{ID: o.clientID, CleanSession: true, Will: transport.LeaderWill(topics)}
	var embedded *broker.Broker
	if o.broker == "" {
		if embedded, err = startBroker(rc, &co, log); err != nil {
			return err
		}
		defer closeBroker(embedded, log)
	} else {
		co.Broker = o.broker
		if rc.leaderPass != "" {
			co.Username, co.Password = wire.LeaderUsername, rc.leaderPass
		}
	}
	sess, err := dialLink(ctx, co, embedded)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return cli.Runtime(err)
	}
	defer sess.Close(true)

	l, err := leader.New(leaderConfig(rc, sess, st, embedded, log))
	if err != nil {
		return cli.Usagef("%v", err) // every field comes from a flag
	}
	err = serve(ctx, rc, wiring{l: l, sess: sess, co: co, embedded: embedded, metricsLn: metricsLn}, log)
	s := st.Stats()
	log.Info("leader stopped", "outbox_depth", s.Depth, "dead_letters", s.DeadLetters, "acked", s.Acked)
	return err
}

// openOutbox opens the outbox file --outbox names.
func openOutbox(rc runConfig, log *slog.Logger) (*outbox.Bolt, error) {
	o := rc.o
	st, err := outbox.OpenBolt(o.outboxPath, outbox.Options{
		Partitions: o.partitions, MaxAttempts: o.maxAttempts, Durability: rc.durability,
	})
	if err != nil {
		return nil, cli.Outbox(err)
	}
	log.Info("outbox open", "path", o.outboxPath, "depth", st.Stats().Depth, "dead_letters", st.Stats().DeadLetters, "durability", rc.durability, "partitions", o.partitions)
	return st, nil
}

// startBroker starts the embedded broker and sets co to connect to it in
// memory, logged in as the leader when it checks credentials.
func startBroker(rc runConfig, co *transport.ClientOptions, log *slog.Logger) (*broker.Broker, error) {
	o := rc.o
	bo := broker.BrokerOptions{
		TCPAddr: o.listen, Auth: rc.auth, AllowInsecure: o.insecureNoAuth, Logger: newBrokerLog(log.Handler()).With("component", "broker"),
		MaxPacketSize: o.maxPacketSize,
	}
	o.limits.apply(&bo)
	embedded, err := broker.StartBroker(bo)
	if err != nil {
		return nil, cli.Runtime(fmt.Errorf("start the embedded broker: %w", err))
	}
	log.Info("broker listening", "addr", embedded.Addr(), "auth", rc.auth != nil)
	co.Broker, co.MemBuffer, co.WriteQueue = "mem://", 8<<20, 1<<16
	if rc.auth != nil {
		co.Username, co.Password = wire.LeaderUsername, rc.auth.LeaderPassword
	}
	return embedded, nil
}

// closeBroker closes the embedded broker, waiting up to 10 s for its
// clients to go.
func closeBroker(embedded *broker.Broker, log *slog.Logger) {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := embedded.Close(cctx); err != nil {
		log.Error("close broker", "err", err)
	}
}

// leaderConfig is the leader's configuration from the flags, on sess and
// st; embedded is the embedded broker, or nil.
func leaderConfig(rc runConfig, sess leaderLink, st outbox.Store, embedded *broker.Broker, log *slog.Logger) leader.Config {
	o := rc.o
	return leader.Config{
		Link: sess, Store: st, Topics: wire.Topics{Prefix: o.prefix}, Seed: o.seed, Logger: log.With("component", "leader"),
		Mailbox:           mailbox.Options{Capacity: o.mailbox, Retry: rc.retry},
		HeartbeatInterval: o.heartbeat,
		AskTimeout:        o.askTimeout,
		SuspectAfter:      o.suspectAfter,
		DeployHistory:     o.deployHistory,
		BrokerRefusals:    brokerRefusals(embedded),
		Relay: outbox.RelayOptions{
			Interval: o.relayIntv, Batch: o.relayBatch,
			Limiter: flow.LimiterOptions{Initial: o.limitInitial, Min: o.limitMin, Max: o.limitMax},
		},
	}
}

// wiring is what runLeader has set up for serve.
type wiring struct {
	l         *leader.Leader
	sess      leaderLink
	co        transport.ClientOptions // sess's
	embedded  *broker.Broker          // nil: an external broker
	metricsLn net.Listener            // nil: no /metrics
}

// serve runs the leader until ctx ends (a signal), with its deploy
// control, its stats publisher and /metrics. It returns once all of them
// have stopped.
func serve(ctx context.Context, rc runConfig, w wiring, log *slog.Logger) error {
	o, l, sess := rc.o, w.l, w.sess
	topics := wire.Topics{Prefix: o.prefix}
	// runCtx ends on a signal. A lost session does not end it: the leader
	// pauses its relay and dials again (leader.Redialer).
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctl := control.NewServer(l, sess, topics, log)
	if err := sess.Subscribe(runCtx, topics.LeaderDeploy(), 1, ctl.Handle); err != nil {
		stopRun()
		return cli.Runtime(err)
	}
	wg.Go(func() { ctl.Run(runCtx) })
	if o.statsEvery > 0 {
		wg.Go(func() { l.PublishStats(runCtx, o.statsEvery) })
	}
	if w.metricsLn != nil {
		var brokerStats func() broker.Stats
		if w.embedded != nil {
			brokerStats = w.embedded.Stats
		}
		h := metricsHandler(l, ctl, o.deployHistory, brokerStats)
		serveMetrics(runCtx, &wg, w.metricsLn, h, log)
	}
	log.Info("leader running", "broker", w.co.Broker, "topic_prefix", o.prefix, "client_id", w.co.ID)
	err := l.Run(runCtx)
	stopRun()
	wg.Wait()
	if err != nil {
		return cli.Runtime(err)
	}
	return nil
}

// serveMetrics serves h on ln until ctx ends, on goroutines wg waits for.
func serveMetrics(ctx context.Context, wg *sync.WaitGroup, ln net.Listener, h http.Handler, log *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Info("metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
}
