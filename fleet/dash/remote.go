package dash

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	flowctl "github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/runner"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// PhaseRemote is the Live.Phase of a Remote: a leader process watched
// over MQTT, with no timeline and no runner to steer.
const PhaseRemote = "remote"

// RemoteOptions configure DialRemote.
type RemoteOptions struct {
	// Broker is the leader's broker: tcp://host:port or ssl://host:port.
	Broker string
	// Username and Password log in. A broker with fleetsim's login policy
	// lets only the leader's login read the stats and every status, so
	// that is what a dashboard uses there (under its own client id, so
	// the leader's session is not taken over).
	Username, Password string
	// Topics gives the fleet's prefix (zero value: wire.DefaultPrefix).
	Topics wire.Topics
	// Clock times the samples and the staleness check. Default: wall.
	Clock clock.Clock
	// StaleAfter is how long without a stats report before the leader is
	// shown down. Default 10 s (five of the leader's default intervals).
	// The leader process announces itself offline when it stops cleanly,
	// but a killed one leaves "online" behind: only the silence tells.
	StaleAfter time.Duration
	// Logger receives the connection's logs. Default: discard.
	Logger *slog.Logger
	// Reconnect spaces the attempts to dial the broker again after the
	// connection is lost (Keep): full jitter over windows doubling from
	// Base to Cap, on Clock. Zero fields take DefaultRemoteReconnect's.
	Reconnect flowctl.Backoff
}

// DefaultRemoteReconnect is a Remote's backoff between attempts to dial
// its broker again: windows from 100 ms doubling to 5 s.
var DefaultRemoteReconnect = flowctl.Backoff{Base: 100 * time.Millisecond, Cap: 5 * time.Second}

// remoteHistory is how many reports the charts keep: ten minutes at the
// leader's default interval of 2 s.
const remoteHistory = 300

// maxRemoteRecords bounds the event records a long attach keeps; the
// records are a few per leader restart or deploy, so this is days.
const maxRemoteRecords = 10_000

// Remote is a [Source] that reads a running leader process through its
// broker: the leader's stats topic (leader.StatsReport, every
// --stats-interval) and every worker's retained status topic. It has no
// Controls: the dashboard shows it read-only.
//
// What it cannot show, it leaves out rather than guess: the workers'
// statuses say online or offline and nothing else, so a worker is never
// busy, full or updated in the grid (how many run the latest deploy's
// version is in Live.AtTarget, from the leader's latest report); the
// leader's wait p99 over an interval cannot be computed from what its
// reports carry, so LeaderWaitP99Interval holds the wait's mean over the
// interval instead; the workers' queues, the lag, the seed
// and the simulated duration are zero.
type Remote struct {
	o    RemoteOptions
	sess remoteConn
	id   string
	t0   time.Time
	rng  *rand.Rand // Keep's jitter

	mu        sync.Mutex
	reports   int // reports received
	last      leader.StatsReport
	lastAt    time.Duration // since t0, when the last report arrived
	samples   []result.Sample
	leaderOn  bool // its retained status, or true until one arrives
	stale     bool // stale warned, until the next report
	workers   map[string]bool
	ids       []string // sorted, rebuilt when a new worker appears
	records   []result.Record
	deploys   int // deploys recorded: every index below this one
	malformed uint64
	badWarned bool
	lostSeen  bool
	lostAt    time.Duration           // since t0: the statuses were current until then
	prevWait  stats.HistogramSnapshot // the last report's mailbox wait
}

// remoteConn is the part of a *transport.Session a Remote uses after
// connecting (a fake in the rendering tests).
type remoteConn interface {
	Lost() <-chan struct{}
	Err() error
	Close(clean bool)
	Redial(ctx context.Context) error
	Closed() bool
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
}

