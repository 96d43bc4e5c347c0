package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/outbox"
	"github.com/fleetsim/fleetsim/fleet/result"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/stats"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// endState is what the run leaves: its Result.
type endState struct {
	result result.Result
}

// finalState is what the run captured as it stopped: the Result's inputs.
type finalState struct {
	simEnd               time.Duration
	online, leaderOnline int // as the run ended, before anything stopped
	workers              []worker.Stats
	gateways             []worker.GatewayStats
	mailboxes            []mailbox.Stats
	leaders              leaderTotals // every instance's final counters
	outboxEnd            outbox.Stats // the file at the end
	dead                 []outbox.Message
	deadOK               bool
}

// shutdown stops everything the run started, in order — the timeline and
// the background goroutines, the sampler (after one last sample), the
// workers, the leader (cleanly: in-flight deliveries settle), its outbox,
// the broker — capturing on the way what the Result needs, and computes
// the Result.
func (r *Runner) shutdown(st *runStack) endState {
	// The run ends now: the clock a snapshot shows stops here, and the
	// last sample is the fleet as it ended.
	var f finalState
	r.mu.Lock()
	started := r.started
	if started {
		r.endAt, r.ended = r.clk.Mono()-r.t0, true
		f.simEnd = r.endAt
	}
	r.mu.Unlock()
	if st.timeline != nil {
		st.timeline.stop()
	}
	st.offline.stop()
	r.stopBackground(st)
	st.sampler.stop()
	if started {
		r.takeSample(f.simEnd)
	}
	if started {
		r.keepEndStates()
	}
	for _, w := range r.workers {
		if w.State().Online {
			f.online++
		}
	}
	if lr, _ := r.current(); lr != nil {
		f.leaderOnline = lr.l.Online()
	}
	if bs := st.broker.Stats(); bs.PublishDropped+bs.InflightDropped > 0 {
		// The broker lost these without telling anyone: a message the
		// leader or a worker needed may be among them.
		r.warnf("the broker dropped %d messages for a full write queue and refused %d deliveries for too many in flight", bs.PublishDropped, bs.InflightDropped)
	}
	st.poolCancel()
	<-st.poolDone
	f.workers = make([]worker.Stats, len(r.workers))
	f.mailboxes = make([]mailbox.Stats, len(r.workers))
	for i, w := range r.workers {
		f.workers[i], f.mailboxes[i] = w.Stats(), w.MailboxStats()
	}
	if r.pool != nil {
		for _, g := range r.pool.Gateways() {
			f.gateways = append(f.gateways, g.Stats())
		}
	}
	if lr := r.stopLeader(false); lr != nil {
		f.dead, f.deadOK = lr.dead, lr.deadOK
	}
	f.leaders, f.outboxEnd = r.gather()
	if !f.deadOK {
		f.dead, f.deadOK = r.readDeadLetters()
	}
	r.closeBroker(st.broker)
	for _, why := range r.clk.ForcedReasons() {
		r.warnf("simulated time was forced on before the process settled, %s", why)
	}
	return endState{result: r.result(&f)}
}

// readDeadLetters lists the outbox file's dead letters when no leader
// stopped cleanly to do it (the run ended with the leader down).
func (r *Runner) readDeadLetters() ([]outbox.Message, bool) {
	if r.sc.Leader.Outbox.Store == scenario.StoreMemory {
		return nil, true // gone with the leader
	}
	oo, err := r.outboxOptions()
	if err != nil {
		return nil, false
	}
	st, err := outbox.OpenBolt(r.lead.path, oo)
	if err != nil {
		r.warnf("reading the dead letters: %v", err)
		return nil, false
	}
	defer st.Close()
	dead, err := st.DeadLetters(context.Background(), 0)
	return dead, err == nil
}

