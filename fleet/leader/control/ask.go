package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// Session is what Ask needs of its MQTT session (a *transport.Session
// provides it).
type Session interface {
	Subscribe(ctx context.Context, filter string, qos byte, h func(topic string, payload []byte)) error
	Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error
}

// The request is sent again reaskFirst after the first copy if no answer
// came, then after twice as long each time, up to reaskCap apart.
const (
	reaskFirst = 2 * time.Second
	reaskCap   = 8 * time.Second
)

// ErrNoAnswer is Ask's error when no answer came before its context
// ended: the request may or may not have been carried out. Asking again
// with the same request id is safe.
var ErrNoAnswer = errors.New("no answer")

// NotSentError is Ask's error when the first copy of the request could
// not be published, so no leader got it.
type NotSentError struct {
	Bytes int   // the request's size: a broker refuses a packet over its limit
	Err   error // why the publish failed
}

func (e *NotSentError) Error() string {
	return fmt.Sprintf("publish the deploy request: %v (nothing was sent)", e.Err)
}

// Unwrap returns why the publish failed.
func (e *NotSentError) Unwrap() error { return e.Err }

// Ask is the requester's side, what 'leader deploy' runs: it publishes
// req on topics.LeaderDeploy and waits for the leader's answer until ctx
// ends, sending the request again meanwhile (the leader carries out one
// request per id, so a copy never deploys twice). req.ID must be set. It returns the answer and how
// many copies it sent; ErrNoAnswer if none came (the outcome is unknown),
// a *NotSentError if the first copy could not be published.
func Ask(ctx context.Context, sess Session, topics wire.Topics, req Request) (Answer, int, error) {
	answers := make(chan []byte, 1)
	err := sess.Subscribe(ctx, topics.LeaderDeployReply(req.ID), 1, func(_ string, p []byte) {
		select {
		case answers <- p:
		default: // a copy's answer: the first one is enough
		}
	})
	if err != nil {
		return Answer{}, 0, err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return Answer{}, 0, err
	}
	topic := topics.LeaderDeploy()
	if err := sess.Publish(ctx, topic, 1, false, b); err != nil {
		if ctx.Err() != nil {
			return Answer{}, 1, ErrNoAnswer // the broker may have taken it
		}
		return Answer{}, 0, &NotSentError{Bytes: len(b), Err: err}
	}
	copies := 1
	wait := reaskFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case p := <-answers:
			var ans Answer
			if err := json.Unmarshal(p, &ans); err != nil {
				return ans, copies, fmt.Errorf("the leader's answer is not JSON: %w", err)
			}
			return ans, copies, nil
		case <-ctx.Done():
			return Answer{}, copies, ErrNoAnswer
		case <-t.C:
			// A copy that fails to go out is no error: the next may, and
			// the timeout says what it means.
			_ = sess.Publish(ctx, topic, 1, false, b)
			copies++
			wait = min(2*wait, reaskCap)
			t.Reset(wait)
		}
	}
}