// DialRemote connects to o.Broker and subscribes to the leader's status
// and stats and to every worker's status. It returns once the broker has
// accepted the subscriptions, or an error that names the broker.
func DialRemote(ctx context.Context, o RemoteOptions) (*Remote, error) {
	var b [6]byte
	_, _ = crand.Read(b[:])
	id := "sim-dash-" + hex.EncodeToString(b[:])
	sess, err := transport.Connect(ctx, transport.ClientOptions{
		ID: id, Username: o.Username, Password: o.Password, Broker: o.Broker, CleanSession: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("dash: %w", err)
	}
	r := newRemote(o, sess, id)
	tp := o.Topics
	// The statuses last: subscribing brings every worker's retained status
	// at once, and the leader's code notes a SUBSCRIBE sent behind such a
	// flood being lost.
	for _, s := range []struct {
		filter string
		h      func(string, []byte)
	}{
		{tp.LeaderStats(), r.onStats},
		{tp.LeaderStatus(), r.onLeaderStatus},
		{tp.AllStatus(), r.onStatus},
	} {
		if err := sess.Subscribe(ctx, s.filter, 0, s.h); err != nil {
			r.Close()
			return nil, fmt.Errorf("dash: %s: %w", o.Broker, err)
		}
	}
	r.askAnnounce(ctx)
	r.o.Logger.Info("dashboard attached", "broker", o.Broker, "client", id)
	return r, nil
}

// newRemote is a Remote on an established connection, before any
// message.
func newRemote(o RemoteOptions, conn remoteConn, id string) *Remote {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Reconnect.Base <= 0 {
		o.Reconnect.Base = DefaultRemoteReconnect.Base
	}
	if o.Reconnect.Cap < o.Reconnect.Base {
		o.Reconnect.Cap = max(DefaultRemoteReconnect.Cap, o.Reconnect.Base)
	}
	// A dashboard's jitter need not repeat: seeded from the system's
	// randomness, so that dashboards that lost one broker do not come back
	// in step.
	var seed [16]byte
	_, _ = crand.Read(seed[:])
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	r := &Remote{o: o, sess: conn, id: id, t0: o.Clock.Now(), rng: rng, leaderOn: true, workers: map[string]bool{}}
	r.record("event", fmt.Sprintf("attached to %s as %s (read-only)", o.Broker, id))
	return r
}

// Lost is closed when the connection to the broker is lost or Close has
// been called; after Keep has dialed again, a new channel.
func (r *Remote) Lost() <-chan struct{} { return r.sess.Lost() }

// Keep keeps the connection to the broker until ctx ends or Close is
// called. When it is lost, the event log says so at once and Snapshot
// shows the leader down; Keep dials again with RemoteOptions.Reconnect's
// backoff until the broker takes the dashboard back, subscriptions and
// all (the retained statuses then arrive again), and logs that too.
func (r *Remote) Keep(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.sess.Lost():
		}
		if r.sess.Closed() {
			return
		}
		r.noteLost()
		err := r.o.Reconnect.Retry(ctx, r.o.Clock, r.rng, func(ctx context.Context) error {
			err := r.sess.Redial(ctx)
			if err != nil && r.sess.Closed() {
				return flowctl.Permanent(err)
			}
			return err
		})
		if err != nil {
			return // ctx ended, or Close
		}
		now := r.since()
		r.mu.Lock()
		r.lostSeen = false
		// The statuses seen before the outage say nothing of now: the
		// retained ones arrive again with the subscription, and a worker
		// whose status the broker no longer holds is not shown as if it
		// were known.
		clear(r.workers)
		r.ids = r.ids[:0]
		r.recordLocked(now, "event", "reconnected to the broker")
		r.mu.Unlock()
		r.askAnnounce(ctx)
		r.o.Logger.Info("dashboard reconnected", "broker", r.o.Broker)
	}
}

// noteLost records, once per outage, that the connection is lost.
func (r *Remote) noteLost() {
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lostSeen {
		return
	}
	r.lostSeen = true
	r.lostAt = now
	if r.stale {
		// Silent before the loss was noticed: its broker may have been
		// gone since the last report.
		r.lostAt = r.lastAt
	}
	msg := "lost the connection to the broker"
	if err := r.sess.Err(); err != nil {
		msg += ": " + err.Error()
	}
	r.recordLocked(now, "warning", msg+"; reconnecting")
}

// Err says why the connection was lost, if it was.
func (r *Remote) Err() error { return r.sess.Err() }

// Close disconnects and returns once the client's goroutines have
// stopped.
func (r *Remote) Close() { r.sess.Close(true) }

// since is the time since DialRemote: the remote's "simulated" time, which
// is wall time at speed 1.
func (r *Remote) since() time.Duration { return r.o.Clock.Now().Sub(r.t0) }