// result computes the Result from what the run captured. Every number is
// read from the mechanisms' own stats; the Lost figures are balances
// across them, defined in fleet/result (CommandLedger.Lost,
// TelemetryResult.Balance).
func (r *Runner) result(f *finalState) result.Result {
	sc := r.sc
	res := result.Result{}
	r.lead.mu.Lock()
	restarts, depthStart := r.lead.restarts, r.lead.depthStart
	r.lead.mu.Unlock()
	r.mu.Lock()
	events, samples, deploys := r.fired, r.samples, r.deploys
	r.mu.Unlock()
	res.Run = result.RunInfo{
		Seed: sc.Seed, Speed: r.o.Speed, SimSeconds: simSec(f.simEnd), ForcedAdvances: r.clk.Forced(),
		Events: events, LeaderRestarts: restarts,
	}
	r.lagResult(&res.Run)

	res.Fleet = result.FleetResult{Count: len(r.workers), Groups: map[string]int{}, Online: f.online, Offline: len(r.workers) - f.online, LeaderOnline: f.leaderOnline}
	for _, g := range r.groups {
		res.Fleet.Groups[g]++
	}
	res.Fleet.Gateways, res.Fleet.GatewaySize = scenario.GatewayShape(r.specs)

	res.Workers = r.workersResult(f)
	res.Gateways = gatewaysResult(f.gateways)
	lt := f.leaders
	res.Leader = leaderResult(lt, &r.leaderWait, &r.askRTT)
	res.Heartbeat = heartbeatResult(lt, f.workers, &r.hbWait)
	res.Relay = r.relayResult(lt)

	res.Outbox = result.OutboxResult{
		Enqueued:     lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Enqueued }),
		Acked:        lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Acked }),
		Overwritten:  lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Overwritten }),
		Stale:        lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Stale }),
		Expired:      lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Expired }),
		DeadLettered: lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.DeadLettered }),
		Replayed:     lt.sum(func(l *leader.Stats) uint64 { return l.Outbox.Replayed }),
		Depth:        f.outboxEnd.Depth,
		DeadLetters:  f.outboxEnd.DeadLetters,
		// Each store's own high-water mark: a deploy's waves are queued
		// at once and the first leaves within a sample's time.
		MaxDepth: lt.maxOf(func(l *leader.Stats) int { return l.Outbox.PeakDepth }),
	}
	for _, s := range samples { // the stores' peaks cover every sampled depth
		res.Outbox.OldestMax = max(res.Outbox.OldestMax, s.OutboxOldest)
	}
	res.Deploys = r.deployResults(deploys, f)
	res.Events = r.eventResults()
	res.Windows = r.windowResults()
	res.Commands = r.commandBalance(&res, f, deploys, depthStart)
	res.Telemetry = telemetryBalance(f.workers, res.Leader.TelemetryReceived)
	var jobsEnd outbox.JobStats
	if n := len(lt.all); n > 0 {
		jobsEnd = lt.all[n-1].Jobs
	}
	res.Jobs = r.jobsResult(lt, f.workers, jobsEnd)
	for _, s := range samples { // the queue's oldest job at its worst, not just at the end
		res.Jobs.OldestAge = max(res.Jobs.OldestAge, s.JobsOldest)
	}
	res.Lost = res.Commands.Lost + res.Telemetry.Lost
	if res.Lost != 0 {
		r.warnf("lost %d messages: commands %d (sent %d, queued %d), telemetry %d (generated %d, pending %d)",
			res.Lost, res.Commands.Lost, res.Commands.Sent, res.Commands.Queued, res.Telemetry.Lost, res.Telemetry.Generated, res.Telemetry.Pending)
	}
	return res
}

func quantilesOf(s stats.HistogramSnapshot) result.Quantiles {
	return result.Quantiles{P50: simSec(s.Quantile(0.5)), P90: simSec(s.Quantile(0.9)), P99: simSec(s.Quantile(0.99)), Max: simSec(s.Max), Mean: simSec(s.Mean())}
}

// MaxAppliedTwiceIDs bounds workers.applied_twice_ids: enough to find the
// workers in a failing run's logs, not a second copy of a large fleet.
const MaxAppliedTwiceIDs = 100

