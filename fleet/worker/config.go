package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Reconnect is how a worker comes back after losing its connection.
type Reconnect struct {
	// Immediate retries at once, ignoring backoff and the leader's
	// retry-after: the thundering herd, for comparison runs. "At once" is
	// ImmediateRetry later, a round trip over a fast network: a retry after
	// no time at all would, on a simulation's virtual clock, loop at one
	// instant without end.
	Immediate bool
	// Backoff spaces reconnect attempts and request retries: full jitter
	// over [0, min(Cap, Base × 2^attempt)]. Default base 1 s, cap 60 s.
	Backoff flow.Backoff
}

// ImmediateRetry is how soon a worker whose policy is Reconnect.Immediate
// tries again.
const ImmediateRetry = 10 * time.Millisecond

// Config configures a Worker. ID is required; zero fields take the
// defaults noted.
type Config struct {
	// ID is the worker's id, MQTT client id and topic level (see
	// wire.ValidWorkerID). Required.
	ID string
	// Gateway is the id of the gateway this worker sits behind, a device
	// on the gateway's one MQTT session (see wire.GatewayStatus); "" (the
	// default) gives the worker a session of its own. A Pool builds one
	// gateway per id its workers name.
	Gateway string
	// GatewayClock, for a worker behind a gateway, is the clock its
	// gateway's own timers (reconnects, the downlink) run on, if not
	// Clock: on a simulation's virtual clock, an owner of its own (see
	// clock.Keyed). A gateway takes its first device's.
	GatewayClock clock.Clock
	// GatewayDownlink, for a worker behind a gateway, is the gateway's
	// radio towards its devices (a gateway takes its first device's):
	// zero forwards every message at once.
	GatewayDownlink Downlink
	// Topics names the topics. Default prefix "fleet".
	Topics wire.Topics
	// Clock times everything. Default: wall.
	Clock clock.Clock
	// Seed and Index seed this worker's randomness (PCG(Seed, Index)), so
	// a fleet's run repeats and no two workers draw alike.
	Seed, Index uint64
	// Mailbox for commands. Default capacity 16, policy reject. Block is
	// refused: the worker's loop must never wait.
	Mailbox mailbox.Options
	// Service is the time per command. Default 1 ms.
	Service dist.Dist
	// RTT is the network round trip of a command: the worker answers it
	// this long after it arrived, and the leader's delivery is in flight
	// meanwhile. Zero (the default): answers leave at once.
	RTT dist.Dist
	// Loss is the share of messages the worker's link loses, each way,
	// from 0 (the default: none) to 1 (every one): a command from the
	// leader or a reply to the worker that never arrives, an answer,
	// request, heartbeat or telemetry message the worker sends that never
	// reaches the leader. Nobody is told: the leader's and the worker's
	// asks time out, as on a lossy radio link. Counted in Stats.LinkLost.
	Loss float64
	// Heartbeat is the heartbeat interval; 0: none.
	Heartbeat time.Duration
	// Telemetry is the telemetry interval; 0: none.
	Telemetry time.Duration
	// Reconnect policy.
	Reconnect Reconnect
	// KeepAlive is the MQTT keepalive (wall time, whole seconds on the
	// wire). Default 5 s. Over the embedded broker's in-memory listener
	// no keepalive runs; a partitioned worker's connection is cut 1.5 ×
	// KeepAlive after the partition, as a broker's keepalive would (see
	// transport.Session.Silence).
	KeepAlive time.Duration
	// AskTimeout bounds the wait for the leader's reply to a request or
	// telemetry message. Default 5 s.
	AskTimeout time.Duration
	// Version is the version the worker starts at. Default "1.0.0".
	Version string
	// LocalOutbox bounds the messages kept while the leader cannot take
	// them (telemetry, the latest heartbeat). Default 1,000.
	LocalOutbox int
	// AnnounceWindow spreads the worker's answer to the leader's request
	// to announce itself (wire.Topics.Announce): it republishes its online
	// status after a random wait in [0, AnnounceWindow), so a fleet does
	// not answer at once. Default 10 s.
	AnnounceWindow time.Duration
	// NoSync turns off the "sync" request a worker sends on every
	// (re)connect.
	NoSync bool
	// MaxPayload bounds an incoming envelope. Default wire.DefaultMaxSize.
	MaxPayload int
	// Logger for the worker's own logs. Default: discard.
	Logger *slog.Logger
	// ServiceLag receives, for each command served, how late (on Clock)
	// the worker completed it against its service time: a command that
	// takes d is due d after the worker took it, and the worker's loop
	// completes it when its service timer fires and the loop gets to it.
	// A command shorter than a millisecond completes as it is taken (0).
	// DeliveryLag receives, for each command, the time from its SentMs
	// (the leader's publish) to the worker's handler: the transport's
	// delay plus the wait for the worker's loop, on a clock the leader
	// shares (a scenario run). Nil: the worker keeps its own. A pool's
	// workers may share one of each (stats.Histogram is safe for that).
	ServiceLag, DeliveryLag *stats.Histogram
	// Pull, if set, makes the worker pull its jobs from the leader's job
	// queue (docs/PROTOCOL.md, "Work pulling"): one job request at a time
	// while it holds no pulled job. Nil: the worker only takes what is
	// pushed.
	Pull *Pull
	// OnJob, if set, is called on the worker's loop with the id of each
	// job (wire.Job.ID, pushed or pulled) the worker applies: for a
	// simulation's count of jobs done, and done twice.
	OnJob func(worker, id string)
}