func (r *Remote) onStats(topic string, payload []byte) {
	var rep leader.StatsReport
	if err := json.Unmarshal(payload, &rep); err != nil {
		r.bad(fmt.Errorf("%s: %w", topic, err))
		return
	}
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	// The leader reports the deploys it keeps (its newest, and from its
	// outbox those of the leader before it), by index: each new index is
	// a new deploy. Indexes lower than those seen are a leader on another
	// outbox, whose deploys start over.
	next := 0
	if n := len(rep.Deploys); n > 0 {
		next = rep.Deploys[n-1].Index + 1
	}
	if r.reports > 0 && next < r.deploys {
		r.deploys = 0
	}
	for _, d := range rep.Deploys {
		if d.Index >= r.deploys {
			r.recordLocked(now, "event", fmt.Sprintf("deploy %s (%s) to %d %s in %d %s", d.Version, d.Kind,
				d.Targets, plural(d.Targets, "worker", "workers"), d.Waves, plural(d.Waves, "wave", "waves")))
		}
	}
	r.deploys = max(r.deploys, next)
	if r.stale {
		r.recordLocked(now, "event", "leader stats again")
		r.stale = false
	}
	r.reports++
	r.last, r.lastAt = rep, now
	s := runner.LeaderSample(simSec(now), []leader.Stats{rep.Stats}, r.leaderOn, rep.MailboxWaitP99)
	// The report's histogram has no buckets on the wire, so the wait's
	// p99 over the interval cannot be computed; its mean over the
	// interval can, from the count and the sum, and stands in for it.
	w := rep.Stats.Mailbox.Wait
	if r.reports > 1 && w.Count > r.prevWait.Count && w.Sum >= r.prevWait.Sum {
		s.LeaderWaitP99Interval = simSec((w.Sum - r.prevWait.Sum) / time.Duration(w.Count-r.prevWait.Count))
	}
	r.prevWait = w
	r.fillWorkers(&s)
	r.addSample(s)
}

// addSample keeps s in the bounded history.
func (r *Remote) addSample(s result.Sample) {
	if len(r.samples) == remoteHistory {
		// Shift rather than re-slice, so the backing array stays bounded;
		// a copy of 300 samples every two seconds is nothing.
		copy(r.samples, r.samples[1:])
		r.samples = r.samples[:remoteHistory-1]
	}
	r.samples = append(r.samples, s)
}

// downEvery is how often a Remote adds a sample of a leader that is down
// (no stats come then), so the charts show the outage as it lasts.
const downEvery = time.Second

// fillWorkers sets the workers' fields the statuses and the leader's
// fleet counts can honestly fill.
func (r *Remote) fillWorkers(s *result.Sample) {
	for _, on := range r.workers {
		if on {
			s.Online++
		}
	}
	if t := r.targetLocked(); t != "" {
		s.AtTarget = r.atTargetLocked(t)
	}
}

// atTargetLocked is how many workers run target by the latest report:
// the leader's count by version comes from the workers' heartbeats (as
// old as a heartbeat interval and the leader's processing round), its
// deploys' acks come as each worker applies the update; the larger is
// the fresher.
func (r *Remote) atTargetLocked(target string) int {
	acked := 0
	for _, d := range r.last.Deploys {
		if d.Version == target {
			acked += d.Totals.Delivered
		}
	}
	return max(r.last.Fleet.ByVersion[target], acked)
}

// targetLocked is the latest deploy's version, as the leader reports it.
func (r *Remote) targetLocked() string {
	if n := len(r.last.Deploys); n > 0 {
		return r.last.Deploys[n-1].Version
	}
	return ""
}

func (r *Remote) onLeaderStatus(topic string, payload []byte) {
	if len(payload) == 0 {
		return // a cleared retained status says nothing
	}
	st, err := wire.ParseStatus(topic, payload)
	if err != nil {
		r.bad(err)
		return
	}
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.Online != r.leaderOn {
		word := "offline"
		if st.Online {
			word = "online"
		}
		r.recordLocked(now, "event", "leader "+word)
	}
	r.leaderOn = st.Online
}