// workersResult sums the workers' own counters.
func (r *Runner) workersResult(f *finalState) result.WorkersResult {
	w := result.WorkersResult{AtVersion: map[string]int{}}
	policies := map[mailbox.Policy]bool{}
	for i, s := range f.workers {
		w.AtVersion[s.Version]++
		w.Applied += s.Applied
		for _, n := range s.AppliedVersions {
			if n > 1 {
				w.AppliedTwice++
				if len(w.AppliedTwiceIDs) < MaxAppliedTwiceIDs {
					w.AppliedTwiceIDs = append(w.AppliedTwiceIDs, r.specs[i].ID)
				}
				break
			}
		}
		w.Duplicates += s.Duplicates
		w.Stale += s.Stale
		w.Expired += s.Expired
		w.AckedOK += s.AckedOK
		w.AckedFull += s.AckedFull
		w.MaxAttempt = max(w.MaxAttempt, s.MaxAttempt)
		w.Connects += s.Connects
		w.ConnectAttempts += s.ConnectAttempts
		w.Reconnects += s.Reconnects
		w.ConnectionsLost += s.ConnectionsLost
		w.Malformed += s.Malformed
		w.Crashes += s.Crashes
		w.Refused += s.Refused
		w.GatewayDropped += s.DeliveriesDropped
		w.LinkLost += s.LinkLost
		w.SyncSent += s.SyncSent
		w.SyncOK += s.SyncOK
		w.SyncFull += s.SyncFull
		w.SyncTimeouts += s.SyncTimeouts
		m := f.mailboxes[i]
		policies[m.Policy] = true
		w.Mailbox.Capacity += m.Capacity
		w.Mailbox.Offered += m.Offered
		w.Mailbox.Taken += m.Taken
		w.Mailbox.Dropped += m.Dropped()
		w.Mailbox.Rejected += m.Rejected()
		w.Mailbox.Depth += m.Depth
		w.Mailbox.MaxDepth = max(w.Mailbox.MaxDepth, m.MaxDepth)
	}
	w.Mailbox.Policy = "mixed"
	if len(policies) == 1 {
		for p := range policies {
			w.Mailbox.Policy = p.String()
		}
	}
	w.Mailbox.Wait = quantilesOf(r.workerWait.Snapshot())
	return w
}

// leaderResult sums the leader's counters over its instances; the
// mailbox's capacity and depth are the last instance's.
func leaderResult(lt leaderTotals, wait, rtt *stats.Histogram) result.LeaderResult {
	sum := lt.sum
	l := result.LeaderResult{
		RequestsReceived:  sum(func(l *leader.Stats) uint64 { return l.RequestsReceived }),
		RequestsServed:    sum(func(l *leader.Stats) uint64 { return l.RequestsServed }),
		TelemetryReceived: sum(func(l *leader.Stats) uint64 { return l.TelemetryReceived }),
		TelemetryServed:   sum(func(l *leader.Stats) uint64 { return l.TelemetryServed }),
		AnsweredFull:      sum(func(l *leader.Stats) uint64 { return l.AnsweredFull }),
		Malformed:         sum(func(l *leader.Stats) uint64 { return l.Malformed }),
		Reconnects:        sum(func(l *leader.Stats) uint64 { return l.Reconnects }),
		AskRTT:            quantilesOf(rtt.Snapshot()),
		AsksSent:          sum(func(l *leader.Stats) uint64 { return l.AsksSent }),
		AsksTimedOut:      sum(func(l *leader.Stats) uint64 { return l.AsksTimedOut }),
	}
	m := &l.Mailbox
	m.Offered = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Offered })
	m.Taken = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Taken })
	m.Dropped = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Dropped() })
	m.Rejected = sum(func(l *leader.Stats) uint64 { return l.Mailbox.Rejected() })
	m.MaxDepth = lt.maxOf(func(l *leader.Stats) int { return l.Mailbox.MaxDepth })
	if n := len(lt.all); n > 0 {
		last := lt.all[n-1].Mailbox
		m.Capacity, m.Policy, m.Depth = last.Capacity, last.Policy.String(), last.Depth
	}
	m.Wait = quantilesOf(wait.Snapshot())
	return l
}

// heartbeatResult follows heartbeats from the workers to the leader's
// processing.
func heartbeatResult(lt leaderTotals, ws []worker.Stats, age *stats.Histogram) result.HeartbeatResult {
	h := result.HeartbeatResult{
		Received:  lt.sum(func(l *leader.Stats) uint64 { return l.HeartbeatsReceived }),
		Processed: lt.sum(func(l *leader.Stats) uint64 { return l.HeartbeatsProcessed }),
		Coalesced: lt.sum(func(l *leader.Stats) uint64 { return l.Heartbeats.DroppedCoalesced }),
		MaxQueued: lt.maxOf(func(l *leader.Stats) int { return l.Heartbeats.MaxDepth }),
		Rounds:    lt.sum(func(l *leader.Stats) uint64 { return l.HeartbeatRounds }),
		Age:       quantilesOf(age.Snapshot()),
	}
	for _, s := range ws {
		h.Sent += s.HeartbeatsSent
		h.Stored += s.HeartbeatsStored
		h.Coalesced += s.HeartbeatsCoalesced
	}
	if h.Received > 0 {
		h.CoalescedRatio = float64(h.Coalesced) / float64(h.Received)
	}
	return h
}

