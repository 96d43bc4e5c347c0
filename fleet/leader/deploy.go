package leader

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// DeployPlan sends a version to a selection of workers in waves.
type DeployPlan struct {
	// Kind is wire.KindConfig or wire.KindFirmware. Default firmware.
	Kind wire.Kind
	// Version to apply. Required, and valid by wire.ValidVersion: the
	// rule the workers install by.
	Version string
	// Workers to update, in wave order. Required.
	Workers []string
	// WaveSize is the number of workers per wave; 0 sends to all at once.
	WaveSize int
	// WaveInterval separates the waves' start times.
	WaveInterval time.Duration
	// TTL, if positive, drops a worker's update that is still undelivered
	// that long after its wave started (counted as expired by the outbox).
	TTL time.Duration
	// Via, if set, names the config servers that serve the downloads: with
	// each target's update goes a download job to one of them (round robin,
	// never the target itself), due at the same wave time. A config server
	// takes one job at a time at its own service time, so a wave too big
	// for them fills their mailboxes — the "full" answers the relay's AIMD
	// limit reacts to. The update itself does not wait for
	// its download.
	Via []string
	// Queue, if set, queues each worker's update behind an older one
	// still waiting for it instead of replacing it: a worker that was away
	// then gets every version in turn. For comparison runs (what replacing
	// saves). Such a deploy cannot be cancelled.
	Queue bool
	// Request, if set, is the id of the request that asked for the
	// deploy (at most wire.MaxIDLen bytes): it is kept in the deploy's
	// record, and DeployFor finds the deploy by it, so that a request
	// asked again because its answer was lost is answered with the
	// deploy it started rather than starting another. Deploy itself does
	// not look: the caller does, one request at a time.
	Request string
}

// MaxWaves bounds the waves of one deploy: each is counted on its own
// (WaveProgress), in the leader's memory and its outbox file, so a
// deploy of a million waves of one would cost hundreds of megabytes.
const MaxWaves = 100_000

// Deploy enqueues the plan: one message per worker, each wave's messages
// due at the wave's start (now + i × WaveInterval). The waves live in the
// outbox, so a leader restarted from the same file carries on with them. A
// worker's update overwrites any older one still queued for it (key = the
// kind, seq = the deploy's number from the outbox's NextSeq, one for the
// whole deploy), so a worker that was away gets the latest version only,
// and a worker that has applied a later deploy takes an earlier one for
// stale. It returns the deploy's index for Deploys.
func (l *Leader) Deploy(ctx context.Context, p DeployPlan) (int, error) {
	if p.Kind == "" {
		p.Kind = wire.KindFirmware
	}
	switch {
	case p.Kind != wire.KindFirmware && p.Kind != wire.KindConfig:
		return 0, fmt.Errorf("leader: deploy kind %q: must be firmware or config", p.Kind)
	case wire.ValidVersion(p.Version) != nil:
		// The rule the workers install by: a version they would refuse
		// would only fill the dead letters.
		return 0, fmt.Errorf("leader: deploy: %w", wire.ValidVersion(p.Version))
	case len(p.Workers) == 0:
		return 0, errors.New("leader: deploy needs workers")
	case p.WaveSize < 0 || p.WaveInterval < 0 || p.TTL < 0:
		return 0, errors.New("leader: deploy wave size, wave interval and ttl must not be negative")
	case len(p.Request) > wire.MaxIDLen:
		return 0, fmt.Errorf("leader: deploy request id of %d bytes: at most %d", len(p.Request), wire.MaxIDLen)
	}
	size := p.WaveSize
	if size == 0 {
		size = len(p.Workers)
	}
	if err := CheckWaves(len(p.Workers), size); err != nil {
		return 0, fmt.Errorf("leader: deploy: %w", err)
	}
	seq, err := l.nextSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("leader: deploy %s: %w", p.Version, err)
	}
	now := l.clk.Now()
	body := wire.Body(wire.Apply{Version: p.Version})
	conflict := outbox.Overwrite
	if p.Queue {
		conflict = outbox.Append
	}
	msgs := make([]outbox.Message, len(p.Workers))
	for i, w := range p.Workers {
		wave := i / size
		msgs[i] = outbox.Message{
			Receiver: w, Kind: string(p.Kind), Payload: body,
			Key: string(p.Kind), Seq: seq, Conflict: conflict,
			SendAt: now.Add(time.Duration(wave) * p.WaveInterval),
		}
		if p.TTL > 0 {
			msgs[i].TTL = p.TTL + time.Duration(wave)*p.WaveInterval
		}
	}
	msgs = append(msgs, downloads(p, msgs, seq)...)
	receipts, err := l.cfg.Store.Enqueue(ctx, msgs...)
	if err != nil {
		return 0, fmt.Errorf("leader: deploy %s: %w", p.Version, err)
	}
	index := l.deploys.add(p, seq, size, receipts[:len(p.Workers)], now)
	// The deploy's record goes into the outbox before the caller hears
	// its number: a leader killed a moment later must not hand the same
	// number to the next deploy, nor lose the deploy's progress. Its
	// updates are queued whatever happens here.
	if err := l.deploys.saveOne(ctx, l.cfg.Store, now, index); err != nil {
		return index, fmt.Errorf("leader: deploy %d (%s) is queued, but its record was not saved: after a crash its number could be given again and its progress lost: %w", index, p.Version, err)
	}
	return index, nil
}