// Pull is how a worker pulls jobs.
type Pull struct {
	// Interval is the least wait after a "drained" answer before asking
	// again (the leader's retry time, if longer, wins). Above 0.
	Interval time.Duration
	// Jitter adds a random wait in [0, Jitter) to each such wait, and to
	// the wait before a stranded request is asked again, drawn from the
	// worker's seed, so that a fleet told the same retry time, or whose
	// requests a leader's crash lost at once, does not come back at once.
	Jitter time.Duration
	// Timeout is how long a job request waits for its answer; one
	// unanswered by then is a stranded wait (counted), asked again with
	// the same id after a jitter (Jitter), so a job leased to a lost
	// reply comes back. Default: AskTimeout.
	Timeout time.Duration
}

// Defaults for Config.
const (
	DefaultMailboxCapacity = 16
	DefaultKeepAlive       = 5 * time.Second
	DefaultAskTimeout      = 5 * time.Second
	DefaultVersion         = "1.0.0"
	DefaultLocalOutbox     = 1000
	DefaultAnnounceWindow  = 10 * time.Second
)

// DefaultReconnectBackoff is the reconnect backoff when none is given.
var DefaultReconnectBackoff = flow.Backoff{Base: time.Second, Cap: time.Minute}

func (c Config) withDefaults() (Config, error) {
	if err := wire.ValidWorkerID(c.ID); err != nil {
		return c, fmt.Errorf("worker: %w", err)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Mailbox.Capacity == 0 {
		c.Mailbox.Capacity = DefaultMailboxCapacity
	}
	if c.Mailbox.Policy == mailbox.Block {
		return c, fmt.Errorf("worker %s: mailbox policy block: a worker answers at once, choose reject, drop-oldest, drop-newest, coalesce or unbounded", c.ID)
	}
	c.Mailbox.Clock = c.Clock
	if c.Service == (dist.Dist{}) {
		c.Service = dist.Const(time.Millisecond)
	}
	if c.Reconnect.Backoff == (flow.Backoff{}) {
		c.Reconnect.Backoff = DefaultReconnectBackoff
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.AskTimeout == 0 {
		c.AskTimeout = DefaultAskTimeout
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.LocalOutbox == 0 {
		c.LocalOutbox = DefaultLocalOutbox
	}
	if c.AnnounceWindow <= 0 {
		c.AnnounceWindow = DefaultAnnounceWindow
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = wire.DefaultMaxSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ServiceLag == nil {
		c.ServiceLag = new(stats.Histogram)
	}
	if c.DeliveryLag == nil {
		c.DeliveryLag = new(stats.Histogram)
	}
	if c.Pull != nil {
		p := *c.Pull
		if p.Interval <= 0 || p.Jitter < 0 || p.Timeout < 0 {
			return c, errors.New("worker: pull interval must be above 0, jitter and timeout not negative")
		}
		if p.Timeout == 0 {
			p.Timeout = c.AskTimeout
		}
		c.Pull = &p
	}
	if c.Heartbeat < 0 || c.Telemetry < 0 || c.KeepAlive < time.Second || c.AskTimeout < 0 || c.LocalOutbox < 0 {
		return c, errors.New("worker: heartbeat, telemetry and ask timeout must not be negative; keepalive at least 1s")
	}
	return c, nil
}