func (r *Remote) onStatus(topic string, payload []byte) {
	id, _, err := r.o.Topics.Parse(topic)
	if err != nil {
		return // <prefix>/_leader/status matches the wildcard too
	}
	if len(payload) == 0 {
		return
	}
	st, err := wire.ParseStatus(topic, payload)
	if err != nil {
		r.bad(err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workers[id]; !ok {
		i, _ := slices.BinarySearch(r.ids, id)
		r.ids = slices.Insert(r.ids, i, id)
	}
	r.workers[id] = st.Online
}

// bad counts a payload that could not be read, and says so once in the
// event pane (the rest are counted in the record's text at Snapshot).
func (r *Remote) bad(err error) {
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.malformed++
	if !r.badWarned {
		r.badWarned = true
		r.recordLocked(now, "warning", fmt.Sprintf("ignored a malformed message: %v", err))
	}
}

func (r *Remote) record(kind, text string) {
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recordLocked(now, kind, text)
}

func (r *Remote) recordLocked(now time.Duration, kind, text string) {
	switch n := len(r.records); {
	case n == maxRemoteRecords-1:
		kind, text = "warning", "further events are not recorded (too many)"
	case n >= maxRemoteRecords:
		return
	}
	r.records = append(r.records, result.Record{T: simSec(now), Kind: kind, Text: text})
}

// Snapshot returns the leader as the latest report showed it and the
// workers as their statuses say now. Latest.LeaderUp is false when the
// leader's status is offline, no report came for StaleAfter, or the
// connection to the broker is lost (Scenario then says so too).
func (r *Remote) Snapshot() result.Live {
	lost := false
	select {
	case <-r.sess.Lost():
		lost = true
		r.noteLost()
	default:
	}
	now := r.since()
	r.mu.Lock()
	defer r.mu.Unlock()
	silent := r.reports > 0 && now-r.lastAt > r.o.StaleAfter
	if silent && !r.stale {
		r.stale = true
		r.recordLocked(now, "warning", fmt.Sprintf("no stats from the leader for %s", fmtSec(simSec(r.o.StaleAfter))))
	}
	name := "remote: " + r.o.Broker
	if lost {
		name += " (connection lost, reconnecting)"
	}
	lv := result.Live{
		Scenario: name,
		Speed:    1,
		Now:      simSec(now),
		Phase:    PhaseRemote,
		Target:   r.targetLocked(),
		Records:  r.records[:len(r.records):len(r.records)],
	}
	if n := len(r.samples); n > 0 {
		last := r.samples[n-1]
		if up := last.LeaderUp && r.leaderOn && !silent && !lost; !up {
			// A leader that is down has no gauges; its counters stand.
			down := result.Sample{T: simSec(now), LeaderAccepted: last.LeaderAccepted, LeaderRejected: last.LeaderRejected,
				LeaderDropped: last.LeaderDropped, Delivered: last.Delivered, Backpressure: last.Backpressure,
				Retries: last.Retries, DeadLettered: last.DeadLettered, OutboxDepth: last.OutboxDepth, Online: last.Online}
			if down.T-last.T >= simSec(downEvery) {
				r.addSample(down)
				n = len(r.samples)
			}
			lv.Latest = down
		} else {
			lv.Latest = last
		}
		// A copy: onStats shifts the backing array in place.
		lv.History = slices.Clone(r.samples[:n])
	}
	if r.reports > 0 && lv.Target != "" {
		lv.AtTarget = r.atTargetLocked(lv.Target)
	}
	lv.Workers = make([]result.WorkerState, len(r.ids))
	for i, id := range r.ids {
		if r.workers[id] {
			lv.Workers[i] = result.StateOnline
		}
	}
	return lv
}

// fleetAsOf reports whether the workers' states Snapshot shows are
// current and, when not, the time they last were: while the connection
// to the broker is lost (a leader's embedded broker goes with its
// process), no status can arrive, and the grid shows the last ones.
func (r *Remote) fleetAsOf() (current bool, at result.Seconds) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lostSeen {
		return false, simSec(r.lostAt)
	}
	return true, 0
}

// WorkerDetails lists workers lo to hi-1 in id order, as the grid shows
// them: id and online or offline, all their statuses say.
func (r *Remote) WorkerDetails(lo, hi int) []result.WorkerDetail {
	r.mu.Lock()
	defer r.mu.Unlock()
	lo, hi = max(0, lo), min(hi, len(r.ids))
	var out []result.WorkerDetail
	for i := lo; i < hi; i++ {
		d := result.WorkerDetail{Index: i, ID: r.ids[i], Version: "–"}
		if r.workers[r.ids[i]] {
			d.State = result.StateOnline
		}
		out = append(out, d)
	}
	return out
}

// Malformed is the number of messages that could not be read (a stats
// report that is not JSON, a status that is neither online nor offline).
func (r *Remote) Malformed() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.malformed
}

func simSec(d time.Duration) result.Seconds { return result.Seconds(d.Seconds()) }

// askAnnounce asks the fleet to say again that it is online, as the
// leader does when it subscribes (wire.Topics.Announce): a broker that
// replays no retained status to a wildcard subscription (RabbitMQ) would
// otherwise show the dashboard no worker until each reconnects. Workers
// answer within their announce window (10 s by default). A broker that
// refuses the dashboard's login the publish loses nothing: the grid fills
// as workers come and go.
func (r *Remote) askAnnounce(ctx context.Context) {
	if err := r.sess.Publish(ctx, r.o.Topics.Announce(), 0, false, []byte("announce")); err != nil && ctx.Err() == nil {
		r.o.Logger.Debug("dashboard: ask the fleet to announce itself", "err", err)
	}
}
