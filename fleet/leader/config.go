package leader

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/dist"
	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Config configures a Leader. Link and Store are required; every other zero
// field takes the default noted.
type Config struct {
	// Link is the leader's MQTT session. Required.
	Link Link
	// Store is the outbox commands wait in (bbolt for a real leader).
	// Required. The leader does not close it.
	Store outbox.Store
	// Clock is the one clock for everything the leader times. Default: wall.
	Clock clock.Clock
	// Topics names the topics. Default prefix "fleet".
	Topics wire.Topics
	// Seed drives the service-time samples and the relay's jitter.
	Seed uint64
	// Logger receives the leader's logs. Default: discard.
	Logger *slog.Logger

	// Mailbox bounds worker requests and telemetry waiting for the leader.
	// Default capacity 1,000, policy reject (a full box answers "full,
	// retry after").
	Mailbox mailbox.Options
	// Service is the leader's time per request or telemetry message.
	// Default 1 ms.
	Service dist.Dist
	// HeartbeatInterval is the leader's own cadence for processing
	// heartbeats; in between, a worker's newer heartbeat replaces its
	// waiting one. Default 30 s.
	HeartbeatInterval time.Duration
	// HeartbeatAppend keeps every heartbeat in arrival order (an unbounded
	// mailbox) instead of only each worker's latest: the queue the
	// coalescing prevents, for comparison runs only.
	HeartbeatAppend bool
	// HeartbeatSlots bounds the workers whose heartbeat can wait at once
	// (one slot per worker). The mailbox allocates for the heartbeats
	// waiting, not for the slots, so the default costs nothing at start.
	// Default 1,000,000.
	HeartbeatSlots int
	// Relay configures the outbox relay; its Clock and Seed come from the
	// leader's, and AssumeOffline is always on: a leader that has just
	// (re)started sends nothing to a worker before its "online" arrives.
	Relay outbox.RelayOptions
	// Reconnect spaces the attempts to dial the broker again when the
	// session is lost (Link must be a Redialer): full jitter over windows
	// doubling from Base to Cap, drawn from Seed. Zero fields take
	// DefaultReconnect's.
	Reconnect flow.Backoff
	// SuspectAfter, if positive, makes a worker the leader has heard
	// nothing from for this long (no message, no online status) suspect:
	// its commands park as an offline worker's do, spending no attempt,
	// until it is heard again. Set it to a few of the workers' heartbeat
	// intervals: it catches a worker whose will a broker lost (a cluster
	// node that died with its session). 0 (the default): never.
	SuspectAfter time.Duration
	// AskTimeout is how long a delivery waits for the worker's ack before
	// it counts as a transient failure. Default 5 s.
	AskTimeout time.Duration
	// RetryRejects, if set, takes a worker's reject as a transient failure
	// (retried with backoff until the outbox's attempt limit, then
	// dead-lettered) instead of dead-lettering the command at once. For
	// comparison runs: what dead-lettering a refusal at once saves the
	// commands queued behind it.
	RetryRejects bool
	// Jobs is the job queue pulling workers take their work from (see
	// docs/PROTOCOL.md, "Work pulling"). Nil: the leader has none, and
	// refuses job requests. With a BoltJobs, the queue lives in the
	// outbox file beside Store.
	Jobs outbox.Jobs
	// JobLease is how long a worker holds a job it took before the job
	// goes back to the queue. Default 30 s.
	JobLease time.Duration
	// JobRetry is the retry time of a "drained" answer: when a worker
	// that found nothing should ask again. Default 1 s; never below 1 ms.
	JobRetry time.Duration
	// JobWorkers, if set, says which workers may pull: a job request from
	// any other is refused (reject) and counted (Stats.JobsRefused). Nil:
	// any worker that can publish on its up topic.
	JobWorkers func(worker string) bool
	// MaxPayload bounds an incoming envelope. Default wire.DefaultMaxSize.
	// A longer one is refused before it is parsed, counted
	// (Stats.PayloadTooLarge) and logged with its size.
	MaxPayload int
	// RefusalLogInterval limits the log of refused worker messages to one
	// line per worker and reason per interval, which says how many were
	// held back since the last (all are counted). Default 10 s.
	RefusalLogInterval time.Duration
	// BrokerRefusals, if set, returns the counts of what the broker in
	// front of the leader refused (logins, topics, packets too large),
	// for Stats.Refused. A leader on the embedded broker passes the
	// broker's Stats; an external broker keeps its own.
	BrokerRefusals func() BrokerRefusals
	// ReplyQueue bounds answers waiting to be published. The MQTT
	// delivery goroutine never waits for room: an answer that does not fit
	// is dropped and counted (Stats.RepliesDroppedFull), and the worker
	// asks again when its request times out. Default 4,096.
	ReplyQueue int
	// DeployHistory is how many of the newest deploys the leader keeps
	// (Deploys, the stats topic, /metrics) and saves in the outbox; an
	// older deploy is kept as long as any of its updates is queued.
	// Default 20.
	DeployHistory int
	// ProgressEvery is how often the leader looks up in the outbox the
	// deploy updates that may have left it unseen (expired, superseded,
	// dead-lettered) and saves its deploys' progress there, for a leader
	// restarted on the same file. A leader killed without a clean stop
	// loses at most this much of the progress (see Deploys); a deploy's
	// record itself is saved before Deploy returns. Default 1 s.
	ProgressEvery time.Duration

	// HeartbeatWait receives the age of each heartbeat when the leader
	// processes it (the heartbeat mailbox's wait), and AskRTT the time from
	// publishing a command to its ack. Nil: the leader keeps its own. A
	// scenario runner passes the same histograms (and Mailbox.Wait) to
	// every leader it restarts, so the distributions cover the whole run.
	HeartbeatWait, AskRTT *stats.Histogram
	// ServiceLag receives, for each request or telemetry message served,
	// how late (on Clock) the service loop completed it against its
	// schedule: the moment the previous service, or the message's
	// arrival, plus the sampled service time. A loop that keeps up
	// records 0 or a timer's overshoot; a starved one falls further
	// behind with each message. DeliveryLag receives, for each worker
	// message that carries its send time (request, telemetry,
	// heartbeat), the time from its SentMs to the leader's handler: the
	// transport's delay, on a clock the sender shares (a scenario run);
	// not under the block policy, where the handler itself waits for room
	// by design. Nil: the leader keeps its own. Shared like HeartbeatWait.
	ServiceLag, DeliveryLag *stats.Histogram
}

