package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// deployRequest is what 'leader deploy' publishes on <prefix>/_leader/deploy
// (docs/PROTOCOL.md, "Operating a running leader").
type deployRequest struct {
	ID             string   `json:"id"`                // request id; the answer goes to <prefix>/_leader/deploy/<id>
	Kind           string   `json:"kind,omitempty"`    // firmware (default) or config
	Version        string   `json:"version"`           // required
	Workers        []string `json:"workers,omitempty"` // in wave order; empty with all
	All            bool     `json:"all,omitempty"`     // every worker the leader has seen, sorted by id
	WaveSize       int      `json:"wave_size,omitempty"`
	WaveIntervalMs int64    `json:"wave_interval_ms,omitempty"`
	TTLMs          int64    `json:"ttl_ms,omitempty"`
}

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

// maxRequestSize bounds a deploy request (a million worker ids fit).
const maxRequestSize = 32 << 20

// control serves deploy requests for a running leader.
type control struct {
	l      *leader.Leader
	link   leader.Link
	topics wire.Topics
	log    *slog.Logger
	reqs   chan []byte
}

// onRequest runs on the MQTT delivery goroutine: it must not block or
// publish, so it only queues the payload (dropping it, logged, when 16 are
// already waiting: the requester's timeout tells its user).
func (c *control) onRequest(_ string, payload []byte) {
	select {
	case c.reqs <- payload:
	default:
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

func (c *control) serve(ctx context.Context, payload []byte) {
	var req deployRequest
	if len(payload) > maxRequestSize {
		c.log.Warn("deploy request refused: too large", "bytes", len(payload))
		return
	}
	if err := json.Unmarshal(payload, &req); err != nil {
		c.log.Warn("deploy request refused: not JSON", "err", err)
		return
	}
	if err := wire.ValidWorkerID(req.ID); err != nil { // it becomes a topic level
		c.log.Warn("deploy request refused: bad id", "err", err)
		return
	}
	ans := c.deploy(ctx, req)
	if ans.OK {
		c.log.Info("deploy started", "id", req.ID, "version", req.Version, "targets", ans.Targets, "waves", ans.Waves)
	} else {
		c.log.Warn("deploy refused", "id", req.ID, "err", ans.Error)
	}
	b, _ := json.Marshal(ans)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.link.Publish(pctx, c.topics.LeaderDeployReply(req.ID), 1, false, b); err != nil {
		c.log.Warn("deploy answer not published", "id", req.ID, "err", err)
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
	for _, w := range p.Workers {
		if err := wire.ValidWorkerID(w); err != nil {
			return p, fmt.Errorf("workers: %w", err)
		}
	}
	return p, nil
}