// relayResult sums the relay over its partitions and leader instances
// (the limiters' own decrease counts included); the limits' range comes
// from their histories.
func (r *Runner) relayResult(lt leaderTotals) result.RelayResult {
	total := func(f func(outbox.PartitionStats) uint64) uint64 {
		return lt.sum(func(l *leader.Stats) uint64 { return f(l.Relay.Total()) })
	}
	rr := result.RelayResult{
		Delivered:    total(func(p outbox.PartitionStats) uint64 { return p.Delivered }),
		Backpressure: total(func(p outbox.PartitionStats) uint64 { return p.Backpressure }),
		Retries:      total(func(p outbox.PartitionStats) uint64 { return p.Retries }),
		Errors:       total(func(p outbox.PartitionStats) uint64 { return p.Errors }),
		DeadLettered: total(func(p outbox.PartitionStats) uint64 { return p.DeadLettered }),
		OfflineSkips: total(func(p outbox.PartitionStats) uint64 { return p.OfflineSkips }),
	}
	lo, hi, gaps := r.limits.result()
	dec := total(func(p outbox.PartitionStats) uint64 { return p.Decreases })
	rr.Limit = result.LimitRange{Initial: r.limitInitial(), Min: lo, Max: hi, Decreases: int(dec)}
	if n := len(lt.all); n > 0 {
		last := lt.all[n-1].Relay
		rr.Partitions = len(last.Partitions)
		rr.Limit.Final = last.Total().Limit
	}
	if gaps > 0 {
		r.warnf("relay limits moved more than %d times between two samples %d times: limit.min and limit.max may miss an extreme", limitHistory, gaps)
	}
	return rr
}

// deployResults reports each deploy: Delivered counts the targets whose
// worker applied the version (the effect, from the workers' own stats);
// Rejected the targets whose update is in the dead letters; Duration runs
// from the deploy's start to its last delivery as the leader that carried
// it saw it, or — when a crash took that leader's progress with it — to
// the first sample at which every target ran the version; Never when
// neither came.
func (r *Runner) deployResults(ds []*deployRun, f *finalState) []result.DeployResult {
	out := make([]result.DeployResult, 0, len(ds))
	for _, d := range ds {
		res := result.DeployResult{Version: d.version, Targets: len(d.targets)}
		for _, i := range d.targets {
			if f.workers[i].AppliedVersions[d.version] > 0 {
				res.Delivered++
			}
		}
		dead := deadFor(f.dead, d)
		res.Rejected = len(dead)
		r.mu.Lock()
		refs, done, doneAt := append([]deployRef(nil), d.refs...), d.done, d.doneAt
		r.mu.Unlock()
		res.Early = earlyTargets(d, refs, f.workers)
		switch dur, ok := leaderDuration(refs, len(d.targets)); {
		case ok:
			res.Duration = simSec(dur)
		case done:
			res.Duration = simSec(doneAt - d.at)
		default:
			res.Duration = result.Never
		}
		out = append(out, res)
	}
	return out
}

// deadFor returns the receivers of d's updates in the dead letters.
func deadFor(dead []outbox.Message, d *deployRun) map[string]bool {
	out := map[string]bool{}
	for _, m := range dead {
		if m.Kind != string(d.kind) {
			continue
		}
		var a struct{ Version string }
		if json.Unmarshal(m.Payload, &a) == nil && a.Version == d.version {
			out[m.Receiver] = true
		}
	}
	return out
}

