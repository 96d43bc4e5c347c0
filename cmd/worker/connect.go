package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/fleetsim/fleetsim/fleet/transport"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

// connWatch is the pool's dialer with a watch on the connects: it logs
// the workers' failed connects with their reason, and tells run whether
// any session, a worker's or a gateway's, has connected yet, and whether
// the broker refused a login before one did. Its methods are safe for
// concurrent use.
type connWatch struct {
	d      dialer
	broker string
	log    *slog.Logger
	now    func() time.Time
	every  time.Duration // least time between two log lines of one reason

	mu        sync.Mutex
	up        bool  // a session has connected
	failures  int   // failed connects before the first session connected
	last      error // the latest of them
	refusedID string
	refusal   error
	refused   chan struct{} // closed at a refused login before any session connected
	lines     map[string]*reasonLog
}

// reasonLog is when connect failures of one reason were last logged, and
// how many came since.
type reasonLog struct {
	at     time.Time
	missed int
}

// connectLogEvery is the least time between two "connect failed" lines
// of one reason: a thousand workers that cannot reach their broker log
// one line, not a thousand, at every round of reconnects.
const connectLogEvery = 5 * time.Second

// dialer opens workers' and gateways' sessions: worker.MQTTDialer.
type dialer interface {
	worker.Dialer
	worker.GatewayDialer
}

func newConnWatch(d dialer, broker string, log *slog.Logger) *connWatch {
	return &connWatch{d: d, broker: broker, log: log, now: time.Now, every: connectLogEvery, refused: make(chan struct{}), lines: map[string]*reasonLog{}}
}

// Dial dials a worker's own session.
func (c *connWatch) Dial(ctx context.Context, o worker.DialOptions) (worker.Session, error) {
	s, err := c.d.Dial(ctx, o)
	c.record(ctx, o.ID, err, true)
	return s, err
}

// DialGateway dials a gateway's session. A gateway logs its failures
// itself.
func (c *connWatch) DialGateway(ctx context.Context, o worker.GatewayDialOptions) (worker.GatewayLink, error) {
	l, err := c.d.DialGateway(ctx, o)
	c.record(ctx, o.ID, err, false)
	return l, err
}

// record notes the outcome of session id's connect and, with logFail,
// logs a failure.
func (c *connWatch) record(ctx context.Context, id string, err error, logFail bool) {
	if errors.Is(ctx.Err(), context.Canceled) {
		return // the pool is stopping
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		if !c.up {
			c.up = true
			c.log.Info("connected to the broker", "broker", c.broker, "session", id, "failed_before", c.failures)
		}
		return
	}
	if !c.up {
		c.failures++
		c.last = err
		if errors.Is(err, transport.ErrRefused) && c.refusal == nil {
			c.refusedID, c.refusal = id, err
			close(c.refused)
		}
	}
	if !logFail {
		return
	}
	r := reason(err)
	l := c.lines[r]
	if l == nil {
		l = &reasonLog{}
		c.lines[r] = l
	}
	now := c.now()
	if !l.at.IsZero() && now.Sub(l.at) < c.every {
		l.missed++
		return
	}
	args := []any{"broker", c.broker, "worker", id, "reason", r, "err", err}
	if l.missed > 0 {
		args = append(args, "also_failed", l.missed) // since the last line of this reason
	}
	c.log.Warn("connect failed", args...)
	l.at, l.missed = now, 0
}

// Refused is closed when the broker refused a login before any session
// connected: bad or missing credentials, which retrying cannot mend.
func (c *connWatch) Refused() <-chan struct{} { return c.refused }

// Up reports whether a session has connected.
func (c *connWatch) Up() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up
}

// Refusal returns the session whose login was refused and the broker's
// answer, once Refused is closed.
func (c *connWatch) Refusal() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusedID, c.refusal
}

// Last returns how many connects failed before the first session
// connected, and the latest failure's error.
func (c *connWatch) Last() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures, c.last
}

// reason says in a few words why a connect failed: what a user acts on,
// the same for every worker that failed alike.
func reason(err error) string {
	var refused *transport.RefusedError
	switch {
	case errors.As(err, &refused):
		return fmt.Sprintf("login refused (CONNACK %d: %v)", refused.Code, refused.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (nothing listens there)"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) || isTimeout(err):
		return "no answer (timed out)"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	}
	// transport's error names the worker; the reason must not.
	if u := errors.Unwrap(err); u != nil {
		return u.Error()
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
