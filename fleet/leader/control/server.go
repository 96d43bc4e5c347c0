package control

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Answer is the leader's answer to a deploy request: the deploy is
// in the outbox (durable) when OK is true. To a cancel request: the
// deploy's queued updates are withdrawn (durable) when OK is true.
type Answer struct {
	ID      string `json:"id"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Deploy  int    `json:"deploy"`  // the deploy's number (leader.Deploy's index)
	Targets int    `json:"targets"` // workers targeted
	Waves   int    `json:"waves"`
	// Again: a deploy request whose id started a deploy before (an
	// earlier copy, whose answer was lost): this is that deploy, and
	// nothing new started. A cancel request: the deploy was cancelled
	// before.
	Again bool `json:"again,omitempty"`
	// A cancel's: updates withdrawn (never sent), updates out for
	// delivery (they finish), and whether the deploy had nothing left
	// queued to cancel.
	Withdrawn int  `json:"withdrawn,omitempty"`
	InFlight  int  `json:"in_flight,omitempty"`
	Finished  bool `json:"finished,omitempty"`
}

// Server is the leader's side: it answers deploy and cancel requests for
// a running leader. Subscribe Handle to topics.LeaderDeploy and run Run;
// its methods are safe for concurrent use.
type Server struct {
	l      *leader.Leader
	link   leader.Link
	topics wire.Topics
	log    *slog.Logger
	reqs   chan []byte
	counts counts
}

// NewServer returns a Server that carries out requests on l and answers
// them over link, on topics. log gets a line per request (nil: none).
func NewServer(l *leader.Leader, link leader.Link, topics wire.Topics, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{l: l, link: link, topics: topics, log: log, reqs: make(chan []byte, queued)}
}

// counts counts deploy requests by what became of them, and answers by
// how they went out.
type counts struct {
	started    atomic.Uint64 // in the outbox, answered ok
	repeated   atomic.Uint64 // a deploy request whose id started a deploy before: answered with it
	cancelled  atomic.Uint64 // a cancel request answered ok
	refused    atomic.Uint64 // answered with the reason
	unanswered atomic.Uint64 // no valid id (or too large to look): logged only
	dropped    atomic.Uint64 // too many waiting: the requester asks again or times out

	answeredQoS1 atomic.Uint64 // the broker took the answer (PUBACK)
	answeredQoS0 atomic.Uint64 // QoS 1 failed; handed to the client at QoS 0
	answersLost  atomic.Uint64 // neither, after answerTries: the requester asks again or reports the outcome unknown
}

// Counts is what became of the requests a Server took, and of its
// answers, since it started.
type Counts struct {
	Started    uint64 // deploys started, in the outbox, answered ok
	Repeated   uint64 // deploy requests whose id had started a deploy before: answered with it
	Cancelled  uint64 // cancel requests answered ok
	Refused    uint64 // requests answered with the reason they were refused
	Unanswered uint64 // requests without a valid id (or too large to look): logged only
	Dropped    uint64 // requests dropped, too many waiting: the requester asks again or times out

	AnsweredQoS1 uint64 // answers the broker took (PUBACK)
	AnsweredQoS0 uint64 // answers handed to the client at QoS 0 after QoS 1 failed
	AnswersLost  uint64 // answers neither took: the requester asks again or reports the outcome unknown
}

// Counts returns the counts so far.
func (s *Server) Counts() Counts {
	c := &s.counts
	return Counts{
		Started: c.started.Load(), Repeated: c.repeated.Load(), Cancelled: c.cancelled.Load(),
		Refused: c.refused.Load(), Unanswered: c.unanswered.Load(), Dropped: c.dropped.Load(),
		AnsweredQoS1: c.answeredQoS1.Load(), AnsweredQoS0: c.answeredQoS0.Load(), AnswersLost: c.answersLost.Load(),
	}
}

// queued bounds the requests waiting for Run: past it, Handle drops them.
const queued = 16

// Publishing an answer: each try waits answerWait for the broker's
// PUBACK, then falls back to QoS 0 at once; after a failed try the next
// comes after answerBackoff, doubling, answerTries in all.
const (
	answerWait    = 2 * time.Second
	answerBackoff = 200 * time.Millisecond
	answerTries   = 4
)

// Handle is the MQTT handler for topics.LeaderDeploy. It runs on the MQTT
// delivery goroutine, so it must not block or publish: it only queues the
// payload for Run (dropping it, counted and logged, when 16 are already
// waiting: the requester asks again, or its timeout tells its user).
func (c *Server) Handle(_ string, payload []byte) {
	select {
	case c.reqs <- payload:
	default:
		c.counts.dropped.Add(1)
		c.log.Warn("deploy request dropped: too many waiting")
	}
}

// Run serves the requests Handle queued, one at a time, until ctx ends.
func (c *Server) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-c.reqs:
			c.Serve(ctx, p)
		}
	}
}

// Serve answers one request on its answer topic: with the deploy it
// started (or had started for the same id), the cancel it made, or why
// it was refused. A request without a valid id has no answer topic: it
// is counted and logged, briefly (the reason, never the request).
func (c *Server) Serve(ctx context.Context, payload []byte) {
	var ans Answer
	req, err := ParseRequest(payload)
	var re *RequestError
	switch {
	case errors.As(err, &re) && re.ID == "":
		c.counts.unanswered.Add(1)
		c.log.Warn("deploy request refused, not answered (no valid id)", "reason", re.Reason, "bytes", len(payload))
		return
	case err != nil:
		ans = Answer{ID: re.ID, Error: re.Reason}
	case req.Cancel != nil:
		ans = c.cancel(ctx, req)
	default:
		ans = c.deploy(ctx, req)
	}
	switch {
	case !ans.OK:
		c.counts.refused.Add(1)
		c.log.Warn("deploy request refused", "id", ans.ID, "err", ans.Error)
	case req.Cancel != nil:
		c.counts.cancelled.Add(1)
		c.log.Info("deploy cancelled", "id", req.ID, "deploy", ans.Deploy, "withdrawn", ans.Withdrawn, "in_flight", ans.InFlight, "again", ans.Again)
	case ans.Again:
		c.counts.repeated.Add(1)
		c.log.Info("deploy request asked again: answered with the deploy it started", "id", req.ID, "deploy", ans.Deploy)
	default:
		c.counts.started.Add(1)
		c.log.Info("deploy started", "id", req.ID, "deploy", ans.Deploy, "version", req.Version, "targets", ans.Targets, "waves", ans.Waves)
	}
	b, _ := json.Marshal(ans)
	c.answer(ctx, c.topics.LeaderDeployReply(ans.ID), ans.ID, b)
}

// answer publishes an answer, trying hard: the deploy it reports has
// started whether or not the requester hears so. QoS 1 needs a packet id
// and the broker's PUBACK, which a client whose in-flight window a flood
// has filled may not get ("no message IDs available"); QoS 0 needs
// neither, so each failed QoS 1 try falls back to it at once. A requester
// that still hears nothing asks again with the same id, and is answered
// again without a second deploy (see deploy).
func (c *Server) answer(ctx context.Context, topic, id string, b []byte) {
	wait := answerBackoff
	for try := 1; ; try++ {
		pctx, cancel := context.WithTimeout(ctx, answerWait)
		err := c.link.Publish(pctx, topic, 1, false, b)
		cancel()
		if err == nil {
			c.counts.answeredQoS1.Add(1)
			return
		}
		err0 := c.link.Send(topic, 0, b)
		if err0 == nil {
			c.counts.answeredQoS0.Add(1)
			c.log.Info("deploy answer sent at QoS 0: QoS 1 failed", "id", id, "err", err)
			return
		}
		if try == answerTries || ctx.Err() != nil {
			c.counts.answersLost.Add(1)
			c.log.Warn("deploy answer not published: the requester asks again with the same id, or reports the outcome unknown",
				"id", id, "tries", try, "err", err, "qos0_err", err0)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait *= 2
	}
}

// deploy starts the deploy req asks for, once per request id: a request
// whose id started a deploy the leader keeps (its answer was lost, and it
// was asked again) is answered with that deploy.
func (c *Server) deploy(ctx context.Context, req Request) Answer {
	ans := Answer{ID: req.ID}
	if d, ok := c.l.DeployFor(req.ID); ok {
		if d.Version != req.Version || string(d.Kind) != cmp.Or(req.Kind, string(wire.KindFirmware)) {
			ans.Error = fmt.Sprintf("id: request %s started deploy %d of %s %s before: give each request an id of its own", req.ID, d.Index, d.Kind, d.Version)
			return ans
		}
		ans.OK, ans.Again, ans.Deploy, ans.Targets, ans.Waves = true, true, d.Index, d.Targets, len(d.Waves)
		return ans
	}
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

// cancel cancels the deploy req names.
func (c *Server) cancel(ctx context.Context, req Request) Answer {
	ans := Answer{ID: req.ID, Deploy: *req.Cancel}
	res, err := c.l.Cancel(ctx, *req.Cancel)
	if err != nil {
		ans.Error = err.Error()
		return ans
	}
	ans.OK, ans.Again, ans.Finished, ans.Withdrawn, ans.InFlight = true, res.Again, res.Finished, res.Withdrawn, res.InFlight
	if d, ok := c.l.Progress(*req.Cancel); ok {
		ans.Targets, ans.Waves = d.Targets, len(d.Waves)
	}
	return ans
}

// plan turns a request into a DeployPlan, resolving "all" to the workers
// the leader has seen.
func (r Request) plan(l *leader.Leader) (leader.DeployPlan, error) {
	p := leader.DeployPlan{
		Kind: wire.Kind(r.Kind), Version: r.Version, Workers: r.Workers, WaveSize: r.WaveSize,
		WaveInterval: time.Duration(r.WaveIntervalMs) * time.Millisecond, TTL: time.Duration(r.TTLMs) * time.Millisecond,
		Request: r.ID,
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
