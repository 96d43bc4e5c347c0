package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/flow"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// DeployPlan sends a version to a selection of workers in waves.
type DeployPlan struct {
	// Kind is wire.KindConfig or wire.KindFirmware. Default firmware.
	Kind wire.Kind
	// Version to apply. Required.
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
	// saves).
	Queue bool
}

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
	case p.Version == "":
		return 0, errors.New("leader: deploy needs a version")
	case len(p.Workers) == 0:
		return 0, errors.New("leader: deploy needs workers")
	case p.WaveSize < 0 || p.WaveInterval < 0 || p.TTL < 0:
		return 0, errors.New("leader: deploy wave size, wave interval and ttl must not be negative")
	}
	size := p.WaveSize
	if size == 0 {
		size = len(p.Workers)
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
	return l.deploys.add(p, size, receipts[:len(p.Workers)], now), nil
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

// WaveProgress is one wave of a deploy, as the leader has seen it.
type WaveProgress struct {
	Targets      int
	Delivered    int           // acked ok
	Full         int           // "full" answers (each retried)
	Rejected     int           // refused for good (dead-lettered)
	Start        time.Time     // when the wave became due
	Done         time.Time     // when its last target was delivered or rejected; zero until then
	Duration     time.Duration // Done - Start, once done
	Replaced     int           // targets whose earlier queued update this one overwrote
	StaleDropped int           // targets that already had a newer update queued
}

// DeployProgress is one deploy and its waves.
type DeployProgress struct {
	Version string
	Kind    wire.Kind
	Targets int
	Waves   []WaveProgress
}

// Delivered totals the deploy's delivered targets.
func (d DeployProgress) Delivered() int {
	n := 0
	for _, w := range d.Waves {
		n += w.Delivered
	}
	return n
}

// Deploys returns every deploy started by this leader process (a restarted
// leader carries on delivering an earlier process's waves but does not know
// their progress).
func (l *Leader) Deploys() []DeployProgress { return l.deploys.snapshot() }

type waveRef struct{ deploy, wave int }

// deployTracker counts deliveries per wave.
type deployTracker struct {
	mu      sync.Mutex
	deploys []DeployProgress
	byMsg   map[uint64]waveRef // outbox id -> its wave, until settled
}

func (t *deployTracker) init() { t.byMsg = make(map[uint64]waveRef) }

func (t *deployTracker) add(p DeployPlan, size int, receipts []outbox.Receipt, now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := DeployProgress{Version: p.Version, Kind: p.Kind, Targets: len(p.Workers)}
	idx := len(t.deploys)
	for i, r := range receipts {
		wave := i / size
		if wave == len(d.Waves) {
			d.Waves = append(d.Waves, WaveProgress{Start: now.Add(time.Duration(wave) * p.WaveInterval)})
		}
		w := &d.Waves[wave]
		w.Targets++
		switch r.Outcome {
		case outbox.Stale:
			w.StaleDropped++
			continue
		case outbox.Replaced:
			w.Replaced++
		}
		t.byMsg[r.ID] = waveRef{idx, wave} // a replaced message now counts for this deploy
	}
	t.deploys = append(t.deploys, d)
	return idx
}

// outcome counts one delivery attempt's result for the wave it belongs to.
func (t *deployTracker) outcome(id uint64, err error, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ref, ok := t.byMsg[id]
	if !ok {
		return
	}
	w := &t.deploys[ref.deploy].Waves[ref.wave]
	switch flow.Classify(err) {
	case flow.OK:
		w.Delivered++
	case flow.Backpressure:
		w.Full++
		return
	case flow.Reject:
		w.Rejected++
	default:
		return
	}
	delete(t.byMsg, id)
	if w.Delivered+w.Rejected+w.StaleDropped == w.Targets {
		w.Done, w.Duration = now, now.Sub(w.Start)
	}
}

func (t *deployTracker) snapshot() []DeployProgress {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]DeployProgress, len(t.deploys))
	for i, d := range t.deploys {
		d.Waves = append([]WaveProgress(nil), d.Waves...)
		out[i] = d
	}
	return out
}
