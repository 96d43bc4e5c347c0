package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// deployAnswer is the leader's answer: the deploy is in the outbox (durable)
// when OK is true.
type deployAnswer struct {
	ID      string `json:"id"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Deploy  int    `json:"deploy"`  // index in the leader's deploy list (this process)
	Targets int    `json:"targets"` // workers targeted
	Waves   int    `json:"waves"`
}

// control serves deploy requests for a running leader.
type control struct {
	l      *leader.Leader
	link   leader.Link
	topics wire.Topics
	log    *slog.Logger
	reqs   chan []byte
	counts requestCounts
}

// requestCounts counts deploy requests by what became of them.
type requestCounts struct {
	started    atomic.Uint64 // in the outbox, answered ok
	refused    atomic.Uint64 // answered with the reason
	unanswered atomic.Uint64 // no valid id (or too large to look): logged only
	dropped    atomic.Uint64 // too many waiting: the requester times out
}

// onRequest runs on the MQTT delivery goroutine: it must not block or
// publish, so it only queues the payload (dropping it, logged, when 16 are
// already waiting: the requester's timeout tells its user).
func (c *control) onRequest(_ string, payload []byte) {
	select {
	case c.reqs <- payload:
	default:
		c.counts.dropped.Add(1)
		c.log.Warn("deploy request dropped: too many waiting")
	}
}

func (c *control) start(ctx context.Context, wg *sync.WaitGroup) {
	if c.reqs == nil {
		c.reqs = make(chan []byte, 16)
	}
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-c.reqs:
				c.serve(ctx, p)
			}
		}
	})
}

// serve answers one deploy request on its answer topic: with the deploy
// it started, or with why it was refused. A request without a valid id
// has no answer topic: it is counted and logged, briefly (the reason,
// never the request).
func (c *control) serve(ctx context.Context, payload []byte) {
	var ans deployAnswer
	req, err := parseDeployRequest(payload)
	var re *requestError
	switch {
	case errors.As(err, &re) && re.ID == "":
		c.counts.unanswered.Add(1)
		c.log.Warn("deploy request refused, not answered (no valid id)", "reason", re.Reason, "bytes", len(payload))
		return
	case err != nil:
		ans = deployAnswer{ID: re.ID, Error: re.Reason}
	default:
		ans = c.deploy(ctx, req)
	}
	if ans.OK {
		c.counts.started.Add(1)
		c.log.Info("deploy started", "id", req.ID, "version", req.Version, "targets", ans.Targets, "waves", ans.Waves)
	} else {
		c.counts.refused.Add(1)
		c.log.Warn("deploy refused", "id", ans.ID, "err", ans.Error)
	}
	b, _ := json.Marshal(ans)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.link.Publish(pctx, c.topics.LeaderDeployReply(ans.ID), 1, false, b); err != nil {
		c.log.Warn("deploy answer not published", "id", ans.ID, "err", err)
	}
}

func (c *control) deploy(ctx context.Context, req deployRequest) deployAnswer {
	ans := deployAnswer{ID: req.ID}
	plan, err := req.plan(c.l)
	if err == nil {
		ans.Deploy, err = c.l.Deploy(ctx, plan)
	}
	if err != nil {
		ans.Error = err.Error()
		return ans
	}
	ans.OK, ans.Targets = true, len(plan.Workers)
	size := plan.WaveSize
	if size == 0 {
		size = len(plan.Workers)
	}
	ans.Waves = (len(plan.Workers) + size - 1) / size
	return ans
}

// plan turns a request into a DeployPlan, resolving "all" to the workers
// the leader has seen.
func (r deployRequest) plan(l *leader.Leader) (leader.DeployPlan, error) {
	p := leader.DeployPlan{
		Kind: wire.Kind(r.Kind), Version: r.Version, Workers: r.Workers, WaveSize: r.WaveSize,
		WaveInterval: time.Duration(r.WaveIntervalMs) * time.Millisecond, TTL: time.Duration(r.TTLMs) * time.Millisecond,
	}
	if r.All {
		if len(r.Workers) > 0 {
			return p, errors.New("give either workers or all, not both")
		}
		for _, w := range l.Fleet().Workers {
			p.Workers = append(p.Workers, w.ID)
		}
		if len(p.Workers) == 0 {
			return p, errors.New("all: the leader has not seen any worker yet")
		}
	}
	// The workers given were checked with the request; those the leader
	// has seen are ids it accepted on its topics. How long the waves
	// take to start depends on how many there are.
	return p, checkSpan(len(p.Workers), r.WaveSize, r.WaveIntervalMs)
}