// CheckWaves checks that n targets in waves of size (0: one wave) make at
// most MaxWaves waves, and says which sizes would do if not.
func CheckWaves(n, size int) error {
	if size <= 0 || n <= 0 {
		return nil
	}
	if waves := (n + size - 1) / size; waves > MaxWaves {
		return fmt.Errorf("%d targets in waves of %d make %d waves, at most %d: want a wave size of at least %d", n, size, waves, MaxWaves, (n+MaxWaves-1)/MaxWaves)
	}
	return nil
}

// Deploys returns the deploys the leader keeps, oldest first: the newest
// Config.DeployHistory ones, and any older one whose messages are still
// queued. Their progress is kept in the outbox (see Config.ProgressEvery),
// so a leader restarted on the same bbolt file shows the deploys of the
// one before it and goes on counting their deliveries.
func (l *Leader) Deploys() []DeployProgress { return l.deploys.snapshot() }

// Progress returns the progress of the deploy with the index Deploy
// returned (its Index in Deploys: deploys are numbered on from those kept
// in the outbox), or false if the leader keeps it no longer (or never had
// it).
func (l *Leader) Progress(index int) (DeployProgress, bool) { return l.deploys.get(index) }

// DeploySummaries is Deploys in a few numbers each (DeploySummary),
// without a WaveProgress per wave: what the stats message and /metrics
// carry, bounded however many waves a deploy has.
func (l *Leader) DeploySummaries() []DeploySummary { return l.deploys.summaries() }

// DeployFor returns the kept deploy whose DeployPlan.Request was request,
// or false: a leader restarted on the same outbox finds those of the
// leader before it too.
func (l *Leader) DeployFor(request string) (DeployProgress, bool) {
	return l.deploys.byRequest(request)
}

// downloads returns a download job on a config server of p.Via for each
// update in updates, due with it. A job's key names its target, so a newer
// deploy's download replaces an older one still waiting.
func downloads(p DeployPlan, updates []outbox.Message, seq uint64) []outbox.Message {
	if len(p.Via) == 0 {
		return nil
	}
	body := wire.Body(wire.Job{})
	out := make([]outbox.Message, 0, len(updates))
	for i, u := range updates {
		server := p.Via[i%len(p.Via)]
		if server == u.Receiver {
			if len(p.Via) == 1 {
				continue // a lone config server has its update already
			}
			server = p.Via[(i+1)%len(p.Via)]
		}
		out = append(out, outbox.Message{
			Receiver: server, Kind: string(wire.KindJob), Payload: body,
			Key: "download/" + u.Receiver, Seq: seq, Conflict: outbox.Overwrite,
			SendAt: u.SendAt, TTL: u.TTL,
		})
	}
	return out
}

// Send enqueues one command for a worker (a job, a ping, a config push):
// kind and body are the envelope's. It goes through the outbox and the
// relay like a deploy's messages. A body Decode would refuse still goes in
// — it is dead-lettered at its first attempt: that is how a scenario
// injects poison messages. The command gets its own sequence number and a
// key no other command has (its kind and that number), so however often
// it is delivered the worker carries it out once.
func (l *Leader) Send(ctx context.Context, worker string, kind wire.Kind, body []byte) (uint64, error) {
	seq, err := l.nextSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("leader: send %s to %s: %w", kind, worker, err)
	}
	r, err := l.cfg.Store.Enqueue(ctx, outbox.Message{Receiver: worker, Kind: string(kind), Payload: body, Key: uniqueKey(kind, seq), Seq: seq})
	if err != nil {
		return 0, fmt.Errorf("leader: send %s to %s: %w", kind, worker, err)
	}
	return r[0].ID, nil
}

// SendAll is Send for many commands at once, one to each entry of workers
// (a worker listed twice gets two, in order): one sequence number and one
// outbox transaction for all of them, so that a thousand commands cost one
// fsync, not a thousand. Each command's key is its kind, the sequence
// number and its place in the list, which no other command shares. The
// commands go in together or not at all.
func (l *Leader) SendAll(ctx context.Context, workers []string, kind wire.Kind, body []byte) error {
	return l.sendMany(ctx, workers, kind, func(int) []byte { return body })
}

// sendMany enqueues one command to each of workers, body(i) to
// workers[i], under one sequence number in one outbox transaction (see
// SendAll).
func (l *Leader) sendMany(ctx context.Context, workers []string, kind wire.Kind, body func(i int) []byte) error {
	if len(workers) == 0 {
		return nil
	}
	seq, err := l.nextSeq(ctx)
	if err != nil {
		return fmt.Errorf("leader: send %d %s commands: %w", len(workers), kind, err)
	}
	msgs := make([]outbox.Message, len(workers))
	for i, w := range workers {
		key := uniqueKey(kind, seq) + "/" + strconv.Itoa(i)
		msgs[i] = outbox.Message{Receiver: w, Kind: string(kind), Payload: body(i), Key: key, Seq: seq}
	}
	if _, err := l.cfg.Store.Enqueue(ctx, msgs...); err != nil {
		return fmt.Errorf("leader: send %d %s commands: %w", len(workers), kind, err)
	}
	return nil
}
