package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// deployRun is one deploy of the run (a timeline event or a control) and
// the leader deploys that carry it: one, or one per wave with
// wait_for_wave, possibly on several leader instances.
type deployRun struct {
	version string
	kind    wire.Kind
	targets []int    // worker indexes, in wave order
	via     []string // the config servers serving the downloads (Deploy.Via)
	at      time.Duration
	paced   bool // the runner enqueues the waves one by one (wait_for_wave)

	// Guarded by Runner.mu.
	refs []deployRef
	done bool // every target ran the version at a sample
	// wavesDone: done, and every wave the serving leader tracks was
	// reported delivered (waveNews).
	wavesDone bool
	doneAt    time.Duration // that sample's time
}

// deployRef is one leader.Deploy call: the instance that took it, the
// index Deploy returned (its key for Progress), and the targets it
// covered.
type deployRef struct {
	lr       *leaderRun
	idx      int
	from, to int // targets[from:to]
}

// startDeploy starts a deploy: with wait_for_wave in the background, wave
// by wave; otherwise as one leader deploy whose waves the outbox holds
// (they survive a leader crash), enqueued at once if the leader is up.
func (r *Runner) startDeploy(ctx context.Context, spec scenario.Deploy, targets []int) {
	d := &deployRun{version: spec.Version, kind: wire.KindFirmware, targets: targets, at: r.simNow(), paced: spec.WaitForWave}
	if spec.Via != nil {
		idx, err := spec.Via.Select(r.specs)
		if err != nil {
			r.warnf("deploy %s: via: %v", spec.Version, err)
			return
		}
		for _, i := range idx {
			d.via = append(d.via, r.specs[i].ID)
		}
	}
	if spec.Kind != "" {
		d.kind = wire.Kind(spec.Kind)
	}
	r.mu.Lock()
	r.deploys = append(r.deploys, d)
	r.target = spec.Version
	r.mu.Unlock()
	if spec.WaitForWave {
		r.deploysN.Add(1)
		if !r.goBackground(func(ctx context.Context) {
			defer r.deploysN.Add(-1)
			r.runWaves(ctx, d, spec)
		}) {
			r.deploysN.Add(-1)
		}
		return
	}
	plan := r.plan(d, spec, 0, len(targets))
	plan.WaveSize, plan.WaveInterval = spec.WaveSize, spec.WaveInterval.D()
	if lr, _ := r.current(); lr != nil {
		idx, err := lr.l.Deploy(ctx, plan)
		if err == nil {
			r.addRef(d, deployRef{lr: lr, idx: idx, from: 0, to: len(targets)})
			return
		}
		if cur, _ := r.current(); cur == lr {
			r.warnf("deploy %s: %v", spec.Version, err)
			return
		}
	}
	// The leader is down: the deploy waits for the next one.
	r.deploysN.Add(1)
	if !r.goBackground(func(ctx context.Context) {
		defer r.deploysN.Add(-1)
		r.enqueue(ctx, d, plan, 0, len(targets))
	}) {
		r.deploysN.Add(-1)
	}
}

// plan is the leader deploy of targets[from:to].
func (r *Runner) plan(d *deployRun, spec scenario.Deploy, from, to int) leader.DeployPlan {
	ids := make([]string, 0, to-from)
	for _, i := range d.targets[from:to] {
		ids = append(ids, r.specs[i].ID)
	}
	return leader.DeployPlan{Kind: d.kind, Version: d.version, Workers: ids, TTL: spec.TTL.D(), Via: d.via,
		Queue: spec.Replace != nil && !*spec.Replace}
}

// enqueue hands plan to the serving leader, waiting for one and trying
// again through crashes. It reports whether the deploy was enqueued.
func (r *Runner) enqueue(ctx context.Context, d *deployRun, plan leader.DeployPlan, from, to int) bool {
	err := r.withLeader(ctx, func(lr *leaderRun) error {
		idx, err := lr.l.Deploy(ctx, plan)
		if err == nil {
			r.addRef(d, deployRef{lr: lr, idx: idx, from: from, to: to})
		}
		return err
	})
	if err != nil && ctx.Err() == nil {
		r.warnf("deploy %s: %v", d.version, err)
	}
	return err == nil
}

func (r *Runner) addRef(d *deployRun, ref deployRef) {
	r.mu.Lock()
	d.refs = append(d.refs, ref)
	r.mu.Unlock()
}

// runWaves enqueues a wait_for_wave deploy wave by wave: each wave once
// the previous one is delivered (as the leader's deploy progress says, or
// once its workers run the version if the leader that took it has
// crashed), and WaveInterval after that.
func (r *Runner) runWaves(ctx context.Context, d *deployRun, spec scenario.Deploy) {
	size := spec.WaveSize
	if size <= 0 {
		size = len(d.targets)
	}
	poll := min(r.sc.SampleEvery.D(), 500*time.Millisecond)
	for from := 0; from < len(d.targets); from += size {
		to := min(from+size, len(d.targets))
		if from > 0 {
			r.record("event", fmt.Sprintf("deploy %s: wave %d of %d", d.version, from/size+1, (len(d.targets)+size-1)/size), 0)
		}
		if !r.enqueue(ctx, d, r.plan(d, spec, from, to), from, to) {
			return
		}
		r.mu.Lock()
		ref := d.refs[len(d.refs)-1]
		r.mu.Unlock()
		t := r.own.NewTicker(poll)
		for !r.waveDone(d, ref) {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
		t.Stop()
		if to < len(d.targets) && clock.Sleep(ctx, r.own, spec.WaveInterval.D()) != nil {
			return
		}
	}
}

// waveDone reports whether the wave ref is delivered.
func (r *Runner) waveDone(d *deployRun, ref deployRef) bool {
	if cur, _ := r.current(); cur == ref.lr {
		if p, ok := ref.lr.l.Progress(ref.idx); ok {
			if w := p.Waves; len(w) > 0 && !w[0].Done.IsZero() {
				return true
			}
		}
		return false
	}
	// The leader that took it crashed (its progress died with it): the
	// workers' own view decides.
	for _, i := range d.targets[ref.from:ref.to] {
		if r.workers[i].State().Version != d.version {
			return false
		}
	}
	return true
}

// NextVersion is the version after v: its last number plus one ("1.0.0"
// → "1.0.1", "v2" → "v3", "2.0-rc1" → "2.0-rc2", zero padding kept:
// "007" → "008"), or v+".1" when it ends in no number (or in more digits
// than a uint64 holds).
func NextVersion(v string) string {
	end := len(v)
	start := end
	for start > 0 && v[start-1] >= '0' && v[start-1] <= '9' {
		start--
	}
	if start == end {
		return v + ".1"
	}
	n, err := strconv.ParseUint(v[start:end], 10, 64)
	if err != nil {
		return v + ".1"
	}
	digits := strconv.FormatUint(n+1, 10)
	if w := end - start; len(digits) < w {
		digits = strings.Repeat("0", w-len(digits)) + digits
	}
	return v[:start] + digits
}