// earlyTargets counts d's targets whose worker first applied d's version
// before its wave was due, the waves as the leader deploys that carried d
// planned them.
func earlyTargets(d *deployRun, refs []deployRef, ws []worker.Stats) int {
	n := 0
	for _, ref := range refs {
		p, ok := ref.lr.l.Progress(ref.idx)
		if !ok {
			continue
		}
		j := ref.from
		for _, w := range p.Waves {
			for k := 0; k < w.Targets && j < ref.to; k, j = k+1, j+1 {
				if at, ok := ws[d.targets[j]].FirstApplied[d.version]; ok && at.Before(w.Start) {
					n++
				}
			}
		}
	}
	return n
}

// leaderDuration is the deploy's duration by its leaders' progress: from
// its first wave's start to its last wave's end, if every wave of every
// leader deploy carrying it finished and they cover every target.
func leaderDuration(refs []deployRef, targets int) (time.Duration, bool) {
	var start, end time.Time
	covered := 0
	for _, ref := range refs {
		p, ok := ref.lr.l.Progress(ref.idx)
		if !ok {
			return 0, false
		}
		for _, w := range p.Waves {
			if w.Done.IsZero() {
				return 0, false
			}
			if start.IsZero() || w.Start.Before(start) {
				start = w.Start
			}
			if w.Done.After(end) {
				end = w.Done
			}
		}
		covered += ref.to - ref.from
	}
	if covered != targets || start.IsZero() {
		return 0, false
	}
	return end.Sub(start), true
}

// commandBalance gathers the leader's commands' ledger (result.CommandLedger)
// from the outbox, the workers' mailboxes and the deploys, and balances it.
func (r *Runner) commandBalance(res *result.Result, f *finalState, ds []*deployRun, depthStart int) result.CommandResult {
	o := res.Outbox
	c := result.CommandResult{Sent: o.Enqueued, Queued: o.Depth, Poisoned: r.poisoned.Load()}
	l := result.CommandLedger{Outbox: o, DepthAtStart: depthStart, AckedOK: res.Workers.AckedOK, Expired: res.Workers.Expired}
	// A worker acks ok only what its mailbox accepted, so every command
	// the mailbox held was acked: whatever its policy evicted from the
	// queue (drop-oldest, coalesce) was dropped after its ack. The rest
	// was taken to be served or is still queued.
	for i, m := range f.mailboxes {
		c.DroppedAfterAck += m.DroppedOldest + m.DroppedCoalesced
		c.LostInReboot += f.workers[i].CommandsLostInReboot
		l.Taken += m.Taken
		l.Held += uint64(m.Depth)
	}
	l.DroppedAfterAck, l.LostInReboot = c.DroppedAfterAck, c.LostInReboot
	for k, d := range ds {
		later := map[int]bool{}
		for _, e := range ds[k+1:] {
			if e.kind == d.kind {
				for _, i := range e.targets {
					later[i] = true
				}
			}
		}
		dead := deadFor(f.dead, d)
		for _, i := range d.targets {
			if f.workers[i].AppliedVersions[d.version] == 0 && !later[i] && !dead[r.specs[i].ID] {
				l.Missing++
			}
		}
	}
	c.Lost = l.Lost()
	return c
}

// telemetryBalance sums the workers' telemetry counters and balances them
// against what the leader received (result.TelemetryResult.Balance).
func telemetryBalance(ws []worker.Stats, received uint64) result.TelemetryResult {
	var t result.TelemetryResult
	for _, s := range ws {
		t.Generated += s.TelemetryGenerated
		t.Direct += s.TelemetryDirect
		t.Stored += s.TelemetryStored
		t.Forwarded += s.TelemetryForwarded
		t.Rejected += s.TelemetryRejected
		t.Dropped += s.TelemetryDropped
		t.LostInReboot += s.TelemetryLostInReboot
		t.Pending += s.TelemetryQueued
	}
	t.Lost = t.Balance(received)
	return t
}

// gatewaysResult sums the gateways' own counters.
func gatewaysResult(gs []worker.GatewayStats) result.GatewaysResult {
	var g result.GatewaysResult
	for _, s := range gs {
		g.ConnectionsLost += s.ConnectionsLost
		g.DevicesLost += s.DevicesLost
		g.Wills += s.Wills
		g.DownlinkForwarded += s.DownlinkForwarded
		g.DownlinkRefused += s.DownlinkRefused
		g.DownlinkDropped += s.DownlinkDropped
		g.DownlinkMaxQueue = max(g.DownlinkMaxQueue, s.DownlinkMaxQueue)
	}
	return g
}
