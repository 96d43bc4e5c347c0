package runner

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/fleet/clock"
	"github.com/fleetsim/fleetsim/fleet/scenario"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// timedEvent is a timeline event ready to fire, its workers resolved.
type timedEvent struct {
	idx     int // in Scenario.Timeline
	at      time.Duration
	ev      scenario.Event
	targets []int // the selected workers' indexes, for events that select
	text    string
}

// planTimeline orders the timeline by time (events at the same time keep
// their file order), resolves every selector and names each event. An
// event with no action or more than one, or a selector that picks no
// worker of this fleet, is an error naming the event.
func (r *Runner) planTimeline() ([]timedEvent, error) {
	out := make([]timedEvent, 0, len(r.sc.Timeline))
	for i, ev := range r.sc.Timeline {
		te := timedEvent{idx: i, at: ev.At.D(), ev: ev}
		where := fmt.Sprintf("scenario %s: timeline[%d] (at %v)", r.sc.Name, i, ev.At)
		sel, n := eventSelector(&ev)
		if n != 1 {
			return nil, fmt.Errorf("%s: want exactly one action (partition, heal, partition_gateways, heal_gateways, disconnect, reconnect, crash, reboot, leader_crash, deploy, heartbeat_storm, set_capacity, set_leader, poison, replay_dead_letters, speed, jobs), found %d", where, n)
		}
		if sel != nil {
			idx, err := sel.Select(r.specs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			te.targets = idx
		}
		if ev.PartitionGateways != nil || ev.HealGateways != nil {
			for _, i := range te.targets {
				if r.specs[i].Gateway == "" {
					return nil, fmt.Errorf("%s: worker %s has a session of its own, no gateway to cut off or heal: select workers behind gateways (fleet.gateway_size, a group's gateway_size, or --gateway-size)", where, r.specs[i].ID)
				}
			}
		}
		if ev.At.D() > r.sc.Duration.D() {
			return nil, fmt.Errorf("%s: after the end of the run (duration %v)", where, r.sc.Duration)
		}
		if d := ev.Deploy; d != nil && d.Kind != "" && d.Kind != scenario.DeployFirmware && d.Kind != scenario.DeployConfig {
			return nil, fmt.Errorf("%s: deploy kind %q: want firmware or config", where, d.Kind)
		}
		if s := ev.Speed; s != nil && !(*s > 0) {
			return nil, fmt.Errorf("%s: speed %g: want a positive number", where, *s)
		}
		nw := len(te.targets)
		if ev.Jobs != nil {
			nw = len(r.specs) // a jobs event deals over the whole fleet
		}
		te.text = eventText(&ev, nw)
		out = append(out, te)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out, nil
}

// eventSelector returns the event's worker selector (nil for events that
// select none) and how many actions the event sets.
func eventSelector(e *scenario.Event) (*scenario.Selector, int) {
	var sel *scenario.Selector
	n := 0
	pick := func(set bool, s *scenario.Selector) {
		if set {
			n++
			sel = s
		}
	}
	for _, t := range []*scenario.Targets{e.Partition, e.Heal, e.PartitionGateways, e.HealGateways, e.Disconnect, e.Reconnect, e.Crash, e.Reboot, e.ReplayDeadLetters} {
		if t != nil {
			pick(true, &t.Workers)
		}
	}
	if e.Deploy != nil {
		pick(true, &e.Deploy.Workers)
	}
	if e.HeartbeatStorm != nil {
		pick(true, &e.HeartbeatStorm.Workers)
	}
	if e.SetCapacity != nil {
		pick(true, &e.SetCapacity.Workers)
	}
	if e.Poison != nil {
		pick(true, &e.Poison.Workers)
	}
	for _, set := range []bool{e.LeaderCrash != nil, e.SetLeader != nil, e.Speed != nil, e.Jobs != nil} {
		if set {
			n++
		}
	}
	return sel, n
}

// eventText names the event for records and the dashboard.
func eventText(e *scenario.Event, workers int) string {
	ws := fmt.Sprintf("%d workers", workers)
	switch {
	case e.Partition != nil:
		return "partition " + ws
	case e.Heal != nil:
		return "heal " + ws
	case e.PartitionGateways != nil:
		return "partition the gateways of " + ws
	case e.HealGateways != nil:
		return "heal the gateways of " + ws
	case e.Disconnect != nil:
		return "disconnect " + ws
	case e.Reconnect != nil:
		return "reconnect " + ws
	case e.Crash != nil:
		return "crash " + ws
	case e.Reboot != nil:
		return "reboot " + ws
	case e.ReplayDeadLetters != nil:
		return "replay the dead letters of " + ws
	case e.LeaderCrash != nil:
		return fmt.Sprintf("leader crash (restart after %v)", e.LeaderCrash.RestartAfter)
	case e.Deploy != nil:
		d := e.Deploy
		var b strings.Builder
		fmt.Fprintf(&b, "deploy %s to %s", d.Version, ws)
		if d.WaveSize > 0 {
			fmt.Fprintf(&b, " in waves of %d", d.WaveSize)
			if d.WaitForWave {
				b.WriteString(", each when the last is delivered")
				if d.WaveInterval > 0 {
					fmt.Fprintf(&b, " and %v after", d.WaveInterval)
				}
			} else if d.WaveInterval > 0 {
				fmt.Fprintf(&b, " every %v", d.WaveInterval)
			}
		}
		return b.String()
	case e.HeartbeatStorm != nil:
		return fmt.Sprintf("heartbeat storm: %s every %v for %v", ws, e.HeartbeatStorm.Interval, e.HeartbeatStorm.For)
	case e.SetCapacity != nil:
		return fmt.Sprintf("set capacity %d on %s", e.SetCapacity.Capacity, ws)
	case e.SetLeader != nil:
		var parts []string
		if c := e.SetLeader.Capacity; c != nil {
			parts = append(parts, fmt.Sprintf("capacity %d", *c))
		}
		if s := e.SetLeader.Service; s != nil {
			parts = append(parts, "service "+s.String())
		}
		return "set leader " + strings.Join(parts, ", ")
	case e.Poison != nil:
		return fmt.Sprintf("poison: %d command(s) to each of %s", max(e.Poison.Count, 1), ws)
	case e.Jobs != nil:
		return fmt.Sprintf("jobs: %d", e.Jobs.Jobs(workers))
	case e.Speed != nil:
		return fmt.Sprintf("speed %g", *e.Speed)
	}
	return "nothing"
}

// timelineAction is something the timeline does at a simulated time: an event, or
// the second half of one (a leader restart, the end of a storm).
type timelineAction struct {
	at      time.Duration // simulated, since time 0
	seq     int           // ties keep scheduling order
	event   *timedEvent   // nil for a second half
	text    string
	mustRun bool // a second half the drain still runs if its time has not come
	mark    bool // a window's edge: not an event, nothing to record
	do      func(ctx context.Context, push func(*timelineAction))
}

type timelineHeap []*timelineAction

func (h timelineHeap) Len() int { return len(h) }
func (h timelineHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timelineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timelineHeap) Push(x any)   { *h = append(*h, x.(*timelineAction)) }
func (h *timelineHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return a
}

// timelineLoop is the goroutine that fires the timeline, and its queue.
type timelineLoop struct {
	*ownedLoop
	h   *timelineHeap // owned by the goroutine until it has stopped
	seq *int
}

// startTimeline fires the timeline's events at their simulated times, one
// goroutine for all of them, measuring how late each fires.
func (r *Runner) startTimeline() *timelineLoop {
	h := &timelineHeap{}
	seq := 0
	push := func(a *timelineAction) {
		seq++
		a.seq = seq
		heap.Push(h, a)
	}
	r.windowEdges(push)
	for i := range r.events {
		te := &r.events[i]
		push(&timelineAction{at: te.at, event: te, text: te.text, do: r.eventAction(te)})
	}
	t := &timelineLoop{h: h, seq: &seq}
	t.ownedLoop = goLoop(func(ctx context.Context) {
		for h.Len() > 0 {
			a := (*h)[0]
			if wait := r.untilSim(a.at); wait > 0 {
				if clock.Sleep(ctx, r.own, wait) != nil {
					return
				}
				continue // the speed may have changed meanwhile: look again
			}
			heap.Pop(h)
			if a.mark {
				a.do(ctx, push)
				continue
			}
			lag := r.simNow() - a.at
			r.observeLag(lag, a.text)
			if a.event != nil {
				r.mu.Lock()
				r.fired++
				r.nextEvent++
				r.mu.Unlock()
			}
			r.record("event", a.text, lag)
			a.do(ctx, push)
		}
	})
	return t
}

// finishFollowUps runs, once the timeline has stopped, the second halves
// whose time has not come (a leader still down, a storm still blowing), so
// that the drain starts from a whole system.
func (r *Runner) finishFollowUps(t *timelineLoop) {
	t.stop()
	for t.h.Len() > 0 {
		a := heap.Pop(t.h).(*timelineAction)
		if !a.mustRun {
			if a.event != nil {
				r.warnf("timeline event %q at %v did not fire: the run ended first", a.text, a.at)
			}
			continue
		}
		if !a.mark {
			r.record("event", a.text+" (at the end of the run)", 0)
		}
		a.do(context.Background(), func(*timelineAction) {})
	}
}

// eventAction returns what the event does.
func (r *Runner) eventAction(te *timedEvent) func(context.Context, func(*timelineAction)) {
	ev := te.ev
	each := func(f func(i int)) func(context.Context, func(*timelineAction)) {
		return func(ctx context.Context, _ func(*timelineAction)) {
			for _, i := range te.targets {
				f(i)
				r.settle(ctx)
			}
		}
	}
	switch {
	case ev.Partition != nil:
		return each(r.partition)
	case ev.Heal != nil:
		return each(r.heal)
	case ev.PartitionGateways != nil:
		return r.eachGateway(te.targets, r.partitionGateway)
	case ev.HealGateways != nil:
		return r.eachGateway(te.targets, r.healGateway)
	case ev.Disconnect != nil:
		return each(func(i int) { r.disc[i].Store(true); r.workers[i].Disconnect() })
	case ev.Reconnect != nil:
		return each(func(i int) { r.disc[i].Store(false); r.workers[i].Reconnect() })
	case ev.Crash != nil:
		return each(func(i int) { r.workers[i].Crash() })
	case ev.Reboot != nil:
		return each(func(i int) { r.workers[i].Reboot() })
	case ev.ReplayDeadLetters != nil:
		return func(context.Context, func(*timelineAction)) { r.replayDeadLetters(te.targets) }
	case ev.LeaderCrash != nil:
		after := ev.LeaderCrash.RestartAfter.D()
		return func(_ context.Context, push func(*timelineAction)) {
			down := r.simNow() // the downtime runs from the kill, however long stopping takes
			r.crashLeader(after)
			if after > 0 {
				push(&timelineAction{at: down + after, text: "leader restart", mustRun: true, do: func(context.Context, func(*timelineAction)) {
					r.restartLeader()
				}})
			}
		}
	case ev.Deploy != nil:
		return func(ctx context.Context, _ func(*timelineAction)) { r.startDeploy(ctx, *ev.Deploy, te.targets) }
	case ev.HeartbeatStorm != nil:
		hs := ev.HeartbeatStorm
		return func(_ context.Context, push func(*timelineAction)) {
			for _, i := range te.targets {
				_ = r.workers[i].SetHeartbeat(hs.Interval.D())
			}
			push(&timelineAction{at: r.simNow() + hs.For.D(), text: fmt.Sprintf("heartbeat storm over: %d workers back to their interval", len(te.targets)), mustRun: true,
				do: func(context.Context, func(*timelineAction)) {
					for _, i := range te.targets {
						_ = r.workers[i].SetHeartbeat(r.heartbeatOf(i))
					}
				}})
		}
	case ev.SetCapacity != nil:
		n := ev.SetCapacity.Capacity
		return func(context.Context, func(*timelineAction)) {
			for _, i := range te.targets {
				if err := r.workers[i].SetMailboxCapacity(n); err != nil {
					r.warnf("set capacity: %v", err)
					return
				}
			}
		}
	case ev.SetLeader != nil:
		return func(context.Context, func(*timelineAction)) { r.setLeader(ev.SetLeader) }
	case ev.Poison != nil:
		return func(context.Context, func(*timelineAction)) { r.poison(te.targets, max(ev.Poison.Count, 1)) }
	case ev.Jobs != nil:
		return func(context.Context, func(*timelineAction)) { r.addJobs(*ev.Jobs) }
	case ev.Speed != nil:
		v := *ev.Speed
		return func(context.Context, func(*timelineAction)) { r.clk.SetSpeed(v) }
	}
	return func(context.Context, func(*timelineAction)) {}
}

// setLeader applies a set_leader event to the serving leader and to every
// leader started after it.
func (r *Runner) setLeader(s *scenario.SetLeader) {
	r.lead.mu.Lock()
	if s.Capacity != nil {
		c := *s.Capacity
		r.lead.capacity = &c
	}
	if s.Service != nil {
		d := *s.Service
		r.lead.service = &d
	}
	lr := r.lead.cur
	r.lead.mu.Unlock()
	if lr == nil {
		return // the next leader starts with it
	}
	if s.Capacity != nil {
		if err := lr.l.SetMailboxCapacity(*s.Capacity); err != nil {
			r.warnf("set leader: %v", err)
		}
	}
	if s.Service != nil {
		lr.l.SetService(*s.Service)
	}
}

// poisonVersion is a version no worker can install: the worker refuses
// the apply for good, and the relay dead-letters it at its first attempt.
const poisonVersion = "!poison"

// poison enqueues count poison commands for each target, in the
// background, through leader crashes: all of them in one outbox
// transaction (leader.SendAll), so that the event takes as long at 10,000
// workers as at 10.
func (r *Runner) poison(targets []int, count int) {
	body := wire.Body(wire.Apply{Version: poisonVersion})
	ids := make([]string, 0, count*len(targets))
	for _, t := range targets {
		for range count {
			ids = append(ids, r.specs[t].ID)
		}
	}
	ok := r.goBackground(func(ctx context.Context) {
		err := r.withLeader(ctx, func(lr *leaderRun) error {
			if err := lr.l.SendAll(ctx, ids, wire.KindConfig, body); err != nil {
				return err
			}
			r.poisoned.Add(uint64(len(ids)))
			return nil
		})
		if err != nil && ctx.Err() == nil {
			r.warnf("poison: none of %d commands enqueued: %v", len(ids), err)
		}
	})
	if !ok {
		r.warnf("poison: the run is ending; nothing enqueued")
	}
}

// replayDeadLetters puts the dead letters addressed to the workers
// targets back in the queue (outbox.Store.Replay), on the serving leader's
// store, in the background as a deploy is enqueued.
func (r *Runner) replayDeadLetters(targets []int) {
	want := make(map[string]bool, len(targets))
	for _, i := range targets {
		want[r.specs[i].ID] = true
	}
	ok := r.goBackground(func(ctx context.Context) {
		err := r.withLeader(ctx, func(lr *leaderRun) error {
			dead, err := lr.st.DeadLetters(ctx, 0)
			if err != nil {
				return err
			}
			var ids []uint64
			for _, m := range dead {
				if want[m.Receiver] {
					ids = append(ids, m.ID)
				}
			}
			if len(ids) == 0 {
				return nil
			}
			n, err := lr.st.Replay(ctx, ids...)
			if err == nil {
				r.record("event", fmt.Sprintf("replayed %d dead letters", n), 0)
			}
			return err
		})
		if err != nil && ctx.Err() == nil {
			r.warnf("replay_dead_letters: %v", err)
		}
	})
	if !ok {
		r.warnf("replay_dead_letters: the run is stopping; nothing replayed")
	}
}