// DefaultReconnect is the leader's backoff between attempts to dial its
// broker again: windows from 100 ms doubling to 5 s. One leader makes no
// herd, so the cap is short: a restarted broker is back in service within
// seconds.
var DefaultReconnect = flow.Backoff{Base: 100 * time.Millisecond, Cap: 5 * time.Second}

// Defaults for Config.
const (
	DefaultMailboxCapacity   = 1000
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultHeartbeatSlots    = 1_000_000
	DefaultAskTimeout        = 5 * time.Second
	DefaultReplyQueue        = 4096
	DefaultDeployHistory     = 20
	DefaultProgressEvery     = time.Second
)

func (c Config) withDefaults() (Config, error) {
	if c.Link == nil {
		return c, errors.New("leader: config needs a Link")
	}
	if c.Store == nil {
		return c, errors.New("leader: config needs a Store")
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Mailbox.Capacity == 0 {
		c.Mailbox.Capacity = DefaultMailboxCapacity
	}
	c.Mailbox.Clock = c.Clock
	if c.Service == (dist.Dist{}) {
		c.Service = dist.Const(time.Millisecond)
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.HeartbeatSlots == 0 {
		c.HeartbeatSlots = DefaultHeartbeatSlots
	}
	if c.AskTimeout == 0 {
		c.AskTimeout = DefaultAskTimeout
	}
	if c.JobLease <= 0 {
		c.JobLease = DefaultJobLease
	}
	if c.JobRetry <= 0 {
		c.JobRetry = DefaultJobRetry
	}
	c.JobRetry = max(c.JobRetry, time.Millisecond)
	if c.Reconnect.Base == 0 {
		c.Reconnect.Base = DefaultReconnect.Base
	}
	if c.Reconnect.Cap == 0 {
		c.Reconnect.Cap = max(DefaultReconnect.Cap, c.Reconnect.Base)
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = wire.DefaultMaxSize
	}
	if c.ReplyQueue == 0 {
		c.ReplyQueue = DefaultReplyQueue
	}
	if c.RefusalLogInterval <= 0 {
		c.RefusalLogInterval = 10 * time.Second
	}
	if c.DeployHistory == 0 {
		c.DeployHistory = DefaultDeployHistory
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.HeartbeatWait == nil {
		c.HeartbeatWait = new(stats.Histogram)
	}
	if c.AskRTT == nil {
		c.AskRTT = new(stats.Histogram)
	}
	if c.ServiceLag == nil {
		c.ServiceLag = new(stats.Histogram)
	}
	if c.DeliveryLag == nil {
		c.DeliveryLag = new(stats.Histogram)
	}
	c.Relay.Clock = c.Clock
	c.Relay.Seed = c.Seed
	// A (re)started leader does not know who is connected: workers still
	// reconnecting would hold a relay slot each for an ask timeout.
	c.Relay.AssumeOffline = true
	switch {
	case c.HeartbeatInterval < 0:
		return c, fmt.Errorf("leader: heartbeat interval %v: must be positive", c.HeartbeatInterval)
	case c.AskTimeout < 0:
		return c, fmt.Errorf("leader: ask timeout %v: must be positive", c.AskTimeout)
	case c.Reconnect.Base < 0 || c.Reconnect.Cap < c.Reconnect.Base:
		return c, fmt.Errorf("leader: reconnect backoff base %v, cap %v: want 0 < base <= cap", c.Reconnect.Base, c.Reconnect.Cap)
	case c.HeartbeatSlots < 0 || c.ReplyQueue < 0 || c.MaxPayload < 0 || c.DeployHistory < 0:
		return c, errors.New("leader: heartbeat slots, reply queue, max payload and deploy history must be positive")
	case c.ProgressEvery < 0:
		return c, fmt.Errorf("leader: progress interval %v: must be positive", c.ProgressEvery)
	}
	return c, nil
}
